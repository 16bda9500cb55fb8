//! Support code for mcpmux's integration tests.
//!
//! The integration tests live in `tests/tests/integration/` and talk to three kinds of MCP
//! servers:
//!
//! * `mcpmux-test-server`, this package's own binary ([`test_server_bin`]): always
//!   available, deterministic, and scriptable through its tools and flags;
//! * `@modelcontextprotocol/server-everything` ([`everything_command`]) and
//!   `mcp-server-time` ([`time_server_command`]): real third-party servers, installed
//!   by `scripts/test-deps.sh` into [`deps_dir`]. When they are missing a test skips
//!   loudly, unless `MCPMUX_REQUIRE_SERVERS=1` (CI) turns the skip into a failure
//!   ([`skip_or_fail`], [`require_or_skip!`]).
//!
//! It also has process helpers ([`ChildGuard`], [`pid_alive`], [`wait_for_pid_exit`])
//! so that no test leaves a server running behind it, and port helpers ([`free_port`],
//! [`wait_for_port`]) for HTTP servers.

pub mod fake_llm;
pub mod nginx;

use std::{
    io,
    net::{SocketAddr, TcpListener, TcpStream},
    path::{Path, PathBuf},
    process::{Child, Command},
    time::{Duration, Instant},
};

/// Version of `@modelcontextprotocol/server-everything` that `scripts/test-deps.sh`
/// installs; its tool names change between releases.
pub const EVERYTHING_VERSION: &str = "2026.8.31";

/// Version of `mcp-server-time` that `scripts/test-deps.sh` installs.
pub const TIME_SERVER_VERSION: &str = "2026.10.19";

/// Root of the repository (the workspace folder holding `Cargo.toml`).
pub fn repo_root() -> PathBuf {
    // This crate sits at `<repo>/tests`, and the path is fixed at compile time,
    // which is where the tests are built and run.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent folder")
        .to_path_buf()
}

/// Where `scripts/test-deps.sh` installs the third-party servers:
/// `$MCPMUX_DEPS_DIR` if set and non-empty (a relative path is taken from the
/// repository root, as the script does), else `<repo>/.deps`.
pub fn deps_dir() -> PathBuf {
    match std::env::var_os("MCPMUX_DEPS_DIR") {
        // `join` keeps an absolute path as it is.
        Some(dir) if !dir.is_empty() => repo_root().join(dir),
        _ => repo_root().join(".deps"),
    }
}

/// True when `MCPMUX_REQUIRE_SERVERS=1`: a missing third-party server is then a
/// test failure rather than a skip (set in CI, where the deps are installed).
pub fn require_servers() -> bool {
    std::env::var("MCPMUX_REQUIRE_SERVERS").is_ok_and(|v| v.trim() == "1")
}

/// Report that the dependency `what` is missing.
///
/// Panics when [`require_servers`] is true; otherwise prints a loud `SKIP` line to
/// stderr and returns, and the caller is expected to `return` from the test right
/// after (see [`require_or_skip!`] for a form that does both).
pub fn skip_or_fail(what: &str) {
    let hint = "run scripts/test-deps.sh to install it";
    if require_servers() {
        panic!("required test dependency missing: {what} (MCPMUX_REQUIRE_SERVERS=1; {hint})");
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("<unnamed test>")
        .to_owned();
    // Written to the stderr handle rather than with `eprintln!`, which the test
    // harness captures and hides for passing tests: a skip must always be seen.
    let line = format!("\n=== SKIP {test}: {what} is not installed ({hint}) ===\n");
    let _ = io::Write::write_all(&mut io::stderr(), line.as_bytes());
}

/// Unwrap an `Option` naming a test dependency, or skip the test.
///
/// `require_or_skip!(expr, "what")` evaluates to the `Some` value; on `None` it calls
/// [`skip_or_fail`] and then `return`s from the enclosing function (with `()`, or
/// with the value given as a third argument, e.g. `Ok(())`).
///
/// ```ignore
/// let (node, args) = require_or_skip!(everything_command(), "server-everything");
/// ```
#[macro_export]
macro_rules! require_or_skip {
    ($option:expr, $what:expr) => {
        $crate::require_or_skip!($option, $what, ())
    };
    ($option:expr, $what:expr, $ret:expr) => {
        match $option {
            ::std::option::Option::Some(value) => value,
            ::std::option::Option::None => {
                $crate::skip_or_fail($what);
                return $ret;
            }
        }
    };
}

/// Find an executable named `name` on `PATH`.
pub fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Folder of the installed `@modelcontextprotocol/server-everything` package
/// (whether or not it exists).
pub fn everything_package_dir() -> PathBuf {
    deps_dir().join("npm/node_modules/@modelcontextprotocol/server-everything")
}

/// How to start server-everything: `(node, [script])`, or `None` when it (or
/// `node`) is missing.
///
/// Append the transport to the arguments: `stdio`, `sse` or `streamableHttp` (the
/// HTTP port comes from the `PORT` environment variable, default 3001, and it binds
/// every interface).
pub fn everything_command() -> Option<(PathBuf, Vec<String>)> {
    let package = everything_package_dir();
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(package.join("package.json")).ok()?).ok()?;
    // `bin` is either a string or a map of command name to script.
    let script = match &manifest["bin"] {
        serde_json::Value::String(script) => script.clone(),
        serde_json::Value::Object(map) => map
            .get("mcp-server-everything")
            .or_else(|| map.values().next())?
            .as_str()?
            .to_owned(),
        _ => return None,
    };
    let script = package.join(script);
    if !script.is_file() {
        return None;
    }
    let node = find_in_path("node")?;
    Some((node, vec![script.to_string_lossy().into_owned()]))
}

