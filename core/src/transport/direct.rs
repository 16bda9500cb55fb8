//! Requests the pool writes itself on a stdio session, past rmcp's service loop.
//!
//! Through rmcp a request crosses to the session's task, out to the writer, back from the reader
//! to the session task, is parsed into an untagged enum of every result type, and only then
//! reaches the caller: on a fast local server that costs more than the round trip itself. A
//! direct request is written from the caller's task and its reply handed straight from the
//! reader to the caller, still as bytes, to be parsed into the one type expected. Everything
//! else on the session (the handshake, server requests, notifications) stays with rmcp; direct
//! ids are strings of their own (`"mcpmux-N"`) so they never collide with rmcp's numbers.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::process::ChildStdin;
use tokio::sync::{Mutex, OwnedMutexGuard, oneshot};

use super::deadlines::Deadlines;
use super::stdout_reader::StdoutReader;
use super::write_batch;
use crate::wire::reply_line::{ID_PREFIX, Kind, TOKEN_PREFIX, classify};

/// Ids are a counter: hashing them with SipHash would cost more than the lookup.
#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) | u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A direct request's progress token as text, on the stack: most calls only write it into
/// their request, and only a caller that follows progress needs it as a `String`.
pub(crate) struct TokenText {
    bytes: [u8; TokenText::MAX],
    len: usize,
}

impl TokenText {
    /// The prefix and the digits of the largest id.
    const MAX: usize = TOKEN_PREFIX.len() + 20;

    pub(crate) fn as_str(&self) -> &str {
        // SAFETY: `progress_token` writes only the ASCII prefix and ASCII digits, and the
        // bytes do not change after; checking them again would cost more than writing them.
        unsafe { std::str::from_utf8_unchecked(&self.bytes[..self.len]) }
    }
}

/// A request waiting for its reply.
struct Entry {
    /// Taken when the answer is given: its reply, or that its time ran out.
    tx: Option<oneshot::Sender<Answer>>,
    /// When it was sent, and how long it may wait for its reply from then or from the
    /// server's last report of progress on it (none: as long as it takes).
    sent: Instant,
    timeout: Option<Duration>,
    /// When the server last reported progress on it (its progress token is its id).
    progressed: Option<Instant>,
    /// Sent from the event loop that watches the session's stdout, which reads its reply.
    by_watcher: bool,
}

impl Entry {
    /// When its time runs out, if it has a limit still to run out.
    fn deadline(&self) -> Option<Instant> {
        self.tx.as_ref()?;
        self.progressed
            .unwrap_or(self.sent)
            .checked_add(self.timeout?)
    }
}

/// What a direct request's caller hears.
enum Answer {
    /// The reply, a whole JSON-RPC message.
    Line(Vec<u8>),
    /// Neither the reply nor progress came within the request's timeout.
    TimedOut,
}

type Pending = HashMap<u64, Entry, std::hash::BuildHasherDefault<IdHasher>>;

/// The direct side of one stdio session: the shared stdin and the replies awaited.
pub(crate) struct Direct {
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    pending: std::sync::Mutex<Pending>,
    /// Lets the reader skip the id probe while nothing direct is in flight.
    waiting: AtomicUsize,
    /// Of those, the ones whose callers do not read the stdout themselves.
    unwatched: AtomicUsize,
    next_id: AtomicU64,
    closed: AtomicBool,
    /// The session's stdout, noted for an event loop that may watch it (`noting_readers`).
    stdout: OnceLock<Weak<StdoutReader>>,
    /// Requests held for the end of their event loop's turn (`write_batch`).
    held: std::sync::Mutex<Held>,
    /// The requests' time limits, kept under the `pending` lock.
    deadlines: Deadlines,
}

/// Requests written but not sent yet: their lines, and their ids to fail if sending fails.
#[derive(Default)]
struct Held {
    bytes: Vec<u8>,
    ids: Vec<u64>,
}

/// Why a direct request got no reply.
#[derive(Debug)]
pub(crate) enum DirectError {
    /// The session ended (or stdin was closed) before the reply came.
    Closed(String),
    /// No reply, nor progress, within the timeout.
    TimedOut,
}

