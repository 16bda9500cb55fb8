//! Keeping a stdio server to its record's `sandbox` with the kernel's own mechanisms, no
//! container runtime: Landlock for files (and, under `network: none`, TCP; and always the
//! signals and abstract sockets of processes outside the sandbox), a network namespace of the
//! server's own for `network: none`, a seccomp filter against new Unix sockets (whose paths
//! Landlock does not check), no capabilities, and rlimits for memory and open files.
//!
//! The child of a threaded process may only make system calls between `fork` and `exec`, so
//! everything that allocates (the Landlock ruleset, the user namespace's maps, the private
//! temporary folder) is made before the fork, and the child only applies it.

mod paths;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod pids_cgroup;
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod unix_sockets;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::config::sandbox::Sandbox;

/// How a sandboxed server is started, as far as its sandbox goes.
pub(crate) struct Launch<'a> {
    pub server_id: &'a str,
    pub command: &'a str,
    pub args: &'a [String],
    pub cwd: Option<&'a Path>,
    /// The environment it starts with (its `PATH` and `HOME` are the ones that count).
    pub env: &'a BTreeMap<OsString, OsString>,
}

/// A sandbox made ready for one start of a server.
pub(crate) struct Confinement {
    /// What the child applies before it runs the server.
    pub in_child: InChild,
    /// What the server holds while it runs.
    pub held: Held,
    /// What of the sandbox this machine cannot keep, each a sentence for the user; empty when
    /// it keeps all of it.
    pub shortfalls: Vec<String>,
}

/// What a sandboxed server holds while it runs, undone when it is gone: its temporary
/// folder, and the cgroup of its process limit.
pub(crate) struct Held {
    tmp: PrivateTmp,
    #[cfg(target_os = "linux")]
    _cgroup: Option<pids_cgroup::PidsCgroup>,
}

impl Held {
    /// The variables that point a program at its temporary folder.
    pub(crate) fn env(&self) -> impl Iterator<Item = (&'static str, &Path)> {
        self.tmp.env()
    }
}

/// A temporary folder only one server writes to, removed when the server is gone.
pub(crate) struct PrivateTmp(PathBuf);

impl PrivateTmp {
    fn new(server_id: &str) -> std::io::Result<PrivateTmp> {
        use std::os::unix::fs::DirBuilderExt;
        use std::sync::atomic::{AtomicU64, Ordering};
        static STARTS: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "mcpmux-sandbox-{server_id}-{}-{}",
            std::process::id(),
            STARTS.fetch_add(1, Ordering::Relaxed)
        );
        let dir = std::env::temp_dir().join(name);
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        Ok(PrivateTmp(dir))
    }

    /// The variables that point a program at its temporary folder.
    pub(crate) fn env(&self) -> impl Iterator<Item = (&'static str, &Path)> {
        ["TMPDIR", "TMP", "TEMP"]
            .into_iter()
            .map(|k| (k, self.0.as_path()))
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Makes `sandbox` ready for `launch`: an error names what cannot be kept when the sandbox is
/// `required`, or why it cannot be set up at all.
pub(crate) fn confine(sandbox: &Sandbox, launch: &Launch) -> Result<Confinement, String> {
    let tmp = PrivateTmp::new(launch.server_id)
        .map_err(|e| format!("cannot make its private temporary folder: {e}"))?;
    let grants = grants(sandbox, launch, &tmp);
    let kernel = kernel_confinement(sandbox, &grants, launch.server_id)?;
    Ok(Confinement {
        in_child: kernel.in_child,
        held: Held {
            tmp,
            #[cfg(target_os = "linux")]
            _cgroup: kernel.cgroup,
        },
        shortfalls: kernel.shortfalls,
    })
}

/// What the server may read and write: what it needs to run, what its record grants, and its
/// private temporary folder.
fn grants(sandbox: &Sandbox, launch: &Launch, tmp: &PrivateTmp) -> paths::Found {
    let mut found = paths::needed(&paths::Launch {
        command: launch.command,
        args: launch.args,
        cwd: launch.cwd,
        env: launch.env,
    });
    let granted = |list: &[String]| -> Vec<PathBuf> {
        list.iter()
            .map(|p| paths::expand_home(p, launch.env))
            .map(|p| match (p.is_relative(), launch.cwd) {
                (true, Some(cwd)) => cwd.join(p),
                _ => p,
            })
            .collect()
    };
    found.read.extend(granted(&sandbox.read));
    found.write.extend(granted(&sandbox.write));
    found.write.push(tmp.0.clone());
    found
}

#[cfg(target_os = "linux")]
use linux::{InChild, kernel_confinement};

/// What the kernel's part of a sandbox is made of, before the fork.
struct KernelConfinement {
    in_child: InChild,
    #[cfg(target_os = "linux")]
    cgroup: Option<pids_cgroup::PidsCgroup>,
    shortfalls: Vec<String>,
}

/// Where mcpmux knows no sandbox: nothing to apply.
#[cfg(not(target_os = "linux"))]
pub(crate) struct InChild;

#[cfg(not(target_os = "linux"))]
impl InChild {
    pub(crate) fn apply(&self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
fn kernel_confinement(
    sandbox: &Sandbox,
    _grants: &paths::Found,
    _server_id: &str,
) -> Result<KernelConfinement, String> {
    let why = "mcpmux sandboxes servers on Linux only; on this system the server runs with the \
               user's full rights";
    match sandbox.required {
        true => Err(format!("{why} (the record's sandbox is `required`)")),
        false => Ok(KernelConfinement {
            in_child: InChild,
            shortfalls: vec![why.to_owned()],
        }),
    }
}
