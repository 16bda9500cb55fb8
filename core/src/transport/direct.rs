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

/// Direct ids, and the progress tokens of direct requests, are `"mcpmux-N"`.
const TOKEN_PREFIX: &str = "mcpmux-";
/// The same, as it starts in JSON.
const ID_PREFIX: &str = "\"mcpmux-";

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

#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ProgressProbe<'a> {
    #[serde(borrow, rename = "progressToken")]
    progress_token: &'a RawValue,
}

/// What a line from the server is to the direct side.
#[derive(Debug, PartialEq)]
enum Kind {
    /// The reply to direct request N.
    Reply(u64),
    /// Progress on direct request N.
    Progress(u64),
    Other,
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

/// Whether `line` is a reply to, or progress on, a direct request.
fn classify(line: &[u8]) -> Kind {
    if let Some(id) = leading_reply_id(line) {
        return Kind::Reply(id);
    }
    let Ok(probe) = serde_json::from_slice::<Probe>(line) else {
        return Kind::Other;
    };
    match probe.method.as_deref() {
        None => probe
            .id
            .and_then(direct_id)
            .map_or(Kind::Other, Kind::Reply),
        Some("notifications/progress") => probe
            .params
            .and_then(|p| serde_json::from_str::<ProgressProbe>(p.get()).ok())
            .and_then(|p| direct_id(p.progress_token))
            .map_or(Kind::Other, Kind::Progress),
        Some(_) => Kind::Other,
    }
}

/// The id of a reply to a direct request written the way servers usually write one, read
/// without scanning a possibly large result: `jsonrpc` then `id` then `result` or `error` (as
/// rmcp and the Python SDK write it), `id` first (keys sorted, as a `serde_json::Value` writes
/// it), or `result` or `error` first and `jsonrpc` and `id` last (the TypeScript SDK).
fn leading_reply_id(line: &[u8]) -> Option<u64> {
    const JSONRPC_FIRST: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":\"mcpmux-";
    const ID_FIRST: &[u8] = b"{\"id\":\"mcpmux-";
    if let Some(rest) = line.strip_prefix(JSONRPC_FIRST) {
        return id_before(rest, b"\",");
    }
    if let Some(rest) = line.strip_prefix(ID_FIRST) {
        return id_before(rest, b"\",\"jsonrpc\":\"2.0\",");
    }
    trailing_reply_id(line)
}

/// N, from `N` + `between` + `"result":` or `"error":` at the start of `rest`.
fn id_before(rest: &[u8], between: &[u8]) -> Option<u64> {
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let after = rest[digits..].strip_prefix(between)?;
    if !(after.starts_with(b"\"result\":") || after.starts_with(b"\"error\":")) {
        return None;
    }
    decimal(&rest[..digits])
}

/// The id of `{"result":...,"jsonrpc":"2.0","id":"mcpmux-N"}` (or `error`): the closing brace
/// is the object's own, so the keys before it are top-level ones.
fn trailing_reply_id(line: &[u8]) -> Option<u64> {
    const ID_LAST: &[u8] = b",\"jsonrpc\":\"2.0\",\"id\":\"mcpmux-";
    if !(line.starts_with(b"{\"result\":") || line.starts_with(b"{\"error\":")) {
        return None;
    }
    let rest = line.strip_suffix(b"\"}")?;
    let digits = rest.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let (rest, number) = rest.split_at(rest.len() - digits);
    rest.strip_suffix(ID_LAST)?;
    decimal(number)
}

/// The value of ASCII decimal `digits` (at least one), if it fits.
fn decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

/// N, where `raw` is the JSON string `"mcpmux-N"`.
fn direct_id(raw: &RawValue) -> Option<u64> {
    raw.get()
        .strip_prefix(ID_PREFIX)?
        .strip_suffix('"')?
        .parse()
        .ok()
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
    use super::{Direct, Kind, classify};

    #[test]
    fn progress_tokens_name_their_request_whatever_its_id() {
        for id in [0, 1, 9, 10, 4_294_967_296, u64::MAX] {
            let token = Direct::progress_token(id);
            assert_eq!(token.as_str(), format!("mcpmux-{id}"));
            let parsed = serde_json::to_value(token.as_str()).unwrap();
            let raw = serde_json::value::to_raw_value(&parsed).unwrap();
            assert_eq!(super::direct_id(&raw), Some(id), "{}", token.as_str());
        }
    }

    #[test]
    fn replies_to_direct_requests_are_recognised_in_any_field_order() {
        use Kind::{Other, Progress, Reply};
        let cases: &[(&str, Kind)] = &[
            (
                r#"{"jsonrpc":"2.0","id":"mcpmux-7","result":{"content":[]}}"#,
                Reply(7),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"mcpmux-12","error":{"code":1,"message":"x"}}"#,
                Reply(12),
            ),
            (r#"{"result":{},"id":"mcpmux-3","jsonrpc":"2.0"}"#, Reply(3)),
            // As the TypeScript SDK writes them.
            (
                r#"{"result":{"content":[{"type":"text","text":"}"}]},"jsonrpc":"2.0","id":"mcpmux-31"}"#,
                Reply(31),
            ),
            (
                r#"{"error":{"code":1,"message":"x"},"jsonrpc":"2.0","id":"mcpmux-32"}"#,
                Reply(32),
            ),
            // Only the object's own last keys count.
            (
                r#"{"result":{"a":{"jsonrpc":"2.0","id":"mcpmux-33"}},"jsonrpc":"2.0","id":7}"#,
                Other,
            ),
            (
                r#"{"method":"x","params":{},"jsonrpc":"2.0","id":"mcpmux-34"}"#,
                Other,
            ),
            // Keys sorted, as serde_json's maps write them.
            (
                r#"{"id":"mcpmux-15","jsonrpc":"2.0","result":{"content":[]}}"#,
                Reply(15),
            ),
            (
                r#"{"error":{"code":1,"message":"x"},"id":"mcpmux-16","jsonrpc":"2.0"}"#,
                Reply(16),
            ),
            (
                r#"{"id":"mcpmux-99999999999999999999","jsonrpc":"2.0","result":{}}"#,
                Other,
            ),
            (
                r#"{ "jsonrpc": "2.0", "id": "mcpmux-4", "result": {} }"#,
                Reply(4),
            ),
            // rmcp's own requests and the server's requests stay with rmcp.
            (r#"{"jsonrpc":"2.0","id":5,"result":{}}"#, Other),
            (
                r#"{"jsonrpc":"2.0","id":"mcpmux-9","method":"ping"}"#,
                Other,
            ),
            (
                r#"{"id":"mcpmux-9","jsonrpc":"2.0","method":"ping"}"#,
                Other,
            ),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
                Other,
            ),
            (r#"{"jsonrpc":"2.0","id":"mcpmux-","result":{}}"#, Other),
            (r#"{"jsonrpc":"2.0","id":"other-1","result":{}}"#, Other),
            ("not json", Other),
            // Progress on a direct request: noted, and left for rmcp (the progress event).
            (
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpmux-8","progress":1}}"#,
                Progress(8),
            ),
            (
                r#"{"method":"notifications/progress","params":{"progress":2,"progressToken":"mcpmux-21"},"jsonrpc":"2.0"}"#,
                Progress(21),
            ),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1}}"#,
                Other,
            ),
        ];
        for (line, want) in cases {
            assert_eq!(classify(line.as_bytes()), *want, "{line}");
        }
    }