impl std::fmt::Display for DirectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DirectError::Closed(m) => f.write_str(m),
            DirectError::TimedOut => f.write_str("no reply within the timeout"),
        }
    }
}

/// A request on the wire. Dropping it before the reply arrives (a timeout, a cancelled
/// caller) tells the server with `notifications/cancelled`.
pub(crate) struct DirectCall {
    direct: Arc<Direct>,
    id: u64,
    rx: Option<oneshot::Receiver<Answer>>,
}

/// A JSON-RPC reply whose result is parsed as `T` in the same pass.
#[derive(Deserialize)]
pub(crate) struct TypedReply<T> {
    #[serde(default = "Option::default")]
    pub result: Option<T>,
    #[serde(default)]
    pub error: Option<rmcp::model::ErrorData>,
}

/// A JSON-RPC reply, its result left unparsed for the caller's type.
#[derive(Deserialize)]
pub(crate) struct Reply<'a> {
    #[serde(borrow, default)]
    pub result: Option<&'a RawValue>,
    #[serde(default)]
    pub error: Option<rmcp::model::ErrorData>,
}

impl Direct {
    pub(crate) fn new(stdin: Arc<Mutex<Option<ChildStdin>>>) -> Arc<Direct> {
        Arc::new(Direct {
            stdin,
            pending: std::sync::Mutex::new(Pending::default()),
            waiting: AtomicUsize::new(0),
            unwatched: AtomicUsize::new(0),
            next_id: AtomicU64::new(1),
            closed: AtomicBool::new(false),
            stdout: OnceLock::new(),
            held: std::sync::Mutex::default(),
            deadlines: Deadlines::new(),
        })
    }

    /// Names the reader of the session's stdout, which holds this.
    pub(crate) fn read_by(&self, stdout: &Arc<StdoutReader>) {
        let _ = self.stdout.set(Arc::downgrade(stdout));
    }

