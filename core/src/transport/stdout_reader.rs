//! A stdio server's stdout, read by whichever thread is woken first.
//!
//! A task of its own reads it on the runtime, and so may a thread that runs an event loop of
//! its own: Python's asyncio or Node's libuv. rmcp's session task only takes what they queue
//! for it (through `StdioTransport::receive`), so a reply to a direct request reaches its
//! caller without waking that task, whose every wake-up polls all of its channels.
//!
//! Such a loop, once it has written a direct request to the server, watches the same pipe and
//! reads it itself, so a reply reaches its caller without first waking a runtime thread that
//! then wakes the loop: one wake-up per call, as a client written for that loop pays. Whoever
//! reads takes the lock, reads what the pipe holds without blocking, hands replies to direct
//! requests to their callers at once and queues every other message for rmcp's session task.
//!
//! While a loop reads the replies its calls wait for, the pipe is taken out of tokio's reactor:
//! otherwise every write of the server would also wake a runtime thread (tokio registers the
//! pipe edge-triggered), which on a small machine competes with the loop and the server for
//! the cores. The runtime then only looks in on a slow tick, and takes the pipe back when
//! others need it (a caller that does not watch it, several calls in flight), when the loop
//! has read nothing for a whole tick (it is busy or gone), or when the loop lets it go.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};

use rmcp::RoleClient;
use rmcp::service::RxJsonRpcMessage;
use tokio::io::unix::AsyncFd;
use tokio::sync::Notify;
use tokio::sync::futures::Notified;

use super::direct::Direct;
use super::env_secrets::EnvSecrets;
use super::limit::MessageLimit;
use super::line_tail::LineTail;
use crate::events::{Event, EventBus};

/// How long the runtime leaves a pipe to the event loop that watches it without looking: the
/// longest a message waits when that loop stops reading.
const WATCHER_GRACE: std::time::Duration = std::time::Duration::from_millis(2);

/// How much is read from the pipe at once.
const CHUNK: usize = 64 * 1024;

/// How many messages may wait for rmcp's session task before reading stops: past that, the
/// rest stays in the pipe (and a server that writes faster than rmcp handles waits on it, as
/// it would with rmcp reading). At most one more chunk's worth is queued.
const QUEUE_MAX: usize = 1024;

/// One stdio session's stdout, read by a task on the runtime and at most one foreign event
/// loop watching it, for rmcp's session task and direct requests' callers.
pub struct StdoutReader {
    /// The pipe in tokio's reactor, while the runtime watches it (see `LeftToLoop`). Declared
    /// before `fd`, so it leaves the reactor before the descriptor closes.
    registration: Mutex<Option<AsyncFd<PipeFd>>>,
    fd: OwnedFd,
    /// Set while the pipe is out of the reactor, left to the watching loop.
    left: Mutex<Option<LeftToLoop>>,
    /// `left` is set: a caller the loop does not serve must wake the runtime's reader to take
    /// the pipe back.
    with_loop: AtomicBool,
    /// How many reads found bytes, by anyone: tells a loop that reads from one that is gone.
    reads: AtomicU64,
    state: Mutex<ReadState>,
    /// What rmcp's side has yet to take, in the order it came.
    for_rmcp: Mutex<ForRmcp>,
    /// Wakes rmcp's session task when a message was queued for it.
    queued: Notify,
    /// Wakes the task that reads the pipe on the runtime (`read_on_runtime`): the pipe is
    /// wanted back from a loop, rmcp's side made room in a full queue, or the stream ended.
    runtime_wanted: Notify,
    ended: AtomicBool,
    /// The foreign event loop watching the pipe (0: none), so that only one does.
    watcher: AtomicU64,
    peers: ReaderPeers,
}