    mod properties {
        use super::*;
        use crate::arbitrary;
        use proptest::prelude::*;
        use serde_json::{Value, json};

        /// What a line is by serde's reading alone: a reply to `mcpmux-N` (no method), or
        /// progress on it, or neither.
        fn by_serde(line: &[u8]) -> Kind {
            let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(line) else {
                return Kind::Other;
            };
            let number = |v: Option<&Value>| {
                v.and_then(Value::as_str)
                    .and_then(|s| s.strip_prefix("mcpmux-"))
                    .and_then(|n| n.parse::<u64>().ok())
            };
            match message.get("method").map(|m| m.as_str()) {
                None => number(message.get("id")).map_or(Kind::Other, Kind::Reply),
                Some(Some("notifications/progress")) => {
                    number(message.get("params").and_then(|p| p.get("progressToken")))
                        .map_or(Kind::Other, Kind::Progress)
                }
                Some(_) => Kind::Other,
            }
        }

        /// The digits after `mcpmux-`: most a number, some past u64 or not digits at all.
        fn digits() -> impl Strategy<Value = String> + Clone {
            prop_oneof![
                4 => any::<u64>().prop_map(|n| n.to_string()),
                1 => Just("18446744073709551616".to_string()),
                1 => Just("007".to_string()),
                1 => Just("+5".to_string()),
                1 => Just(String::new()),
                1 => "[0-9]{1,3}[a-z\\\"]".prop_map(|s| s),
            ]
        }

