//! The sandbox on Linux: a Landlock ruleset, a network namespace, rlimits.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};

use super::KernelConfinement;
use super::paths::Found;
use super::pids_cgroup::PidsCgroup;
use crate::config::sandbox::{Network, Sandbox};

/// The newest Landlock features the sandbox asks for: files (with device ioctls), TCP, and
/// the scoping of signals and abstract sockets. An older kernel keeps what it knows of them.
const ABI_ASKED: ABI = ABI::V6;

/// What the child applies between `fork` and `exec`: system calls only.
pub(crate) struct InChild {
    /// The Landlock ruleset, built by the parent; absent where the kernel has no Landlock.
    ruleset: Option<OwnedFd>,
    /// The most bytes of data the server may hold (`RLIMIT_DATA`).
    memory: Option<u64>,
    /// The most descriptors it may hold open (`RLIMIT_NOFILE`).
    open_files: Option<u64>,
    /// `cgroup.procs` of the pids cgroup it joins, for its process limit.
    cgroup_procs: Option<std::ffi::CString>,
    /// A network namespace of its own, and for a user without the right to make one, the
    /// user namespace that gives it that right.
    netns: Option<NetNs>,
    /// Fail the start when a step fails, rather than run with less.
    required: bool,
}

/// A network namespace for the child; `user`: the maps of the user namespace around it.
struct NetNs {
    user: Option<UserMaps>,
}

/// The child as the same user inside its own user namespace: `uid uid 1`, `gid gid 1`.
struct UserMaps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

/// The Landlock ABI of the running kernel (0: none).
fn landlock_abi() -> i64 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute and size 0, the call only reports the ABI version.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    abi.max(0)
}

/// Whether this process may make a user namespace (for a network namespace without root).
fn user_namespaces_allowed() -> bool {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .map(|s| s.trim().to_owned())
    };
    let max = read("/proc/sys/user/max_user_namespaces");
    let debian_switch = read("/proc/sys/kernel/unprivileged_userns_clone");
    let apparmor = read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    max.is_some_and(|m| m != "0")
        && debian_switch.is_none_or(|v| v != "0")
        && apparmor.is_none_or(|v| v != "1")
}

/// The ruleset and the steps for the child, and what of the sandbox the kernel cannot keep.
pub(super) fn kernel_confinement(
    sandbox: &Sandbox,
    grants: &Found,
    server_id: &str,
) -> Result<KernelConfinement, String> {
    let mut shortfalls = Vec::new();
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    shortfalls.push(
        "on this processor the server may still connect to Unix sockets by their path \
         (mcpmux's seccomp filter knows x86-64 and ARM64)"
            .to_owned(),
    );
    let abi = landlock_abi();
    let no_network = sandbox.network == Network::None;
    let lacking = landlock_lacks(abi, no_network);
    if let Some(lack) = lacking {
        match sandbox.required {
            true => return Err(format!("{lack} (the record's sandbox is `required`)")),
            false => shortfalls.push(lack),
        }
    }
    let ruleset = match abi {
        0 => None,
        _ => ruleset(sandbox.required, no_network, &grants.read, &grants.write)?,
    };
    let netns = match no_network {
        true => Some(network_namespace(sandbox.required, &mut shortfalls)?),
        false => None,
    };
    let cgroup = match sandbox.processes {
        Some(max) => process_limit(server_id, max, sandbox.required, &mut shortfalls)?,
        None => None,
    };
    let mib = |m: u64| m.saturating_mul(1024 * 1024);
    let in_child = InChild {
        ruleset,
        memory: sandbox.memory_mb.map(mib),
        open_files: sandbox.open_files,
        cgroup_procs: cgroup.as_ref().map(|c| c.procs.clone()),
        netns,
        required: sandbox.required,
    };
    Ok(KernelConfinement {
        in_child,
        cgroup,
        shortfalls,
    })
}

/// The pids cgroup of a process limit; where none can be made, a shortfall (or, `required`,
/// the refusal).
fn process_limit(
    server_id: &str,
    max: u64,
    required: bool,
    shortfalls: &mut Vec<String>,
) -> Result<Option<PidsCgroup>, String> {
    match (PidsCgroup::create(server_id, max), required) {
        (Ok(cgroup), _) => Ok(Some(cgroup)),
        (Err(why), true) => Err(format!("{why} (the record's sandbox is `required`)")),
        (Err(why), false) => {
            shortfalls.push(format!("the process limit is not kept: {why}"));
            Ok(None)
        }
    }
}

/// What this kernel's Landlock cannot keep of what the sandbox asks, if anything.
fn landlock_lacks(abi: i64, no_network: bool) -> Option<String> {
    match abi {
        0 => Some(
            "the kernel has no Landlock (Linux 5.13 or later, with `landlock` among its LSMs): \
             the server may read and write every file the user can"
                .to_owned(),
        ),
        1..4 if no_network => Some(format!(
            "the kernel's Landlock is ABI {abi}: files are kept, but TCP is kept only by the \
             network namespace, and signals to processes outside the sandbox are not"
        )),
        1..6 => Some(format!(
            "the kernel's Landlock is ABI {abi}: files are kept, but the server may signal \
             processes outside its sandbox and reach their abstract sockets"
        )),
        _ => None,
    }
}

