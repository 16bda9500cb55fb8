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

use super::direct::Direct;
use super::env_secrets::EnvSecrets;
use super::limit::MessageLimit;
use super::stdout_reader::StdoutReader;
use crate::config::record::ServerRecord;
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
    stderr_tail: Arc<StderrTail>,
}

/// How many of a server's last stderr lines are kept, and how much of each: enough for the
/// end of a Python traceback or a Node stack's message.
const TAIL_LINES: usize = 5;
const TAIL_LINE_CHARS: usize = 300;

/// The last lines a server wrote to stderr. A server that dies as it starts (a token not set,
/// a module not installed) says why there and nowhere else, and its user needs to read it in
/// the connection's error rather than in a log they did not open. Errors never carry a
/// config's env values, so a line that repeats one (a token refused) has it redacted.
struct StderrTail {
    lines: std::sync::Mutex<std::collections::VecDeque<String>>,
}

impl StderrTail {
    fn new() -> StderrTail {
        StderrTail {
            lines: Default::default(),
        }
    }

    /// Keeps a line (already redacted) among the last ones.
    fn keep(&self, line: &str) {
        let mut line = line.trim_end().to_string();
        if line.is_empty() {
            return;
        }
        if let Some((cut, _)) = line.char_indices().nth(TAIL_LINE_CHARS) {
            line.truncate(cut);
            line.push('…');
        }
        let mut lines = self.lines.lock().unwrap();
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    fn text(&self) -> Option<String> {
        let lines = self.lines.lock().unwrap();
        (!lines.is_empty()).then(|| lines.iter().cloned().collect::<Vec<_>>().join("\n"))
    }
}

/// Spawns the server without a shell, in its own process group, env inherited then overlaid.
pub(crate) fn spawn(
    record: &ServerRecord,
    events: EventBus,
    limit: Arc<MessageLimit>,
) -> Result<(StdioTransport, ChildProcess)> {
    let command = record.config.command.as_deref().unwrap_or_default();
    let mut cmd = Command::new(command);
    cmd.args(&record.config.args)
        .envs(&record.config.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(false);
    if let Some(cwd) = record.config.cwd.as_deref().filter(|c| !c.is_empty()) {
        cmd.current_dir(cwd);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::connection(&record.name, format!("cannot start `{command}`: {e}")))?;
    let pid = child.id().unwrap_or(0) as i32;
    let stdin = Arc::new(Mutex::new(child.stdin.take()));
    let stdout = child.stdout.take().expect("stdout is piped");
    let server_id: Arc<str> = record.id.as_str().into();
    let secrets = Arc::new(EnvSecrets::of(record));
    let stderr_tail = Arc::new(StderrTail::new());
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
    let stdout = stdout
        .into_owned_fd()
        .and_then(|fd| StdoutReader::new(fd, limit, server_id, events, direct.clone(), secrets))
        .map_err(|e| Error::connection(&record.name, format!("cannot read `{command}`: {e}")))?;
    direct.read_by(&stdout);
    let transport = StdioTransport {
        stdin: stdin.clone(),
        stdout,
        direct,
    };
    let process = ChildProcess {
        child,
        pgid: pid,
        stdin,
        done: false,
        stderr_reader,
        stderr_tail,
    };
    Ok((transport, process))
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
    /// (`when`, e.g. " before it answered"), and the last lines of its stderr.
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
        let mut report = format!("the server exited ({status}){when}");
        if let Some(stderr) = self.stderr_tail.text() {
            report.push_str(", its stderr ending with:\n");
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
