//! stdio: a child process speaking newline-delimited JSON-RPC on stdin/stdout.
//!
//! mcpmux spawns the child itself (rather than rmcp's `TokioChildProcess`) to own its process
//! group, turn stderr into `log` events, report non-JSON stdout as errors instead of dropping it
//! silently, and bound the size of a line.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::Mutex;

use super::child_env::child_env;
use super::direct::Direct;
use super::env_secrets::EnvSecrets;
use super::limit::MessageLimit;
use super::line_tail::LineTail;
use super::sandbox::{self, Confinement, Held, Launch};
use super::stdout_reader::{ReaderPeers, StdoutReader};
use crate::config::record::ServerRecord;
use crate::config::sandbox::Sandbox;
use crate::error::{Error, Result};
use crate::events::{Event, EventBus};

/// The rmcp transport over a child's pipes.
pub(crate) struct StdioTransport {
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    stdout: Arc<StdoutReader>,
    direct: Arc<Direct>,
}

/// The child process behind a stdio connection; dropping it kills its whole process group.
pub(crate) struct ChildProcess {
    child: Child,
    pgid: i32,
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    done: bool,
    /// Reads stderr into `log` events until the pipe ends.
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
    stderr_tail: Arc<LineTail>,
    /// Its stdout: what is left in it is read once the server has exited, for the report.
    stdout: std::sync::Weak<StdoutReader>,
    /// The lines on its stdout that were not JSON-RPC.
    stdout_noise: Arc<LineTail>,
    /// Ends when the stdout reader is gone, and with it its last read.
    stdout_gone: Option<tokio::sync::oneshot::Receiver<()>>,
    /// What a sandboxed server holds (its temporary folder, its cgroup), undone with it.
    _sandbox: Option<Held>,
}

/// Spawns the server without a shell, in its own process group, with the environment
/// `child_env` gives it (the host's secrets withheld).
pub(crate) fn spawn(
    record: &ServerRecord,
    events: EventBus,
    limit: Arc<MessageLimit>,
) -> Result<(StdioTransport, ChildProcess)> {
    let command = record.config.command.as_deref().unwrap_or_default();
    let mut cmd = Command::new(command);
    let env = child_env(
        &record.config.env,
        record.config.inherit_env,
        std::env::vars_os(),
    );
    let cwd = record.config.cwd.as_deref().filter(|c| !c.is_empty());
    let confinement = match &record.config.sandbox {
        Some(sandbox) => Some(confine(record, sandbox, &env, cwd, &events)?),
        None => None,
    };
    cmd.args(&record.config.args)
        .env_clear()
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(false);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    let held = confinement.map(|confinement| {
        cmd.envs(confinement.held.env());
        let in_child = confinement.in_child;
        // SAFETY: `apply` makes only system calls (setrlimit, unshare, open, write, close,
        // prctl, landlock_restrict_self) on what the parent prepared: safe after `fork`.
        unsafe {
            cmd.pre_exec(move || in_child.apply());
        }
        confinement.held
    });
    let mut child = cmd.spawn().map_err(|e| {
        let sandboxed = match held.is_some() {
            true => " in its sandbox",
            false => "",
        };
        Error::connection(
            &record.name,
            format!("cannot start `{command}`{sandboxed}: {e}"),
        )
    })?;
    let pid = child.id().unwrap_or(0) as i32;
    let stdin = Arc::new(Mutex::new(child.stdin.take()));
    let stdout = child.stdout.take().expect("stdout is piped");
    let server_id: Arc<str> = record.id.as_str().into();
    let secrets = Arc::new(EnvSecrets::of(record));
    let stderr_tail = Arc::new(LineTail::default());
    let stdout_noise = Arc::new(LineTail::default());
    let stderr_reader = child.stderr.take().map(|stderr| {
        let events = events.clone();
        let server_id = server_id.clone();
        let tail = stderr_tail.clone();
        let secrets = secrets.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let line = secrets.redacted(line);
                tail.keep(&line);
                events.emit(Event::Log {
                    server_id: server_id.to_string(),
                    level: "info".into(),
                    source: "stderr".into(),
                    message: line,
                });
            }
        })
    });
    let direct = Direct::new(stdin.clone());
    let (gone, stdout_gone) = tokio::sync::oneshot::channel();
    let stdout = stdout
        .into_owned_fd()
        .and_then(|fd| {
            let peers = ReaderPeers {
                limit,
                server_id,
                events,
                direct: direct.clone(),
                secrets,
                noise: stdout_noise.clone(),
                _gone: gone,
            };
            StdoutReader::new(fd, peers)
        })
        .map_err(|e| Error::connection(&record.name, format!("cannot read `{command}`: {e}")))?;
    direct.read_by(&stdout);
    let process = ChildProcess {
        child,
        pgid: pid,
        stdin: stdin.clone(),
        done: false,
        stderr_reader,
        stderr_tail,
        stdout: Arc::downgrade(&stdout),
        stdout_noise,
        stdout_gone: Some(stdout_gone),
        _sandbox: held,
    };
    let transport = StdioTransport {
        stdin,
        stdout,
        direct,
    };
    Ok((transport, process))
}

