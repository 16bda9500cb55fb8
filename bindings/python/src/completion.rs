//! Awaitables completed through one wake-up channel per event loop.
//!
//! Every awaitable the module returns is a plain `asyncio.Future` of the running loop. What
//! finishes it never touches Python from a tokio thread: each loop gets one `Completer`, a
//! queue of calls ready to make progress plus a socket pair whose read end the loop watches
//! (`loop.add_reader`, registered once). A tokio thread that completes a call (or wakes one)
//! pushes it on the queue and writes one byte, and only if no byte is pending: 32 calls
//! finishing together cost one wake-up of the loop. The loop thread then drains the queue,
//! builds the Python results and sets them, already holding the GIL.
//!
//! A call runs one of two ways:
//! - *on the loop* ([`future_on_loop`]): the Rust future is polled on the loop thread (with
//!   the GIL released) when it is created and whenever its waker fires. A tool call sends its
//!   request from the caller's thread, with no task to spawn and no thread to wake first.
//! - *on the runtime* ([`future_on_runtime`]): the future runs as a tokio task and only its
//!   outcome comes back through the queue. For futures that may do slow synchronous work.
//!
//! A call polled on the loop that writes to a stdio server has the loop watch that server's
//! stdout too (`loop.add_reader` on the pipe; one loop per server, the first to call it): the
//! loop then reads the reply itself and completes the call in the same turn, where the
//! runtime's reader would wake, read, and wake the loop through the socket. The runtime's
//! reader still serves every other loop and thread, and this one while it is busy.
//!
//! Cancelling the asyncio future (the task awaiting it being cancelled) drops the Rust
//! future, which is how the core learns that a call was cancelled. Loops where `add_reader`
//! is missing (Windows' proactor loop) and non-Unix platforms use pyo3-async-runtimes instead.

use std::cell::RefCell;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll, Wake, Waker};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

use mcpmux::event_loop::{Pumped, StdoutReader, noting_readers};

use crate::runtime::{BoxFuture, Deliver, Delivered, runtime};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One event loop's queue of calls to run, and the socket pair that wakes the loop.
struct Completer {
    /// The process that made it: a forked child gets its own.
    pid: u32,
    ready: Mutex<Vec<Arc<Call>>>,
    /// A byte is on its way (or unread): no need to write another.
    signalled: AtomicBool,
    tx: UnixStream,
    rx: UnixStream,
    /// Stdio servers this loop's calls wrote to, not yet watched by any loop.
    to_watch: Mutex<Vec<Arc<StdoutReader>>>,
    /// The servers this loop watches, given back to other loops when this one is gone.
    watching: Mutex<Vec<Weak<StdoutReader>>>,
}

impl Drop for Completer {
    fn drop(&mut self) {
        let id = self as *const Completer as u64;
        for reader in lock(&self.watching).drain(..) {
            if let Some(reader) = reader.upgrade() {
                reader.release(id);
            }
        }
    }
}

impl Completer {
    fn new() -> std::io::Result<Completer> {
        let (tx, rx) = UnixStream::pair()?;
        tx.set_nonblocking(true)?;
        rx.set_nonblocking(true)?;
        Ok(Completer {
            pid: crate::runtime::pid(),
            ready: Mutex::new(Vec::new()),
            signalled: AtomicBool::new(false),
            tx,
            rx,
            to_watch: Mutex::new(Vec::new()),
            watching: Mutex::new(Vec::new()),
        })
    }

    /// This loop's id among the loops that may watch a server's stdout.
    fn loop_id(self: &Arc<Self>) -> u64 {
        Arc::as_ptr(self) as u64
    }

    /// Watches the stdout of each server noted since the last time, unless another loop
    /// does: its replies are then read on this thread, as they arrive. On the loop thread.
    fn watch_noted(self: &Arc<Self>, py: Python<'_>) {
        let noted = std::mem::take(&mut *lock(&self.to_watch));
        if noted.is_empty() {
            return;
        }
        let Ok(event_loop) = running_loop(py) else {
            return;
        };
        for reader in noted {
            if !reader.claim(self.loop_id()) {
                continue;
            }
            let fd = reader.fd();
            let mut watching = lock(&self.watching);
            watching.retain(|r| r.strong_count() > 0);
            watching.push(Arc::downgrade(&reader));
            drop(watching);
            let watcher = Watcher {
                reader: reader.clone(),
                completer: self.clone(),
            };
            if let Err(e) = event_loop.call_method1(intern!(py, "add_reader"), (fd, watcher)) {
                // The runtime's reader still serves the server; only the shortcut is lost.
                reader.release(self.loop_id());
                e.write_unraisable(py, Some(&event_loop));
            }
        }
    }