/// What the reader hands its lines to and checks them against, beside rmcp.
pub(crate) struct ReaderPeers {
    pub limit: Arc<MessageLimit>,
    pub server_id: Arc<str>,
    pub events: EventBus,
    pub direct: Arc<Direct>,
    /// Kept out of a line reported as not JSON-RPC.
    pub secrets: Arc<EnvSecrets>,
    /// The last lines that were not JSON-RPC, for the report of the server's exit.
    pub noise: Arc<LineTail>,
    /// Dropped with the reader, after its `Drop` read what was left: the report of the exit,
    /// which cannot reach a reader that is going, waits for it instead.
    pub _gone: tokio::sync::oneshot::Sender<()>,
}

impl Drop for StdoutReader {
    /// rmcp drops its transport, and so the reader, as soon as a write to a server that has
    /// exited fails, which may be before anything the server wrote was read: it is read now,
    /// for the report of the exit.
    fn drop(&mut self) {
        self.settle();
    }
}

/// The pipe as tokio sees it: a descriptor owned by the reader.
struct PipeFd(RawFd);

impl AsRawFd for PipeFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

/// The pipe is left to the watching loop: when the runtime looks in next, and what the loop
/// had read by the last look.
struct LeftToLoop {
    look_at: tokio::time::Instant,
    reads: u64,
}

/// What waits for rmcp's session task.
#[derive(Default)]
struct ForRmcp {
    queue: VecDeque<Queued>,
    /// rmcp holds a message it has not finished with: the pool's session layer handles
    /// progress and log messages as they are received, before the next receive.
    handed: bool,
}

/// One thing read, for rmcp's side to take.
#[allow(
    clippy::large_enum_variant,
    reason = "a message is moved to rmcp by value anyway; boxing would add an allocation"
)]
enum Queued {
    Message(RxJsonRpcMessage<RoleClient>),
    /// A line read while rmcp had messages to handle first: anything after a message waits
    /// behind it, so a call's progress and logs are handled before its reply reaches it.
    Line(Vec<u8>),
    End,
}

/// What a read leaves behind: the bytes of the line so far.
struct ReadState {
    chunk: Box<[u8]>,
    line: Vec<u8>,
    /// Set while skipping the rest of an oversized line, with its size so far.
    discarding: Option<u64>,
}

/// Whether the pipe may hold more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pumped {
    /// Everything the pipe held is read: wait until it is readable again.
    Drained,
    /// rmcp's side has as much waiting as it may take: the rest stays in the pipe until it
    /// catches up. A foreign loop stops watching (the pipe stays readable) and lets go.
    Full,
    /// The stream has ended (or the session closed): stop watching it.
    Ended,
}

impl StdoutReader {
    /// Takes over `stdout`, and starts reading it on the runtime; inside a tokio runtime (the
    /// pipe registers with its reactor).
    pub(crate) fn new(stdout: OwnedFd, peers: ReaderPeers) -> std::io::Result<Arc<StdoutReader>> {
        set_nonblocking(stdout.as_raw_fd())?;
        let reader = Arc::new(StdoutReader {
            registration: Mutex::new(Some(register(&stdout)?)),
            fd: stdout,
            left: Mutex::new(None),
            with_loop: AtomicBool::new(false),
            reads: AtomicU64::new(0),
            state: Mutex::new(ReadState {
                chunk: vec![0; CHUNK].into_boxed_slice(),
                line: Vec::new(),
                discarding: None,
            }),
            for_rmcp: Mutex::new(ForRmcp::default()),
            queued: Notify::new(),
            runtime_wanted: Notify::new(),
            ended: AtomicBool::new(false),
            watcher: AtomicU64::new(0),
            peers,
        });
        tokio::spawn(reader.clone().read_on_runtime());
        Ok(reader)
    }