        /// A line a server writes: a reply (result or error) in one of the orders servers
        /// write, progress, a request of its own, or a notification.
        fn line() -> impl Strategy<Value = String> {
            let id = digits().prop_map(|d| Value::from(format!("mcpmux-{d}")));
            let result = prop_oneof![
                arbitrary::value().prop_map(|v| ("result", v)),
                arbitrary::value()
                    .prop_map(|d| ("error", json!({"code": -1, "message": "x", "data": d}))),
            ];
            let reply = (id.clone(), result, 0..4usize, arbitrary::style()).prop_map(
                |(id, (key, body), order, style)| {
                    let version = ("jsonrpc", Value::from("2.0"));
                    let members = match order {
                        0 => vec![version, ("id", id), (key, body)],
                        1 => vec![("id", id), version, (key, body)],
                        2 => vec![(key, body), version, ("id", id)],
                        _ => vec![(key, body), ("id", id), version],
                    };
                    arbitrary::object(&members, style)
                },
            );
            let progress = (id.clone(), arbitrary::style()).prop_map(|(token, style)| {
                let params = json!({"progressToken": token, "progress": 1});
                let members = [
                    ("jsonrpc", Value::from("2.0")),
                    ("method", Value::from("notifications/progress")),
                    ("params", params),
                ];
                arbitrary::object(&members, style)
            });
            let request =
                (id, arbitrary::string(12), arbitrary::style()).prop_map(|(id, method, style)| {
                    let members = [
                        ("jsonrpc", Value::from("2.0")),
                        ("id", id),
                        ("method", Value::from(method)),
                        ("params", json!({})),
                    ];
                    arbitrary::object(&members, style)
                });
            prop_oneof![4 => reply, 2 => progress, 1 => request]
        }

        /// `line`, classified as serde does when it is JSON; when not, not unless its own
        /// id says so.
        fn check(line: &[u8]) -> Result<(), TestCaseError> {
            let ours = classify(line);
            if serde_json::from_slice::<Value>(line).is_ok() {
                prop_assert_eq!(ours, by_serde(line), "{}", String::from_utf8_lossy(line));
            } else if let Kind::Reply(n) | Kind::Progress(n) = ours {
                // Some `"mcpmux-N"` in the line names request n, as a direct id reads.
                let named = memchr::memmem::find_iter(line, b"\"mcpmux-").any(|at| {
                    let rest = &line[at + 8..];
                    let end = rest.iter().position(|b| *b == b'"').unwrap_or(rest.len());
                    std::str::from_utf8(&rest[..end])
                        .ok()
                        .and_then(|d| d.parse().ok())
                        == Some(n)
                });
                prop_assert!(named, "{}", String::from_utf8_lossy(line));
            } else {
                prop_assert_eq!(ours, Kind::Other);
            }
            Ok(())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            /// The hand-read shortcuts never tell a line otherwise than serde reads it.
            #[test]
            fn a_line_is_what_serde_reads_it_as(line in line()) {
                prop_assert_eq!(classify(line.as_bytes()), by_serde(line.as_bytes()), "{}", line);
            }

            /// Nor does a line broken anywhere, or noise, while it is JSON. A line that is not
            /// JSON but starts and ends as a reply to request N does is taken as N's reply
            /// without reading its middle (what makes the shortcut short): N's call then fails
            /// on reading it, where serde's way would have left the call waiting for its time
            /// limit (and serde's own probe skips what it does not read, invalid UTF-8 in it
            /// too, so a broken line may be N's progress). Never another request's.
            #[test]
            fn a_broken_line_is_what_serde_reads_it_as(
                line in line(),
                at in any::<usize>(),
                how in any::<u8>(),
            ) {
                let broken = arbitrary::mutated(line.as_bytes(), at, how);
                check(&broken)?;
            }

            #[test]
            fn noise_is_what_serde_reads_it_as(bytes in prop::collection::vec(any::<u8>(), 0..120)) {
                check(&bytes)?;
            }
        }
    }
}