    /// Queues `call` to run on the loop thread; wakes the loop unless a wake-up is pending.
    fn schedule(&self, call: Arc<Call>) {
        lock(&self.ready).push(call);
        if !self.signalled.swap(true, Ordering::AcqRel) {
            // A full buffer (never in practice: one byte per drain) means the loop is awake.
            let _ = (&self.tx).write(&[1]);
        }
    }

    /// Runs on the loop thread when the read end is readable.
    fn drain(self: &Arc<Self>, py: Python<'_>) {
        self.empty_socket();
        self.run_ready(py);
    }

    /// Reads the wake-up bytes, so the socket is not readable again for them.
    fn empty_socket(&self) {
        let mut buf = [0u8; 64];
        while let Ok(n) = (&self.rx).read(&mut buf) {
            if n < buf.len() {
                break;
            }
        }
    }

    /// Runs the calls queued to make progress.
    fn run_ready(self: &Arc<Self>, py: Python<'_>) {
        // Cleared before taking the queue: a call queued after the take writes a new byte.
        self.signalled.store(false, Ordering::SeqCst);
        let calls = std::mem::take(&mut *lock(&self.ready));
        // Every call is advanced in one stretch without the GIL, then the finished ones are
        // delivered with it: one GIL hand-off per batch, not one per call.
        let finished: Vec<_> = py.detach(|| {
            let _ctx = runtime().enter();
            calls
                .into_iter()
                .filter_map(|call| call.advance().map(|deliver| (call, deliver)))
                .collect()
        });
        for (call, deliver) in finished {
            call.deliver(py, deliver);
        }
        self.watch_noted(py);
    }
}

/// The loop's reader callback on a stdio server's stdout: reads the replies there and
/// completes their calls in the same turn of the loop.
#[pyclass(frozen, module = "mcpmux._native")]
struct Watcher {
    reader: Arc<StdoutReader>,
    completer: Arc<Completer>,
}

#[pymethods]
impl Watcher {
    fn __call__(&self, py: Python<'_>) {
        // Calls woken by this read run below: no byte on the socket for them. A byte is only
        // there to read if a runtime thread wrote one before.
        let byte_sent = self.completer.signalled.swap(true, Ordering::SeqCst);
        let pumped = py.detach(|| {
            let _ctx = runtime().enter();
            self.reader.pump()
        });
        if pumped != Pumped::Drained {
            self.stop_watching(py, pumped);
        }
        if byte_sent {
            self.completer.empty_socket();
        }
        self.completer.run_ready(py);
    }
}

impl Watcher {
    /// The stream ended, or rmcp's side has all it may take for now: a pipe that stays
    /// readable would call this again at once. A full one goes back to the runtime, which
    /// reads it at rmcp's pace; a later call of this loop watches it again.
    fn stop_watching(&self, py: Python<'_>, pumped: Pumped) {
        if let Ok(event_loop) = running_loop(py) {
            let _ = event_loop.call_method1(intern!(py, "remove_reader"), (self.reader.fd(),));
        }
        if pumped == Pumped::Full {
            let mut watching = lock(&self.completer.watching);
            watching.retain(|r| !std::ptr::eq(r.as_ptr(), Arc::as_ptr(&self.reader)));
            drop(watching);
            self.reader.release(self.completer.loop_id());
        }
    }
}

/// The loop's reader callback.
#[pyclass(frozen, module = "mcpmux._native")]
struct Drainer {
    completer: Arc<Completer>,
}

#[pymethods]
impl Drainer {
    fn __call__(&self, py: Python<'_>) {
        self.completer.drain(py);
    }
}

enum Work {
    /// Polled on the loop thread.
    Poll(BoxFuture),
    /// Running as a tokio task.
    Running(tokio::task::AbortHandle),
    /// The outcome of a tokio task, to deliver.
    Finished(Deliver),
    /// Delivered or cancelled.
    Gone,
}