    /// The pipe's file descriptor, for an event loop to watch; open while `self` lives.
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Makes event loop `loop_id` (non-zero) the one that watches this pipe, unless another
    /// already does.
    pub fn claim(&self, loop_id: u64) -> bool {
        self.watcher
            .compare_exchange(0, loop_id, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Event loop `loop_id` no longer watches this pipe (it is gone): another may, and the
    /// runtime takes it back now.
    pub fn release(&self, loop_id: u64) {
        let released = self
            .watcher
            .compare_exchange(loop_id, 0, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if released {
            self.wanted();
        }
    }

    /// Someone the watching loop does not serve waits for the pipe: if it is left to the
    /// loop, the runtime's reader wakes and takes it back.
    pub(crate) fn wanted(&self) {
        // Against `leave`'s store: one of the two sees the other's change.
        std::sync::atomic::fence(Ordering::SeqCst);
        if self.with_loop.load(Ordering::Acquire) {
            self.runtime_wanted.notify_one();
        }
    }

    /// Reads what the pipe holds now, without blocking: replies to direct requests go to their
    /// callers, everything else to rmcp. Any thread may call it, at any time.
    pub fn pump(&self) -> Pumped {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if self.ended.load(Ordering::Acquire) {
            return Pumped::Ended;
        }
        let mut queued = false;
        let outcome = loop {
            if self.lock_queue().queue.len() >= QUEUE_MAX {
                break Pumped::Full;
            }
            let state = &mut *state;
            let n = match read(self.fd(), &mut state.chunk) {
                Ok(0) => break self.end(),
                Ok(n) => {
                    self.reads.fetch_add(1, Ordering::Relaxed);
                    n
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break Pumped::Drained,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.report(format!("reading the server's stdout failed: {e}"));
                    break self.end();
                }
            };
            if let Err(ended) = self.take_lines(state, n, &mut queued) {
                break ended;
            }
            // A short read emptied the pipe: a later write is a new readiness edge.
            if n < state.chunk.len() {
                break Pumped::Drained;
            }
        };
        drop(state);
        if queued || outcome == Pumped::Ended {
            self.queued.notify_one();
        }
        outcome
    }

    /// Once the server has exited (or the reader goes): reads what is left in the pipe,
    /// without waiting, and reads now the lines queued for rmcp, which may have stopped
    /// taking them, so that what the server wrote that is not JSON-RPC is reported and kept
    /// for the report of its exit. JSON-RPC lines stay queued, in order.
    pub(crate) fn settle(&self) {
        if self.ended.load(Ordering::Acquire) {
            self.read_leftovers();
        } else {
            self.pump();
        }
        self.lock_queue()
            .queue
            .retain(|queued| !matches!(queued, Queued::Line(line) if self.parse(line).is_none()));
    }

    /// What the server wrote that nobody read once rmcp closed the stream (it closes it when
    /// a write fails, which to a server that exited as it started may come before any read),
    /// up to [`CHUNK`] bytes: read only for the lines that are not JSON-RPC in it.
    fn read_leftovers(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let state = &mut *state;
        if state.discarding.is_some() {
            return;
        }
        let n = read(self.fd(), &mut state.chunk).unwrap_or(0);
        let mut rest = &state.chunk[..n];
        while !rest.is_empty() {
            let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
            state.line.extend_from_slice(&rest[..end]);
            rest = &rest[(end + 1).min(rest.len())..];
            self.parse(&state.line);
            state.line.clear();
        }
    }

    /// Splits the `n` bytes just read into lines and hands each on.
    fn take_lines(&self, state: &mut ReadState, n: usize, queued: &mut bool) -> Result<(), Pumped> {
        let mut rest = &state.chunk[..n];
        while !rest.is_empty() {
            let (body, complete) = match memchr::memchr(b'\n', rest) {
                Some(pos) => (&rest[..pos], true),
                None => (rest, false),
            };
            rest = &rest[(body.len() + usize::from(complete))..];
            match &mut state.discarding {
                Some(size) => *size += body.len() as u64,
                None if state.line.len() + body.len() > self.peers.limit.max() => {
                    state.discarding = Some((state.line.len() + body.len()) as u64);
                    state.line = Vec::new();
                }
                None => state.line.extend_from_slice(body),
            }
            if !complete {
                break;
            }
            if let Some(size) = state.discarding.take() {
                // Whatever request it answered would wait forever: end the session instead,
                // so callers fail now (told why) and the pool reconnects.
                self.peers.limit.exceeded(Some(size));
                self.report(format!(
                    "server sent a message of {size} bytes, larger than {} bytes (the pool \
                     option maxMessageBytes); closing the connection",
                    self.peers.limit.max()
                ));
                return Err(self.end());
            }
            let mut for_rmcp = self.lock_queue();
            if for_rmcp.handed || !for_rmcp.queue.is_empty() {
                let line = std::mem::take(&mut state.line);
                for_rmcp.queue.push_back(Queued::Line(line));
                *queued = true;
                continue;
            }
            drop(for_rmcp);
            if !self.peers.direct.deliver(&mut state.line)
                && let Some(msg) = self.parse(&state.line)
            {
                self.lock_queue().queue.push_back(Queued::Message(msg));
                *queued = true;
            }
            state.line.clear();
        }
        Ok(())
    }

    /// The next message for rmcp, waiting for one; `None` once the stream has ended.
    /// Cancel-safe: rmcp polls it inside `select!`, and all state lives in `self`.
    pub(crate) async fn next_message(&self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let notified = self.queued.notified();
        tokio::pin!(notified);
        // Polled by hand: as nested `async` blocks, the future is too deep for rustc to lay out
        // inside rmcp's service loop and `mcpmux serve`.
        std::future::poll_fn(|cx| self.poll_next(cx, notified.as_mut())).await
    }

    fn poll_next<'a>(
        &'a self,
        cx: &mut Context<'_>,
        mut notified: Pin<&mut Notified<'a>>,
    ) -> Poll<Option<RxJsonRpcMessage<RoleClient>>> {
        loop {
            // Listening before looking, so a message queued in between still wakes us.
            notified.as_mut().enable();
            if let Some(next) = self.take_queued() {
                return Poll::Ready(next);
            }
            if self.ended.load(Ordering::Acquire) {
                return Poll::Ready(None);
            }
            match notified.as_mut().poll(cx) {
                Poll::Ready(()) => notified.set(self.queued.notified()),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Reads the pipe on the runtime until the stream ends: whenever it is readable and no
    /// event loop watches it, or when a loop that does stops reading.
    async fn read_on_runtime(self: Arc<Self>) {
        let notified = self.runtime_wanted.notified();
        tokio::pin!(notified);
        let mut look = None;
        std::future::poll_fn(|cx| self.poll_runtime(cx, notified.as_mut(), &mut look)).await
    }

    fn poll_runtime<'a>(
        &'a self,
        cx: &mut Context<'_>,
        mut notified: Pin<&mut Notified<'a>>,
        look: &mut Option<Pin<Box<tokio::time::Sleep>>>,
    ) -> Poll<()> {
        loop {
            // Listening before looking, so a wish that comes in between still wakes us.
            notified.as_mut().enable();
            if self.ended.load(Ordering::Acquire) {
                return Poll::Ready(());
            }
            let watched = match self.poll_left(cx, look) {
                Some(Poll::Ready(())) => continue,
                Some(Poll::Pending) => false,
                None => self.poll_registered(cx),
            };
            if watched {
                continue;
            }
            match notified.as_mut().poll(cx) {
                Poll::Ready(()) => notified.set(self.runtime_wanted.notified()),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// While the pipe is left to the loop: `None` once the runtime has taken it back (or it was
    /// never left), else whether the look-in is due (and done).
    fn poll_left(
        &self,
        cx: &mut Context<'_>,
        look: &mut Option<Pin<Box<tokio::time::Sleep>>>,
    ) -> Option<Poll<()>> {
        let mut left = self.left.lock().unwrap_or_else(|e| e.into_inner());
        let state = left.as_mut()?;
        if !self.leave_to_watcher() {
            drop(left);
            self.take_back();
            *look = None;
            return None;
        }
        let sleep = look.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(state.look_at)));
        if sleep.deadline() != state.look_at {
            sleep.as_mut().reset(state.look_at);
        }
        if sleep.as_mut().poll(cx).is_pending() {
            return Some(Poll::Pending);
        }
        let reads = self.reads.load(Ordering::Relaxed);
        if reads != state.reads {
            // The loop is reading: look in again later.
            state.reads = reads;
            state.look_at = tokio::time::Instant::now() + WATCHER_GRACE;
            return Some(Poll::Ready(()));
        }
        // Nothing read for a whole look: the loop is busy, gone or idle. Whatever the pipe
        // holds is read here, and the runtime watches it again.
        drop(left);
        self.take_back();
        *look = None;
        self.pump();
        Some(Poll::Ready(()))
    }

    /// The runtime watches the pipe: reads what it holds, or leaves it to the watching loop.
    /// Whether to look again at once.
    fn poll_registered(&self, cx: &mut Context<'_>) -> bool {
        let mut registration = self.registration.lock().unwrap_or_else(|e| e.into_inner());
        let Some(fd) = registration.as_ref() else {
            drop(registration);
            self.take_back();
            return true;
        };
        match fd.poll_read_ready(cx) {
            // Left to the loop, out of the reactor: the look-in's timer wakes us, and so does
            // a message the loop queues or a caller that needs the runtime to read.
            Poll::Ready(Ok(_)) if self.leave_to_watcher() => {
                *registration = None;
                drop(registration);
                self.leave();
                true
            }
            Poll::Ready(Ok(mut guard)) => match self.pump() {
                Pumped::Drained => {
                    guard.clear_ready();
                    true
                }
                // rmcp's side takes what waits first, and wakes us when there is room.
                Pumped::Full => false,
                Pumped::Ended => true,
            },
            Poll::Ready(Err(e)) => {
                drop(registration);
                self.report(format!("watching the server's stdout failed: {e}"));
                self.close();
                true
            }
            Poll::Pending => false,
        }
    }

    /// Whether to leave the pipe to the event loop that watches it, for now: it reads what
    /// comes in its next turn, and the replies it waits for reach it with no hand-over. Not
    /// when a reply is awaited by anyone else or many are awaited.
    fn leave_to_watcher(&self) -> bool {
        self.watcher.load(Ordering::Acquire) != 0 && !self.peers.direct.replies_for_runtime()
    }

    /// Leaves the pipe to the loop until the next look-in.
    fn leave(&self) {
        let mut left = self.left.lock().unwrap_or_else(|e| e.into_inner());
        *left = Some(LeftToLoop {
            look_at: tokio::time::Instant::now() + WATCHER_GRACE,
            reads: self.reads.load(Ordering::Relaxed),
        });
        self.with_loop.store(true, Ordering::Release);
        // Against `wanted`: a caller that came meanwhile is seen by the next look, or wakes it.
        std::sync::atomic::fence(Ordering::SeqCst);
    }

    /// Puts the pipe back in the reactor (which reports it readable at once if it holds
    /// bytes), unless it is there.
    fn take_back(&self) {
        let mut left = self.left.lock().unwrap_or_else(|e| e.into_inner());
        *left = None;
        self.with_loop.store(false, Ordering::Release);
        drop(left);
        let mut registration = self.registration.lock().unwrap_or_else(|e| e.into_inner());
        if registration.is_some() {
            return;
        }
        match register(&self.fd) {
            Ok(fd) => *registration = Some(fd),
            Err(e) => {
                drop(registration);
                self.report(format!("watching the server's stdout failed: {e}"));
                self.close();
            }
        }
    }

    /// The next queued thing for rmcp, if any: `Some(None)` is the end. Called by rmcp's side
    /// only, which has finished with the last message it took when it asks for another.
    fn take_queued(&self) -> Option<Option<RxJsonRpcMessage<RoleClient>>> {
        loop {
            let mut for_rmcp = self.lock_queue();
            for_rmcp.handed = false;
            let next = for_rmcp.queue.pop_front()?;
            if for_rmcp.queue.len() + 1 == QUEUE_MAX {
                // The reader stopped at a full queue: there is room now.
                self.runtime_wanted.notify_one();
            }
            match next {
                Queued::End => return Some(None),
                Queued::Message(msg) => {
                    for_rmcp.handed = true;
                    return Some(Some(msg));
                }
                Queued::Line(mut line) => {
                    // Handled with the queue held: nothing read later can overtake it.
                    if self.peers.direct.deliver(&mut line) {
                        continue;
                    }
                    if let Some(msg) = self.parse(&line) {
                        for_rmcp.handed = true;
                        return Some(Some(msg));
                    }
                }
            }
        }
    }

    fn lock_queue(&self) -> std::sync::MutexGuard<'_, ForRmcp> {
        self.for_rmcp.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The stream is over: direct callers stop waiting and rmcp is told. Under the state lock.
    fn end(&self) -> Pumped {
        if !self.ended.swap(true, Ordering::AcqRel) {
            self.peers.direct.close();
            self.lock_queue().queue.push_back(Queued::End);
            // The runtime's reader stops, and lets go of the reader.
            self.runtime_wanted.notify_one();
        }
        Pumped::Ended
    }

    /// Ends the stream from rmcp's side (the transport closed or dropped).
    pub(crate) fn close(&self) {
        let _state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.end();
    }

    fn report(&self, message: String) {
        tracing::warn!(server_id = %self.peers.server_id, "{message}");
        self.peers.events.emit(Event::Log {
            server_id: self.peers.server_id.to_string(),
            level: "error".into(),
            source: "transport".into(),
            message,
        });
    }

    fn parse(&self, line: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        match serde_json::from_slice(line) {
            Ok(msg) => Some(msg),
            Err(e) => {
                let shown = self.peers.secrets.shown(line, 200);
                self.peers.noise.keep(&shown);
                self.report(format!(
                    "server wrote a line that is not JSON-RPC ({e}): {shown}"
                ));
                None
            }
        }
    }
}

/// The pipe in the runtime's reactor (inside a tokio runtime).
fn register(fd: &OwnedFd) -> std::io::Result<AsyncFd<PipeFd>> {
    let pipe = PipeFd(fd.as_raw_fd());
    // SAFETY: the descriptor is the reader's own `fd`, which stays open and unchanged until
    // the reader drops, after its registration (field order; `take_back` only replaces an
    // empty registration).
    unsafe { AsyncFd::register_with_interest(pipe, tokio::io::Interest::READABLE) }
        .map_err(|e| e.into_parts().1)
}

/// One `read(2)`: the pipe is not a `File`, and `OwnedFd` has no `Read`.
fn read(fd: RawFd, buf: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: `buf` is valid for `buf.len()` bytes and `fd` is open while the reader lives.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(n as usize)
}

fn set_nonblocking(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl on a descriptor this process owns; no memory is passed.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The readers a thread noted while it collects them: for the event loop `loop_id`.
struct Noted {
    loop_id: u64,
    readers: Vec<Arc<StdoutReader>>,
}

thread_local! {
    /// Where this thread notes the readers it sent direct requests to, while it collects them.
    static NOTED: RefCell<Option<Noted>> = const { RefCell::new(None) };
}

/// Runs `f` for event loop `loop_id` (non-zero) and returns, beside its result, the stdout
/// readers of stdio sessions that `f` sent a direct request to and that no event loop watches
/// yet: what the loop, polling a call on its own thread, then watches (see
/// [`StdoutReader::claim`]). Requests `f` sends to a session this loop watches are left for
/// the loop to read their replies.
pub fn noting_readers<R>(loop_id: u64, f: impl FnOnce() -> R) -> (R, Vec<Arc<StdoutReader>>) {
    let fresh = Noted {
        loop_id,
        readers: Vec::new(),
    };
    let outer = NOTED.with_borrow_mut(|n| n.replace(fresh));
    let result = f();
    let noted = NOTED.with_borrow_mut(|n| std::mem::replace(n, outer));
    (result, noted.map(|n| n.readers).unwrap_or_default())
}

/// Notes `reader` for [`noting_readers`] when this thread collects and nobody watches it
/// yet. Whether this thread's loop is the one that watches it (and reads the reply).
pub(crate) fn note(reader: &Weak<StdoutReader>) -> bool {
    NOTED.with_borrow_mut(|n| {
        let Some(noted) = n else { return false };
        let Some(reader) = reader.upgrade() else {
            return false;
        };
        match reader.watcher.load(Ordering::Acquire) {
            0 => {
                if !noted.readers.iter().any(|r| Arc::ptr_eq(r, &reader)) {
                    noted.readers.push(reader);
                }
                false
            }
            id => id == noted.loop_id,
        }
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::sync::Arc;

    use super::{Pumped, ReaderPeers, StdoutReader};
    use crate::events::EventBus;
    use crate::transport::direct::Direct;
    use crate::transport::limit::MessageLimit;

    /// A reader over a fresh pipe, and the pipe's write end.
    fn reader(max: usize) -> (Arc<StdoutReader>, std::fs::File) {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both descriptors were just made and are owned only here.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let direct = Direct::new(Arc::new(tokio::sync::Mutex::new(None)));
        let limit = Arc::new(MessageLimit::new(max));
        let peers = ReaderPeers {
            limit,
            server_id: "s".into(),
            events: EventBus::new(16),
            direct: direct.clone(),
            secrets: Default::default(),
            noise: Default::default(),
            _gone: tokio::sync::oneshot::channel().0,
        };
        let reader = StdoutReader::new(read, peers).unwrap();
        direct.read_by(&reader);
        (reader, std::fs::File::from(write))
    }

    /// rmcp's side, waiting for one message: whether it came.
    fn takes_one(reader: &Arc<StdoutReader>) -> tokio::task::JoinHandle<bool> {
        let reader = reader.clone();
        tokio::spawn(async move { reader.next_message().await.is_some() })
    }

    /// rmcp's side, taking messages to the end of the stream: how many came.
    fn counts_all(reader: &Arc<StdoutReader>) -> tokio::task::JoinHandle<usize> {
        let reader = reader.clone();
        tokio::spawn(async move {
            let mut n = 0;
            while reader.next_message().await.is_some() {
                n += 1;
            }
            n
        })
    }

    const NOTE: &str = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;

    #[tokio::test]
    async fn lines_are_whole_messages_however_the_reads_split_them() {
        let (reader, mut pipe) = reader(1024);
        let (head, tail) = NOTE.split_at(20);
        pipe.write_all(head.as_bytes()).unwrap();
        assert_eq!(reader.pump(), Pumped::Drained);
        assert!(reader.take_queued().is_none(), "half a line is no message");
        write!(pipe, "{tail}\n\n{NOTE}\r\nnot json\n").unwrap();
        assert_eq!(reader.pump(), Pumped::Drained);
        // Two messages (a blank line and a line that is not JSON-RPC are no messages).
        assert!(matches!(reader.take_queued(), Some(Some(_))));
        assert!(matches!(reader.take_queued(), Some(Some(_))));
        assert!(reader.take_queued().is_none());
        drop(pipe);
        assert_eq!(reader.pump(), Pumped::Ended);
        assert!(matches!(reader.take_queued(), Some(None)), "then the end");
        assert_eq!(reader.pump(), Pumped::Ended);
    }

    #[tokio::test]
    async fn a_line_over_the_limit_ends_the_stream() {
        let (reader, mut pipe) = reader(64);
        writeln!(pipe, "{NOTE}").unwrap();
        writeln!(pipe, "{}", "x".repeat(100)).unwrap();
        assert_eq!(reader.pump(), Pumped::Ended);
        assert!(matches!(reader.take_queued(), Some(Some(_))));
        assert!(matches!(reader.take_queued(), Some(None)));
    }

    #[tokio::test]
    async fn rmcp_gets_what_a_watching_loop_read() {
        let (reader, mut pipe) = reader(1024);
        // A loop watches the pipe: the runtime leaves the bytes to it for a moment.
        assert!(reader.claim(7));
        assert!(!reader.claim(8), "one loop watches a pipe");
        let waiting = takes_one(&reader);
        writeln!(pipe, "{NOTE}").unwrap();
        let pumped = std::thread::spawn({
            let reader = reader.clone();
            move || reader.pump()
        });
        assert_eq!(pumped.join().unwrap(), Pumped::Drained);
        assert!(waiting.await.unwrap());
        reader.release(7);
        assert!(reader.claim(8), "released, another may watch");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_watching_loop_that_reads_nothing_loses_the_pipe_to_the_runtime() {
        let (reader, mut pipe) = reader(1024);
        assert!(reader.claim(7));
        let waiting = takes_one(&reader);
        writeln!(pipe, "{NOTE}").unwrap();
        // The loop never reads (it is busy or gone without letting go): the runtime looks in.
        let got = tokio::time::timeout(std::time::Duration::from_secs(10), waiting).await;
        assert!(got.expect("rmcp got the message").unwrap());
        assert!(!reader.with_loop.load(std::sync::atomic::Ordering::Acquire));
        assert!(
            reader.registration.lock().unwrap().is_some(),
            "back in the reactor"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_loop_that_lets_go_hands_the_pipe_back() {
        use std::sync::atomic::Ordering;
        let (reader, mut pipe) = reader(1024);
        assert!(reader.claim(7));
        let counting = counts_all(&reader);
        // The loop reads what comes, and the runtime leaves the pipe to it.
        let mut written = 0;
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !reader.with_loop.load(Ordering::Acquire) {
            assert!(
                std::time::Instant::now() < until,
                "the pipe was never left to the loop"
            );
            writeln!(pipe, "{NOTE}").unwrap();
            written += 1;
            reader.pump();
            tokio::time::sleep(std::time::Duration::from_micros(100)).await;
        }
        assert!(
            reader.registration.lock().unwrap().is_none(),
            "out of the reactor"
        );
        // Let go: the runtime reads the rest.
        reader.release(7);
        writeln!(pipe, "{NOTE}").unwrap();
        drop(pipe);
        let got = tokio::time::timeout(std::time::Duration::from_secs(10), counting).await;
        assert_eq!(got.expect("rmcp read to the end").unwrap(), written + 1);
        assert!(!reader.with_loop.load(Ordering::Acquire));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_loop_reads_no_more_than_rmcp_may_have_waiting() {
        use super::{CHUNK, QUEUE_MAX};
        let (reader, mut pipe) = reader(1024);
        let total = QUEUE_MAX + 500;
        // A server that writes faster than rmcp takes; it waits on the pipe when it is full.
        std::thread::spawn(move || {
            for _ in 0..total {
                writeln!(pipe, "{NOTE}").unwrap();
            }
        });
        // A loop reads as it comes, until rmcp's side has all it may take.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match reader.pump() {
                Pumped::Full => break,
                Pumped::Drained => {
                    assert!(std::time::Instant::now() < until, "never full");
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                Pumped::Ended => panic!("ended before it was full"),
            }
        }
        let waiting = reader.lock_queue().queue.len();
        assert!(waiting >= QUEUE_MAX, "{waiting}");
        assert!(waiting <= QUEUE_MAX + CHUNK / NOTE.len(), "{waiting}");
        assert_eq!(
            reader.pump(),
            Pumped::Full,
            "nothing more is read while full"
        );
        assert_eq!(reader.lock_queue().queue.len(), waiting);
        // rmcp's side takes every message, and the runtime reads the rest as room is made.
        let counting = counts_all(&reader);
        let got = tokio::time::timeout(std::time::Duration::from_secs(10), counting).await;
        assert_eq!(got.expect("rmcp read to the end").unwrap(), total);
    }
}
