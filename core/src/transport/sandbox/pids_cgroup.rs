//! The process limit of a sandbox: a pids cgroup of the server's own. `RLIMIT_NPROC` cannot
//! do it: it counts every process of the user, and root is exempt from it. The cgroup is
//! made beside this process's own (cgroup v2 where its pids controller is delegated, else
//! v1's pids hierarchy), the child joins it before it runs the server, and it is removed with
//! the server.

use std::ffi::CString;
use std::path::{Path, PathBuf};

/// A pids cgroup holding one sandboxed server and what it starts.
pub(crate) struct PidsCgroup {
    dir: PathBuf,
    /// `<dir>/cgroup.procs`, for the child to write itself into.
    pub(super) procs: CString,
}

impl PidsCgroup {
    /// A new cgroup allowing `max` processes and threads, named for `server_id`.
    pub(super) fn create(server_id: &str, max: u64) -> Result<PidsCgroup, String> {
        let parent = pids_parent().ok_or_else(|| {
            "this system offers this process no pids cgroup it may make another beside (cgroup \
             v2 with the pids controller delegated, or v1's pids hierarchy)"
                .to_owned()
        })?;
        use std::sync::atomic::{AtomicU64, Ordering};
        static MADE: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "mcpmux-{server_id}-{}-{}",
            std::process::id(),
            MADE.fetch_add(1, Ordering::Relaxed)
        );
        let dir = parent.join(name);
        let made = std::fs::create_dir(&dir)
            .and_then(|()| std::fs::write(dir.join("pids.max"), max.to_string()));
        if let Err(e) = made {
            let _ = std::fs::remove_dir(&dir);
            return Err(format!(
                "cannot make its pids cgroup in {}: {e}",
                parent.display()
            ));
        }
        let procs = CString::new(
            dir.join("cgroup.procs")
                .into_os_string()
                .into_encoded_bytes(),
        )
        .map_err(|e| format!("a cgroup path with a NUL byte: {e}"))?;
        Ok(PidsCgroup { dir, procs })
    }
}

impl Drop for PidsCgroup {
    /// The server is gone; what it left behind in its cgroup (a daemon that left its process
    /// group) goes too, then the cgroup: once the last of them is reaped, which may be later
    /// than now, so on a thread of its own rather than the runtime's.
    fn drop(&mut self) {
        let dir = std::mem::take(&mut self.dir);
        let _ = std::thread::Builder::new()
            .name("mcpmux-cgroup".into())
            .spawn(move || remove(&dir));
    }
}

fn remove(dir: &Path) {
    for _ in 0..100 {
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        if std::fs::remove_dir(dir).is_ok() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    tracing::warn!("could not remove the sandbox's cgroup {}", dir.display());
}

/// Where a pids cgroup beside this process's own can be made, if anywhere.
fn pids_parent() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let writable = |dir: &Path| {
        let c = CString::new(dir.as_os_str().as_encoded_bytes()).ok();
        // SAFETY: `c` is NUL-terminated.
        c.is_some_and(|c| unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0)
    };
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let path = path.trim_start_matches('/');
        let candidates: Vec<PathBuf> = match controllers {
            // v2: where the pids controller is enabled for the children of our cgroup.
            "" => ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
                .iter()
                .map(|root| Path::new(root).join(path))
                .filter(|dir| {
                    std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                        .is_ok_and(|c| c.split_whitespace().any(|c| c == "pids"))
                })
                .collect(),
            c if c.split(',').any(|c| c == "pids") => {
                vec![Path::new("/sys/fs/cgroup/pids").join(path)]
            }
            _ => Vec::new(),
        };
        if let Some(dir) = candidates.into_iter().find(|d| writable(d)) {
            return Some(dir);
        }
    }
    None
}