struct Slot {
    /// The asyncio future, and the done callback that cancels the call.
    future: Option<(Py<PyAny>, Py<PyAny>)>,
    work: Work,
}

/// One awaitable in progress.
struct Call {
    completer: Arc<Completer>,
    queued: AtomicBool,
    /// Only the loop thread polls or delivers; a tokio task stores its outcome here.
    slot: Mutex<Slot>,
}

impl Wake for Call {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.queued.swap(true, Ordering::AcqRel) {
            self.completer.schedule(self.clone());
        }
    }
}

impl Call {
    /// Polls the future (if it runs on the loop) or takes the task's outcome, and delivers it
    /// once there is one. On the loop thread, attached.
    fn run(self: &Arc<Self>, py: Python<'_>) {
        let finished = py.detach(|| {
            let _ctx = runtime().enter();
            self.advance()
        });
        if let Some(deliver) = finished {
            self.deliver(py, deliver);
        }
        self.completer.watch_noted(py);
    }

    /// Polls the future or takes the task's outcome: `Some` once the call has one. On the loop
    /// thread with the GIL released (core code may take locks that a thread waiting for the
    /// GIL holds) and inside the runtime's context (timers, spawned tasks).
    fn advance(self: &Arc<Self>) -> Option<Deliver> {
        // Cleared first: a wake-up during the poll queues the call again.
        self.queued.store(false, Ordering::Release);
        let mut slot = lock(&self.slot);
        match std::mem::replace(&mut slot.work, Work::Gone) {
            Work::Poll(mut future) => {
                let waker = Waker::from(self.clone());
                let mut cx = Context::from_waker(&waker);
                // The servers a poll writes to are noted, for this loop to watch their replies.
                let (polled, noted) = noting_readers(self.completer.loop_id(), || {
                    std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx)))
                });
                if !noted.is_empty() {
                    lock(&self.completer.to_watch).extend(noted);
                }
                match polled {
                    Ok(Poll::Pending) => {
                        slot.work = Work::Poll(future);
                        None
                    }
                    // The finished future may own connections: dropped here, in the runtime.
                    Ok(Poll::Ready(deliver)) => Some(deliver),
                    Err(panic) => Some(panicked(panic)),
                }
            }
            Work::Finished(deliver) => Some(deliver),
            other => {
                slot.work = other;
                None
            }
        }
    }

    /// Sets the outcome on the asyncio future unless it was cancelled. Attached.
    fn deliver(&self, py: Python<'_>, deliver: Deliver) {
        let target = lock(&self.slot).future.take();
        if let Some((future, on_done)) = target {
            deliver_to(py, future.bind(py), on_done.bind(py), deliver);
        }
    }

    /// The asyncio future finished without us: it was cancelled. Stops the Rust side.
    fn cancel(&self, py: Python<'_>) {
        let mut slot = lock(&self.slot);
        let target = slot.future.take();
        let work = std::mem::replace(&mut slot.work, Work::Gone);
        drop(slot);
        drop(target);
        match work {
            Work::Poll(future) => py.detach(|| {
                let _ctx = runtime().enter();
                drop(future);
            }),
            Work::Running(handle) => handle.abort(),
            Work::Finished(_) | Work::Gone => {}
        }
    }
}

fn panicked(panic: Box<dyn std::any::Any + Send>) -> Deliver {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown error".into());
    Box::new(move |_py| {
        Err(pyo3_async_runtimes::err::RustPanic::new_err(format!(
            "rust future panicked: {message}"
        )))
    })
}

/// Sets the result (or exception) `deliver` builds on `future`, unless it was cancelled.
fn deliver_to(
    py: Python<'_>,
    future: &Bound<'_, PyAny>,
    on_done: &Bound<'_, PyAny>,
    deliver: Deliver,
) {
    let outcome = deliver(py);
    // Our own callback would only find nothing to cancel: spare the loop running it. A future
    // that is done already (cancelled) has handed its callbacks to the loop and removes none,
    // which saves asking `done()` first.
    let removed = future
        .call_method1(intern!(py, "remove_done_callback"), (on_done,))
        .and_then(|n| n.extract::<usize>())
        .unwrap_or(0);
    if removed == 0 {
        return;
    }
    let set = match outcome {
        Ok(value) => future.call_method1(intern!(py, "set_result"), (value,)),
        Err(e) => future.call_method1(intern!(py, "set_exception"), (e.into_value(py),)),
    };
    if let Err(e) = set {
        e.write_unraisable(py, Some(future));
    }
}