/// The Landlock ruleset granting `read` (read and run) and `write` (everything), as a
/// descriptor for the child; under `no_network`, no TCP connect or bind either.
fn ruleset(
    required: bool,
    no_network: bool,
    read: &[PathBuf],
    write: &[PathBuf],
) -> Result<Option<OwnedFd>, String> {
    let level = match required {
        true => CompatLevel::HardRequirement,
        false => CompatLevel::BestEffort,
    };
    let failed = |e: landlock::RulesetError| format!("cannot build its Landlock ruleset: {e}");
    let mut handled = Ruleset::default()
        .set_compatibility(level)
        .handle_access(AccessFs::from_all(ABI_ASKED))
        .map_err(failed)?;
    if no_network {
        handled = handled
            .handle_access(AccessNet::from_all(ABI_ASKED))
            .map_err(failed)?;
    }
    // Signals and abstract sockets came with ABI 6: below, best effort leaves them out.
    let created = handled
        .set_compatibility(CompatLevel::BestEffort)
        .scope(Scope::from_all(ABI_ASKED))
        .map_err(failed)?
        .set_compatibility(level)
        .create()
        .map_err(failed)?
        .add_rules(path_beneath_rules(read, AccessFs::from_read(ABI_ASKED)))
        .map_err(failed)?
        .add_rules(path_beneath_rules(write, AccessFs::from_all(ABI_ASKED)))
        .map_err(failed)?;
    Ok(created.into())
}

/// The network namespace for `network: none`: made directly by root, else inside a user
/// namespace of the child's own where the system allows one.
fn network_namespace(required: bool, shortfalls: &mut Vec<String>) -> Result<NetNs, String> {
    // SAFETY: geteuid and getegid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if uid == 0 {
        return Ok(NetNs { user: None });
    }
    if !user_namespaces_allowed() {
        let lack = "this system allows no user namespaces (see \
                    /proc/sys/kernel/apparmor_restrict_unprivileged_userns and \
                    /proc/sys/user/max_user_namespaces), so `network: none` is kept for TCP \
                    only, by Landlock";
        match required {
            true => return Err(format!("{lack} (the record's sandbox is `required`)")),
            false => shortfalls.push(lack.to_owned()),
        }
    }
    Ok(NetNs {
        user: Some(UserMaps {
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
        }),
    })
}

impl InChild {
    /// Applies the sandbox to the calling process: run in the child, after `fork`. Limits
    /// first and Landlock last, as the namespace's maps are written under `/proc`, which
    /// the ruleset may not grant; the capabilities go before Landlock, which lets a process
    /// holding `CAP_SYS_PTRACE` read its parent's memory and environment.
    pub(crate) fn apply(&self) -> io::Result<()> {
        self.limit(libc::RLIMIT_DATA, self.memory)?;
        self.limit(libc::RLIMIT_NOFILE, self.open_files)?;
        if let Some(procs) = &self.cgroup_procs {
            write_proc(procs, b"0")?;
        }
        if let Some(netns) = &self.netns {
            let entered = netns.enter();
            if self.required {
                entered?;
            }
        }
        drop_capabilities();
        no_new_privileges()?;
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        super::unix_sockets::refuse_new_unix_sockets()?;
        if let Some(ruleset) = &self.ruleset {
            restrict_self(ruleset)?;
        }
        Ok(())
    }

    fn limit(&self, resource: libc::__rlimit_resource_t, value: Option<u64>) -> io::Result<()> {
        let Some(value) = value else { return Ok(()) };
        let limit = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        // SAFETY: `limit` is a valid rlimit for the call to read.
        match unsafe { libc::setrlimit(resource, &limit) } {
            0 => Ok(()),
            _ => Err(io::Error::last_os_error()),
        }
    }
}

impl NetNs {
    fn enter(&self) -> io::Result<()> {
        let mut flags = libc::CLONE_NEWNET;
        if self.user.is_some() {
            flags |= libc::CLONE_NEWUSER;
        }
        // SAFETY: unshare has no memory-safety preconditions; the child is single-threaded.
        if unsafe { libc::unshare(flags) } != 0 {
            return Err(io::Error::last_os_error());
        }
        if let Some(maps) = &self.user {
            write_proc(c"/proc/self/setgroups", b"deny")?;
            write_proc(c"/proc/self/uid_map", &maps.uid_map)?;
            write_proc(c"/proc/self/gid_map", &maps.gid_map)?;
        }
        Ok(())
    }
}

/// Writes `bytes` to a file of `/proc` (or `/sys`) with bare system calls, as the child must.
pub(super) fn write_proc(path: &std::ffi::CStr, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated; the descriptor is closed before returning.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let error = io::Error::last_os_error();
        libc::close(fd);
        match written == bytes.len() as isize {
            true => Ok(()),
            false => Err(error),
        }
    }
}

/// Leaves the server no capabilities, even when mcpmux runs as root: none now, and none its
/// program gains when it is run (the bounding set emptied). A caller without
/// `CAP_SETPCAP` has none to give up: its refusals are ignored.
fn drop_capabilities() {
    const LAST_POSSIBLE_CAPABILITY: libc::c_ulong = 63;
    // SAFETY: prctl on integers; a capability beyond the kernel's last is refused (EINVAL).
    unsafe {
        for capability in 0..=LAST_POSSIBLE_CAPABILITY {
            libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0);
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        );
    }
}

/// `no_new_privs`: nothing the server runs gains privileges (a set-user-ID program), which
/// seccomp and Landlock need of a process without `CAP_SYS_ADMIN`.
fn no_new_privileges() -> io::Result<()> {
    // SAFETY: prctl on integers.
    match unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

fn restrict_self(ruleset: &OwnedFd) -> io::Result<()> {
    // SAFETY: a system call on integers; `ruleset` is an open descriptor.
    match unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}