/// The record's sandbox made ready for this start; what the machine cannot keep of it is
/// said as a warning, or refuses the start when the sandbox is `required`.
fn confine(
    record: &ServerRecord,
    sandbox: &Sandbox,
    env: &[(std::ffi::OsString, std::ffi::OsString)],
    cwd: Option<&str>,
    events: &EventBus,
) -> Result<Confinement> {
    let env = env.iter().cloned().collect();
    let launch = Launch {
        server_id: &record.id,
        command: record.config.command.as_deref().unwrap_or_default(),
        args: &record.config.args,
        cwd: cwd.map(std::path::Path::new),
        env: &env,
    };
    let confinement = sandbox::confine(sandbox, &launch)
        .map_err(|why| Error::connection(&record.name, format!("sandbox: {why}")))?;
    for shortfall in &confinement.shortfalls {
        tracing::warn!(server = %record.name, "sandbox: {shortfall}");
        events.emit(Event::Log {
            server_id: record.id.clone(),
            level: "warning".into(),
            source: "sandbox".into(),
            message: shortfall.clone(),
        });
    }
    Ok(confinement)
}

impl StdioTransport {
    /// Where the pool sends its own requests on this session.
    pub(crate) fn direct(&self) -> Arc<Direct> {
        self.direct.clone()
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let stdin = self.stdin.clone();
        async move {
            let mut bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            let mut guard = stdin.lock().await;
            let Some(w) = guard.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "stdin of the server is closed",
                ));
            };
            w.write_all(&bytes).await?;
            w.flush().await
        }
    }

    /// Cancel-safe: rmcp polls this inside `select!`, and the reader keeps all its state.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        self.stdout.next_message().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.stdout.close();
        self.stdin.lock().await.take();
        Ok(())
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.stdout.close();
    }
}

fn killpg(pgid: i32, signal: i32) {
    if pgid > 0 {
        // SAFETY: killpg has no memory-safety preconditions; ESRCH (group gone) is expected.
        unsafe {
            libc::killpg(pgid, signal);
        }
    }
}

impl ChildProcess {
    pub(crate) fn pid(&self) -> u32 {
        self.pgid as u32
    }

    /// Why the server stopped answering, if it exits by itself within `wait`: how it exited
    /// (`when`, e.g. " before it answered"), the last lines it wrote to stdout that were not
    /// JSON-RPC (a message meant for stderr), and the last lines of its stderr.
    pub(crate) async fn exit_report(&mut self, wait: Duration, when: &str) -> Option<String> {
        if self.done {
            return None;
        }
        let status = tokio::time::timeout(wait, self.child.wait())
            .await
            .ok()?
            .ok()?;
        // Its last lines are read once the pipe ends; a grandchild holding the pipe open only
        // shortens what is shown.
        if let Some(reader) = self.stderr_reader.take() {
            let _ = tokio::time::timeout(wait, reader).await;
        }
        // What it wrote before it exited may still be in the pipe, or queued for an rmcp
        // that stopped reading when a write to the exited server failed. A reader rmcp let go
        // of reads it as it goes, perhaps on another thread this moment: that read is awaited.
        match self.stdout.upgrade() {
            Some(stdout) => stdout.settle(),
            None => {
                if let Some(gone) = self.stdout_gone.take() {
                    let _ = tokio::time::timeout(wait, gone).await;
                }
            }
        }
        let mut report = format!("the server exited ({status}){when}");
        let noise = self.stdout_noise.text();
        if let Some(noise) = &noise {
            report.push_str(", having written to stdout (where only JSON-RPC belongs):\n");
            report.push_str(noise);
        }
        // Its stderr last: where a server says why, and what a reader looks at first.
        if let Some(stderr) = self.stderr_tail.text() {
            report.push_str(if noise.is_some() { "\nand" } else { "," });
            report.push_str(" its stderr ending with:\n");
            report.push_str(&stderr);
        }
        Some(report)
    }

    /// Polite first: close stdin and let the server exit, then SIGTERM, then SIGKILL, each to
    /// the whole process group so grandchildren go too.
    pub(crate) async fn terminate(&mut self, grace: Duration) {
        if self.done {
            return;
        }
        self.stdin.lock().await.take();
        let exited = tokio::time::timeout(grace, self.child.wait()).await.is_ok();
        if !exited {
            killpg(self.pgid, libc::SIGTERM);
            if tokio::time::timeout(grace, self.child.wait())
                .await
                .is_err()
            {
                killpg(self.pgid, libc::SIGKILL);
                let _ = self.child.wait().await;
            }
        }
        // The leader is gone; anything it left in its group gets the same treatment.
        killpg(self.pgid, libc::SIGTERM);
        tokio::time::sleep(Duration::from_millis(50)).await;
        killpg(self.pgid, libc::SIGKILL);
        self.done = true;
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        if !self.done {
            killpg(self.pgid, libc::SIGKILL);
            let _ = self.child.try_wait();
        }
    }
}