/// The asyncio future's done callback: cancels the call when the future was cancelled.
#[pyclass(frozen, module = "mcpmux._native")]
struct OnDone {
    call: Arc<Call>,
}

#[pymethods]
impl OnDone {
    fn __call__(&self, py: Python<'_>, _future: &Bound<'_, PyAny>) {
        self.call.cancel(py);
    }
}

/// What a thread keeps of the loop it last used.
struct Current {
    event_loop: Py<PyAny>,
    completer: Arc<Completer>,
    /// `asyncio.Future` with `{"loop": event_loop}` where the loop's `create_future` is
    /// asyncio's own (a Python-level method around the same call); else `create_future`.
    new_future: Py<PyAny>,
    kwargs: Option<Py<PyDict>>,
}

thread_local! {
    static CURRENT: RefCell<Option<Current>> = const { RefCell::new(None) };
}

/// `loop -> Drainer` for every loop with a completer (a `weakref.WeakKeyDictionary`).
static REGISTRY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
/// `asyncio.Future` and `asyncio.BaseEventLoop.create_future`.
static ASYNCIO_FUTURE: PyOnceLock<(Py<PyAny>, Py<PyAny>)> = PyOnceLock::new();

/// `asyncio.get_running_loop()`.
pub fn running_loop(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    GET_RUNNING_LOOP
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("asyncio")?.getattr("get_running_loop")?.unbind())
        })?
        .bind(py)
        .call0()
}

/// The completer of `event_loop` (made and registered with the loop on first use) and a new
/// future of the loop; `None` where the loop cannot watch a file descriptor.
fn completer_for<'py>(
    py: Python<'py>,
    event_loop: &Bound<'py, PyAny>,
) -> PyResult<Option<(Arc<Completer>, Bound<'py, PyAny>)>> {
    let pid = crate::runtime::pid();
    let cached = CURRENT.with_borrow(|c| match c {
        Some(c) if c.event_loop.is(event_loop) && c.completer.pid == pid => Some((
            c.completer.clone(),
            c.new_future.clone_ref(py),
            c.kwargs.as_ref().map(|k| k.clone_ref(py)),
        )),
        _ => None,
    });
    let (completer, new_future, kwargs) = match cached {
        Some(c) => c,
        None => {
            let Some(completer) = registered(py, event_loop, pid) else {
                return Ok(None);
            };
            let (future_type, asyncio_create) = ASYNCIO_FUTURE.get_or_try_init(py, || {
                let asyncio = py.import("asyncio")?;
                Ok::<_, PyErr>((
                    asyncio.getattr("Future")?.unbind(),
                    asyncio
                        .getattr("BaseEventLoop")?
                        .getattr("create_future")?
                        .unbind(),
                ))
            })?;
            let own = event_loop
                .get_type()
                .getattr(intern!(py, "create_future"))
                .map(|f| f.is(asyncio_create.bind(py)))
                .unwrap_or(false);
            let (new_future, kwargs) = if own {
                let kwargs = PyDict::new(py);
                kwargs.set_item(intern!(py, "loop"), event_loop)?;
                (future_type.clone_ref(py), Some(kwargs.unbind()))
            } else {
                (
                    event_loop.getattr(intern!(py, "create_future"))?.unbind(),
                    None,
                )
            };
            let current = Current {
                event_loop: event_loop.clone().unbind(),
                completer: completer.clone(),
                new_future: new_future.clone_ref(py),
                kwargs: kwargs.as_ref().map(|k| k.clone_ref(py)),
            };
            let previous = CURRENT.with_borrow_mut(|c| c.replace(current));
            drop(previous);
            (completer, new_future, kwargs)
        }
    };
    let future = match kwargs {
        Some(kwargs) => new_future.bind(py).call((), Some(kwargs.bind(py)))?,
        None => new_future.bind(py).call0()?,
    };
    Ok(Some((completer, future)))
}