/// How to start `@modelcontextprotocol/server-basic-vanillajs`, an MCP App server (one tool,
/// `get-time`, whose view is `ui://get-time/mcp-app.html`), over stdio: `(node, [script,
/// "--stdio"])`, or `None` when it (or `node`) is missing.
pub fn app_server_command() -> Option<(PathBuf, Vec<String>)> {
    let script = deps_dir()
        .join("npm-apps/node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js");
    if !script.is_file() {
        return None;
    }
    let node = find_in_path("node")?;
    Some((
        node,
        vec![script.to_string_lossy().into_owned(), "--stdio".into()],
    ))
}

/// Path of the installed `mcp-server-time` (speaks MCP over stdio, no arguments
/// needed), or `None` when it is missing.
pub fn time_server_command() -> Option<PathBuf> {
    let bin = deps_dir().join("venv/bin/mcp-server-time");
    is_executable(&bin).then_some(bin)
}

/// How many tools mcpmux-test-server lists before any `add_tool` (`test_server_smoke`
/// checks it against the server itself).
pub const TEST_SERVER_TOOLS: usize = 24;

/// How long a third-party server (Node, Python) may take to start answering or listening. One
/// starts in about a second here, but a CI run on a busy machine once saw them take over 20 s;
/// a generous bound costs nothing when they are quick.
pub const SERVER_START: Duration = Duration::from_secs(60);