    /// The id of the next request, reserved; its progress token is `progress_token(id)`.
    pub(crate) fn reserve(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The progress token that reports on request `id`.
    pub(crate) fn progress_token(id: u64) -> TokenText {
        let mut token = TokenText {
            bytes: [0; TokenText::MAX],
            len: TOKEN_PREFIX.len(),
        };
        token.bytes[..TOKEN_PREFIX.len()].copy_from_slice(TOKEN_PREFIX.as_bytes());
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(id).as_bytes();
        token.bytes[token.len..token.len + digits.len()].copy_from_slice(digits);
        token.len += digits.len();
        token
    }

    /// Whether `token` reports on a direct request (whose progress the pool handles itself).
    pub(crate) fn is_direct_token(token: &rmcp::model::ProgressToken) -> bool {
        matches!(&token.0, rmcp::model::NumberOrString::String(s) if s.starts_with(TOKEN_PREFIX))
    }

    /// Writes request `id` (from `reserve`) of `method`, its params written as JSON by
    /// `write_params`, and returns the call whose reply to await: the reply, unless `timeout`
    /// passes with neither the reply nor progress on the request (progress restarts it, as
    /// rmcp's `reset_timeout_on_progress` does).
    pub(crate) async fn request(
        self: &Arc<Self>,
        id: u64,
        method: &str,
        timeout: Duration,
        write_params: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
    ) -> Result<DirectCall, DirectError> {
        // Room for a short call's line, its `_meta` included, without growing.
        let mut line = Vec::with_capacity(256);
        line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        line.extend_from_slice(ID_PREFIX.as_bytes());
        line.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
        line.extend_from_slice(b"\",\"method\":");
        crate::wire::json_text::write_str(method, &mut line);
        line.extend_from_slice(b",\"params\":");
        write_params(&mut line).map_err(closed)?;
        line.extend_from_slice(b"}\n");
        let (tx, rx) = oneshot::channel();
        let by_watcher = self.stdout.get().is_some_and(super::stdout_reader::note);
        let sent = Instant::now();
        let look_sooner = {
            let mut pending = self.pending.lock().unwrap();
            // Checked under the lock `close` takes, so no sender is left behind by a close.
            if self.closed.load(Ordering::Acquire) {
                return Err(DirectError::Closed("the connection is closed".into()));
            }
            let entry = Entry {
                tx: Some(tx),
                sent,
                timeout: Some(timeout),
                progressed: None,
                by_watcher,
            };
            let look_sooner = entry.deadline().is_some_and(|at| self.deadlines.sooner(at));
            pending.insert(id, entry);
            let others = self.waiting.fetch_add(1, Ordering::AcqRel);
            if !by_watcher {
                self.unwatched.fetch_add(1, Ordering::AcqRel);
            }
            // A loop that reads the stdout alone serves one call of its own; for anything else
            // the runtime reads too (`replies_for_runtime`).
            if (!by_watcher || others == 1)
                && let Some(stdout) = self.stdout.get().and_then(Weak::upgrade)
            {
                stdout.wanted();
            }
            look_sooner
        };
        if look_sooner {
            self.wake_keeper();
        }
        let call = DirectCall {
            direct: self.clone(),
            id,
            rx: Some(rx),
        };
        if write_batch::hold(self) {
            let full = {
                let mut held = self.held.lock().unwrap();
                held.bytes.extend_from_slice(&line);
                held.ids.push(id);
                held.ids.len() >= write_batch::HELD_MAX
            };
            if full {
                self.write(b"").await?;
            }
            return Ok(call);
        }
        self.write(&line).await?;
        Ok(call)
    }

    /// Writes `line` after the requests held for the end of a loop's turn, so that it
    /// overtakes none of them (a cancellation comes after its request).
    async fn write(&self, line: &[u8]) -> Result<(), DirectError> {
        // The lock's future is boxed, made only when another writer has stdin: it would be a
        // third of the write's future, which every call's future holds. (`try_lock` never
        // overtakes a writer that waits: a freed lock goes to the first in the queue.)
        let mut stdin = match self.stdin.try_lock() {
            Ok(stdin) => stdin,
            Err(_) => Box::pin(self.stdin.lock()).await,
        };
        let mut held = std::mem::take(&mut *self.held.lock().unwrap());
        let Some(w) = stdin.as_mut() else {
            self.fail(&held.ids);
            return Err(DirectError::Closed("stdin of the server is closed".into()));
        };
        let bytes = if held.bytes.is_empty() {
            line
        } else {
            held.bytes.extend_from_slice(line);
            &held.bytes
        };
        if let Err(e) = async {
            w.write_all(bytes).await?;
            w.flush().await
        }
        .await
        {
            self.fail(&held.ids);
            return Err(DirectError::Closed(format!(
                "writing to the server failed: {e}"
            )));
        }
        Ok(())
    }

    /// Sends the requests held for the end of a loop's turn: at once if the pipe takes them,
    /// else (stdin busy, or the pipe full) on the runtime, stdin kept until they are written.
    pub(crate) fn write_held(self: &Arc<Self>) {
        let Ok(mut stdin) = self.stdin.clone().try_lock_owned() else {
            // A writer has stdin: whoever takes it next writes what is held first.
            let direct = self.clone();
            self.on_runtime(async move {
                let _ = direct.write(b"").await;
            });
            return;
        };
        let held = std::mem::take(&mut *self.held.lock().unwrap());
        if held.bytes.is_empty() {
            return;
        }
        let Some(w) = stdin.as_mut() else {
            self.fail(&held.ids);
            return;
        };
        // One try without waiting: a waker that does nothing, since a pipe that cannot take
        // it all now is written on the runtime, which polls with its own.
        let mut cx = Context::from_waker(Waker::noop());
        let sent = match Pin::new(w).poll_write(&mut cx, &held.bytes) {
            Poll::Ready(Ok(n)) => n,
            Poll::Pending => 0,
            Poll::Ready(Err(_)) => {
                self.fail(&held.ids);
                return;
            }
        };
        if sent < held.bytes.len() {
            self.write_rest_later(stdin, held, sent);
        }
    }

    /// Writes `held` from byte `from` on the runtime, with stdin held meanwhile.
    fn write_rest_later(
        self: &Arc<Self>,
        mut stdin: OwnedMutexGuard<Option<ChildStdin>>,
        held: Held,
        from: usize,
    ) {
        let direct = self.clone();
        self.on_runtime(async move {
            let Some(w) = stdin.as_mut() else { return };
            if w.write_all(&held.bytes[from..]).await.is_err() {
                direct.fail(&held.ids);
            }
        });
    }

    /// Runs `work` on the runtime of the calling thread's context; without one (never from
    /// a binding, which enters it), the held requests fail rather than wait forever.
    fn on_runtime(&self, work: impl Future<Output = ()> + Send + 'static) {
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn(work)),
            Err(_) => {
                let held = std::mem::take(&mut *self.held.lock().unwrap());
                self.fail(&held.ids);
            }
        }
    }

    /// The requests `ids` were not sent: their callers hear that the connection failed.
    fn fail(&self, ids: &[u64]) {
        for id in ids {
            self.forget(*id);
        }
    }

    fn forget(&self, id: u64) -> bool {
        let removed = self.pending.lock().unwrap().remove(&id);
        if let Some(entry) = &removed {
            self.gone(entry);
        }
        removed.is_some()
    }

    /// Counts `entry` out of the requests waiting.
    fn gone(&self, entry: &Entry) {
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        if !entry.by_watcher {
            self.unwatched.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Whether the runtime should read replies now rather than leave them to the event loop
    /// that watches the stdout: some caller does not watch it itself, or several requests
    /// wait. With many in flight the loop is busy with their answers, and reading on the
    /// runtime's thread meanwhile is work done in parallel; a lone call gains from the loop
    /// reading its reply.
    pub(crate) fn replies_for_runtime(&self) -> bool {
        self.unwatched.load(Ordering::Acquire) > 0 || self.waiting.load(Ordering::Acquire) > 1
    }

    /// Takes `line` if it answers a direct request; otherwise leaves it for rmcp.
    pub(crate) fn deliver(&self, line: &mut Vec<u8>) -> bool {
        if self.waiting.load(Ordering::Acquire) == 0 {
            return false;
        }
        let id = match classify(line) {
            Kind::Reply(id) => id,
            Kind::Progress(id) => {
                if let Some(entry) = self.pending.lock().unwrap().get_mut(&id) {
                    entry.progressed = Some(Instant::now());
                }
                // rmcp still sees it: listeners get their `progress` event.
                return false;
            }
            Kind::Other => return false,
        };
        let entry = self.pending.lock().unwrap().remove(&id);
        match entry.and_then(|mut entry| {
            self.gone(&entry);
            entry.tx.take()
        }) {
            Some(tx) => {
                let _ = tx.send(Answer::Line(std::mem::take(line)));
            }
            // A reply to a call given up on (timed out, cancelled): nobody waits for it.
            None => line.clear(),
        }
        true
    }

    /// Starts the keeper of the requests' time limits if it is not running, and has it look.
    fn wake_keeper(self: &Arc<Self>) {
        let direct = Arc::downgrade(self);
        self.deadlines.wake(|keeper| {
            // Requests are written from within a runtime (a binding enters its own).
            let Ok(rt) = tokio::runtime::Handle::try_current() else {
                return false;
            };
            let look = move || Some(direct.upgrade()?.expire());
            drop(rt.spawn(super::deadlines::keep(keeper, look)));
            true
        });
    }

    /// Tells the requests whose time ran out, and gives the earliest limit still to come.
    fn expire(&self) -> Option<Instant> {
        let now = Instant::now();
        let mut pending = self.pending.lock().unwrap();
        let mut next: Option<Instant> = None;
        for entry in pending.values_mut() {
            match entry.deadline() {
                Some(at) if at <= now => {
                    if let Some(tx) = entry.tx.take() {
                        // The entry stays: the caller's drop of its call tells the server.
                        let _ = tx.send(Answer::TimedOut);
                    }
                }
                Some(at) => next = Some(next.map_or(at, |n| n.min(at))),
                None => {}
            }
        }
        self.deadlines.looks_next(next);
        next
    }

    /// Request `id` waits without a limit from now on (a cancelled call that still hears).
    fn without_limit(&self, id: u64) {
        if let Some(entry) = self.pending.lock().unwrap().get_mut(&id) {
            entry.timeout = None;
        }
    }

    /// Whether the session has ended (the reader saw the end before rmcp's session task did).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The session ended: every waiting caller gets an error now.
    pub(crate) fn close(&self) {
        let mut pending = self.pending.lock().unwrap();
        self.closed.store(true, Ordering::Release);
        pending.clear();
        self.waiting.store(0, Ordering::Release);
        self.unwatched.store(0, Ordering::Release);
    }
}

fn closed(e: impl std::fmt::Display) -> DirectError {
    DirectError::Closed(e.to_string())
}

impl DirectCall {
    /// The reply's bytes (a whole JSON-RPC message), unless the request's timeout passed
    /// with neither the reply nor progress on it.
    pub(crate) async fn reply(&mut self) -> Result<Vec<u8>, DirectError> {
        let rx = self.rx.as_mut().expect("reply is awaited once");
        match rx.await {
            Ok(Answer::Line(line)) => {
                self.rx = None;
                Ok(line)
            }
            // Still pending: dropping `self` tells the server it was cancelled.
            Ok(Answer::TimedOut) => Err(DirectError::TimedOut),
            Err(_) => {
                self.rx = None;
                Err(DirectError::Closed(
                    "the connection closed before the reply".into(),
                ))
            }
        }
    }
}

impl DirectCall {
    /// Gives the call up as cancelled while still hearing an answer the server sent before
    /// it learned: a server may have started work that only its answer names (a task), which
    /// the caller then stops. With `first`, the server is told only when no answer came in
    /// that time (a server that hears of the cancel may start the work and never answer);
    /// after telling, an answer is heard for `grace` more.
    pub(crate) fn cancel_hearing(
        mut self,
        first: Option<Duration>,
        grace: Duration,
    ) -> impl Future<Output = Option<Vec<u8>>> + Send + 'static {
        // Taken, so that dropping `self` neither forgets the call nor tells the server.
        let rx = self.rx.take();
        let (direct, id) = (self.direct.clone(), self.id);
        // Its own time no longer counts: it is heard for `first` and `grace`.
        direct.without_limit(id);
        async move {
            let mut rx = rx?;
            if let Some(first) = first
                && let Ok(answer) = tokio::time::timeout(first, &mut rx).await
            {
                match answer {
                    Ok(Answer::Line(line)) => {
                        direct.forget(id);
                        return Some(line);
                    }
                    // Its time ran out as it was cancelled: no answer can come now.
                    Ok(Answer::TimedOut) => direct.tell_cancelled(id).await,
                    Err(_) => {}
                }
                direct.forget(id);
                return None;
            }
            direct.tell_cancelled(id).await;
            let heard = match tokio::time::timeout(grace, rx).await {
                Ok(Ok(Answer::Line(line))) => Some(line),
                _ => None,
            };
            direct.forget(id);
            heard
        }
    }
}

impl Direct {
    /// Writes `notifications/cancelled` for direct request `id`.
    async fn tell_cancelled(&self, id: u64) {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":\"{TOKEN_PREFIX}{id}\",\"reason\":\"cancelled by the client\"}}}}\n"
        );
        let _ = self.write(line.as_bytes()).await;
    }
}

impl Drop for DirectCall {
    fn drop(&mut self) {
        if self.rx.is_none() || !self.direct.forget(self.id) {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let direct = self.direct.clone();
        let id = self.id;
        rt.spawn(async move { direct.tell_cancelled(id).await });
    }
}

#[cfg(test)]
mod tests {
    use super::Direct;
    use crate::wire::reply_line::direct_id;

    #[test]
    fn progress_tokens_name_their_request_whatever_its_id() {
        for id in [0, 1, 9, 10, 4_294_967_296, u64::MAX] {
            let token = Direct::progress_token(id);
            assert_eq!(token.as_str(), format!("mcpmux-{id}"));
            let parsed = serde_json::to_value(token.as_str()).unwrap();
            let raw = serde_json::value::to_raw_value(&parsed).unwrap();
            assert_eq!(direct_id(&raw), Some(id), "{}", token.as_str());
        }
    }
}