fn registered(py: Python<'_>, event_loop: &Bound<'_, PyAny>, pid: u32) -> Option<Arc<Completer>> {
    let registry = REGISTRY
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(
                py.import("weakref")?
                    .call_method0("WeakKeyDictionary")?
                    .unbind(),
            )
        })
        .ok()?
        .bind(py);
    let existing = registry
        .call_method1(intern!(py, "get"), (event_loop,))
        .ok()
        .and_then(|d| d.cast_into::<Drainer>().ok());
    if let Some(drainer) = &existing {
        let completer = &drainer.get().completer;
        if completer.pid == pid {
            return Some(completer.clone());
        }
        // Made by the parent of this forked process: its socket is shared with the parent.
        let _ = event_loop.call_method1("remove_reader", (completer.rx.as_raw_fd(),));
    }
    let completer = Arc::new(Completer::new().ok()?);
    let fd = completer.rx.as_raw_fd();
    let drainer = Bound::new(
        py,
        Drainer {
            completer: completer.clone(),
        },
    )
    .ok()?;
    // The loop keeps the drainer (and the socket) for as long as it watches the socket: the
    // socket is closed only once the loop has forgotten it.
    event_loop.call_method1("add_reader", (fd, &drainer)).ok()?;
    if registry.set_item(event_loop, &drainer).is_err() {
        let _ = event_loop.call_method1("remove_reader", (fd,));
        return None;
    }
    Some(completer)
}

/// Starts a call on the running loop. `None`: this loop needs the fallback.
#[allow(clippy::type_complexity)]
fn start(
    py: Python<'_>,
    work: impl FnOnce(&Arc<Call>) -> Work,
) -> PyResult<Option<(Bound<'_, PyAny>, Arc<Call>)>> {
    let event_loop = running_loop(py)?;
    let Some((completer, future)) = completer_for(py, &event_loop)? else {
        return Ok(None);
    };
    let call = Arc::new(Call {
        completer,
        queued: AtomicBool::new(false),
        slot: Mutex::new(Slot {
            future: None,
            work: Work::Gone,
        }),
    });
    let on_done = Bound::new(py, OnDone { call: call.clone() })?.into_any();
    future.call_method1(intern!(py, "add_done_callback"), (&on_done,))?;
    {
        let mut slot = lock(&call.slot);
        slot.future = Some((future.clone().unbind(), on_done.unbind()));
        slot.work = work(&call);
    }
    Ok(Some((future, call)))
}

/// An asyncio future of the running loop whose Rust future is polled on the loop thread.
/// The first poll happens here: a call's request goes out before this returns. The future
/// comes boxed: a call's state machine is large, and every move would copy it.
pub fn future_on_loop(py: Python<'_>, fut: BoxFuture) -> PyResult<Bound<'_, PyAny>> {
    let mut fut = Some(fut);
    let started = start(py, |_| Work::Poll(fut.take().expect("taken once")))?;
    match started {
        Some((future, call)) => {
            call.run(py);
            Ok(future)
        }
        None => fallback(py, fut.take().expect("not taken on fallback")),
    }
}

/// An asyncio future of the running loop whose Rust future runs as a tokio task.
pub fn future_on_runtime(py: Python<'_>, fut: BoxFuture) -> PyResult<Bound<'_, PyAny>> {
    let mut fut = Some(fut);
    let started = start(py, |call| {
        let fut = fut.take().expect("taken once");
        let call = call.clone();
        let handle = runtime().spawn(async move {
            let deliver = fut.await;
            let mut slot = lock(&call.slot);
            if let Work::Running(_) = slot.work {
                slot.work = Work::Finished(deliver);
                drop(slot);
                call.wake_by_ref();
            }
        });
        Work::Running(handle.abort_handle())
    })?;
    match started {
        Some((future, _)) => Ok(future),
        None => fallback(py, fut.take().expect("not taken on fallback")),
    }
}

/// pyo3-async-runtimes: a tokio task, its result handed over through a blocking thread.
fn fallback(py: Python<'_>, fut: BoxFuture) -> PyResult<Bound<'_, PyAny>> {
    crate::runtime::legacy_awaitable(py, async move { Ok(Delivered(fut.await)) })
}