/// Path of the `mcpmux-test-server` binary.
///
/// `$MCPMUX_TEST_SERVER` wins when set. Otherwise it is looked up next to the
/// running test executable and its parents: an integration test runs from
/// `target/<profile>/deps/`, and the binary is in `target/<profile>/`. Cargo builds
/// it automatically for the integration tests of this package (`tests/tests/integration/`),
/// which may also use `env!("CARGO_BIN_EXE_mcpmux-test-server")` directly; other
/// packages must build it first (`cargo build -p mcpmux-tests`).
///
/// # Panics
/// When the binary cannot be found, with a message that says how to build it.
pub fn test_server_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("MCPMUX_TEST_SERVER").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("current_exe");
    exe.ancestors()
        .skip(1)
        .take(3)
        .map(|dir| dir.join("mcpmux-test-server"))
        .find(|candidate| is_executable(candidate))
        .unwrap_or_else(|| {
            panic!(
                "mcpmux-test-server not found near {}; build it with \
                 `cargo build -p mcpmux-tests --bin mcpmux-test-server` or set MCPMUX_TEST_SERVER",
                exe.display()
            )
        })
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
///
/// It is picked at random below Linux's ephemeral range (32768–60999), where
/// `bind(0)` and every outgoing `connect` also take their ports: a port from
/// `bind(0)` is often grabbed again within milliseconds by some client socket of a
/// parallel test. Another process may still take it before the caller binds it;
/// prefer letting the server pick (`mcpmux-test-server --http 0` prints its URL).
pub fn free_port() -> u16 {
    use std::hash::{BuildHasher, Hasher};
    for _ in 0..100 {
        // RandomState is seeded per instance: a cheap random number without a crate.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        let port = 20_000 + (hasher.finish() % 12_000) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

/// Wait until something accepts TCP connections on 127.0.0.1:`port`; true if it
/// did within `timeout`.
///
/// This blocks the calling thread (polling every 20 ms). From async code, call it
/// through `tokio::task::spawn_blocking` if the awaited server runs on the same
/// runtime; for a server in another process a short block is harmless.
pub fn wait_for_port(port: u16, timeout: Duration) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    wait_until(timeout, || {
        TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
    })
}

/// Poll `condition` every 20 ms until it holds (true) or `timeout` passes (false).
pub fn wait_until(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether process `pid` exists and is not a zombie.
///
/// `kill(pid, 0)` alone says yes for a zombie (dead but not yet reaped by its
/// parent), so `/proc/PID/stat` is read as well and state `Z` (or `X`) counts as
/// dead: for a test asking "did mcpmux kill that server?" a zombie is dead.
pub fn pid_alive(pid: u32) -> bool {
    let Ok(pid_t) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid_t <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let exists = unsafe { libc::kill(pid_t, 0) } == 0
        || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    if !exists {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the first field after the command name, which is in
        // parentheses and may itself contain spaces or parentheses.
        Ok(stat) => match stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
        {
            Some(state) => state != "Z" && state != "X",
            None => true,
        },
        // Raced with its exit.
        Err(_) => false,
    }
}

/// Wait until process `pid` is gone ([`pid_alive`] false); true if it went within
/// `timeout`.
pub fn wait_for_pid_exit(pid: u32, timeout: Duration) -> bool {
    wait_until(timeout, || !pid_alive(pid))
}

/// Send SIGKILL to process group `pgid`, ignoring "no such process".
pub fn kill_process_group(pgid: u32) {
    if let Ok(pgid) = libc::pid_t::try_from(pgid)
        && pgid > 0
    {
        // SAFETY: plain syscall; a stale group id at worst yields ESRCH.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
}

/// A child process started in its own process group, killed with its whole group
/// (SIGKILL) and reaped when dropped, so a failing test cannot leak servers.
///
/// ```ignore
/// let mut cmd = std::process::Command::new(node);
/// cmd.args(&args).arg("streamableHttp").env("PORT", port.to_string());
/// let server = ChildGuard::spawn(&mut cmd)?;
/// ```
#[derive(Debug)]
pub struct ChildGuard {
    child: Child,
}

impl ChildGuard {
    /// Spawn `command` as the leader of a new process group. Stdio settings on
    /// `command` are kept as given.
    pub fn spawn(command: &mut Command) -> io::Result<Self> {
        use std::os::unix::process::CommandExt;
        let child = command.process_group(0).spawn()?;
        Ok(Self { child })
    }

    /// The child's pid, which is also its process group id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The underlying child, e.g. to take its piped stdout.
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Whether the child has exited (and is reaped by this call if so).
    pub fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Kill the whole process group now and reap the child. Dropping does the same.
    pub fn kill(&mut self) {
        kill_process_group(self.child.id());
        let _ = self.child.wait();
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// How to start the WebSocket MCP test server (`tests/servers/ws_server.py`, on the Python
/// SDK 1.x): `(python, [script])`; append the port. `None` when its venv is missing.
pub fn ws_server_command() -> Option<(PathBuf, Vec<String>)> {
    let python = deps_dir().join("ws-venv/bin/python");
    let script = repo_root().join("tests/servers/ws_server.py");
    (is_executable(&python) && script.is_file())
        .then(|| (python, vec![script.to_string_lossy().into_owned()]))
}

/// How to start `tests/servers/python_sdk_server.py` (a 2026-07-28 server on the Python SDK 2.3
/// `MCPServer`: input rounds, list changes and resource updates on demand): `(python,
/// [script])`. `None` when the venv of scripts/test-deps.sh is missing.
pub fn python_sdk_server_command() -> Option<(PathBuf, Vec<String>)> {
    let python = deps_dir().join("venv/bin/python");
    let script = repo_root().join("tests/servers/python_sdk_server.py");
    (is_executable(&python) && script.is_file())
        .then(|| (python, vec![script.to_string_lossy().into_owned()]))
}

/// How to start `tests/servers/fastmcp_tasks_server.py` (FastMCP 4.1 with `fastmcp-tasks`:
/// tools that run as tasks, SEP-2663): `(python, [script])`. `None` when its venv
/// (`.deps/tasks-venv`, from scripts/test-deps.sh) is missing.
pub fn fastmcp_tasks_command() -> Option<(PathBuf, Vec<String>)> {
    let python = deps_dir().join("tasks-venv/bin/python");
    let script = repo_root().join("tests/servers/fastmcp_tasks_server.py");
    (is_executable(&python) && script.is_file())
        .then(|| (python, vec![script.to_string_lossy().into_owned()]))
}

/// How to start tests/servers/fastmcp_skills_server.py (FastMCP 4.1's skills provider and
/// Skills extension, in the same venv as the task server): `(python, [script])`; append the
/// folder of skills it serves. `None` when the venv is missing.
pub fn fastmcp_skills_command() -> Option<(PathBuf, Vec<String>)> {
    let python = deps_dir().join("tasks-venv/bin/python");
    let script = repo_root().join("tests/servers/fastmcp_skills_server.py");
    (is_executable(&python) && script.is_file())
        .then(|| (python, vec![script.to_string_lossy().into_owned()]))
}

/// How to start `@modelcontextprotocol/server-filesystem`: `(node, [script])`; append the
/// allowed folders. `None` when it (or node) is missing.
pub fn filesystem_command() -> Option<(PathBuf, Vec<String>)> {
    let script =
        deps_dir().join("npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let node = find_in_path("node")?;
    script
        .is_file()
        .then(|| (node, vec![script.to_string_lossy().into_owned()]))
}

/// Starts server-everything over a network transport (`sse` or `streamableHttp`) on
/// 127.0.0.1:`port` and waits until it listens. `None` when it is not installed.
pub fn start_everything(mode: &str, port: u16) -> Option<ChildGuard> {
    let (node, mut args) = everything_command()?;
    args.push(mode.to_string());
    let mut cmd = Command::new(node);
    cmd.args(&args)
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let guard = ChildGuard::spawn(&mut cmd).expect("start server-everything");
    assert!(
        wait_for_port(port, SERVER_START),
        "server-everything ({mode}) did not listen on {port}"
    );
    Some(guard)
}

/// The test server over Streamable HTTP on a port of its choosing: the guard, and its `/mcp`
/// URL (with port 0 the server prints the URL it bound as its first line).
pub fn start_test_server_http() -> (ChildGuard, String) {
    start_test_server_http_with(&[])
}

/// [`start_test_server_http`] with more of the test server's flags (e.g. `--legacy`).
pub fn start_test_server_http_with(args: &[&str]) -> (ChildGuard, String) {
    use std::io::BufRead;
    let mut command = Command::new(test_server_bin());
    command
        .args(["--http", "0"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut server = ChildGuard::spawn(&mut command).expect("start mcpmux-test-server --http 0");
    let mut url = String::new();
    io::BufReader::new(server.child_mut().stdout.take().expect("stdout"))
        .read_line(&mut url)
        .expect("read the server's URL");
    (server, url.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_root_holds_the_workspace() {
        assert!(repo_root().join("Cargo.toml").is_file());
        assert!(repo_root().join("tests/Cargo.toml").is_file());
    }

    #[test]
    fn free_port_is_bindable() {
        // Another process may take the port between the check and this bind (seen once in
        // CI): that is the race every caller lives with, so a second try is allowed, not more.
        let mut last = None;
        for _ in 0..2 {
            let port = free_port();
            assert!(port > 0);
            match TcpListener::bind(("127.0.0.1", port)) {
                Ok(listener) => {
                    assert!(wait_for_port(port, Duration::from_secs(1)));
                    drop(listener);
                    return;
                }
                Err(e) => last = Some(format!("port {port} was free a moment ago: {e}")),
            }
        }
        panic!("{}", last.unwrap_or_default());
    }

    #[test]
    fn wait_for_port_times_out_on_a_closed_port() {
        let port = free_port();
        let start = Instant::now();
        assert!(!wait_for_port(port, Duration::from_millis(100)));
        assert!(start.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn pid_alive_sees_self_and_not_a_zombie() {
        assert!(pid_alive(std::process::id()));
        assert!(!pid_alive(0));
        assert!(!pid_alive(u32::MAX));

        // An exited but unreaped child is a zombie: it must count as dead.
        let mut child = Command::new("true").spawn().expect("spawn true");
        let pid = child.id();
        assert!(wait_for_pid_exit(pid, Duration::from_secs(5)));
        child.wait().expect("reap");
        assert!(!pid_alive(pid));
    }

    #[test]
    fn child_guard_kills_the_whole_group() {
        // The shell starts a background grandchild in the same group and prints its pid.
        let mut command = Command::new("sh");
        command
            .args(["-c", "sleep 1000 & echo $!; wait"])
            .stdout(std::process::Stdio::piped());
        let mut guard = ChildGuard::spawn(&mut command).expect("spawn sh");
        let shell = guard.pid();
        let mut line = String::new();
        io::BufRead::read_line(
            &mut io::BufReader::new(guard.child_mut().stdout.take().expect("stdout")),
            &mut line,
        )
        .expect("read grandchild pid");
        let grandchild: u32 = line.trim().parse().expect("pid");
        assert!(pid_alive(shell) && pid_alive(grandchild));

        drop(guard);
        assert!(!pid_alive(shell));
        // The grandchild is reparented and reaped by init (or a subreaper) after
        // SIGKILL; pid_alive treats the interval as a zombie, i.e. dead.
        assert!(wait_for_pid_exit(grandchild, Duration::from_secs(5)));
    }

    #[test]
    fn skip_or_fail_returns_when_not_required() {
        if require_servers() {
            return;
        }
        fn needs_missing() -> u8 {
            let value: u8 = require_or_skip!(None::<u8>, "a dependency that never exists", 7);
            value
        }
        assert_eq!(needs_missing(), 7);
    }
}
