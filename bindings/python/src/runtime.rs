//! The tokio runtime behind every awaitable the module returns, rebuilt in a forked child.
//!
//! pyo3-async-runtimes' own tokio runtime lives in a `OnceLock`: after `fork()` the child keeps
//! a runtime whose worker threads do not exist, and every call hangs. This runtime is keyed by
//! process id instead, so the first call in a child builds a fresh one. The stale one is leaked
//! on purpose: dropping it would wait for threads that only exist in the parent.

use std::cell::OnceCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3_async_runtimes::TaskLocals;
use pyo3_async_runtimes::generic::{ContextExt, Runtime as AsyncRuntime};
use tokio::runtime::Runtime;

static RUNTIME: AtomicPtr<Runtime> = AtomicPtr::new(std::ptr::null_mut());
static RUNTIME_PID: AtomicU32 = AtomicU32::new(0);
static BUILDING: Mutex<()> = Mutex::new(());

/// False once the interpreter is shutting down. Attaching to Python from a runtime thread
/// while the main thread finalizes the interpreter crashes it.
static PYTHON_ALIVE: AtomicBool = AtomicBool::new(true);
/// Held (shared) by every attach in progress, so that the `atexit` hook can wait for them.
static ATTACHING: RwLock<()> = RwLock::new(());

/// Runs `f` attached to Python, unless the interpreter is shutting down.
pub fn attach<R>(f: impl FnOnce(Python<'_>) -> R) -> Option<R> {
    let _attaching = ATTACHING.read().unwrap_or_else(|e| e.into_inner());
    if !PYTHON_ALIVE.load(Ordering::Acquire) {
        return None;
    }
    Some(Python::attach(f))
}

/// Registered with `atexit`: no runtime thread touches Python after it returns.
#[pyfunction]
pub fn _interpreter_exiting(py: Python<'_>) {
    PYTHON_ALIVE.store(false, Ordering::Release);
    // Attaches in progress need the GIL to finish: release it while waiting for them. The
    // wait is bounded because a fork can leave the lock held by a thread of the parent.
    py.detach(|| {
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while ATTACHING.try_write().is_err() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}

tokio::task_local! {
    static TASK_LOCALS: OnceCell<TaskLocals>;
}

/// This process's id, cached: `getpid` is a system call, and the hot path asks several times
/// per call. A forked child clears the cache (`pthread_atfork`, registered at import).
static PID: AtomicU32 = AtomicU32::new(0);

#[cfg(unix)]
extern "C" fn forked_child() {
    PID.store(0, Ordering::Relaxed);
}

/// Registers the fork handler that keeps `pid()` right; called once when the module loads.
pub fn watch_forks() {
    #[cfg(unix)]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        ONCE.call_once(|| unsafe {
            libc::pthread_atfork(None, None, Some(forked_child));
        });
    }
}

/// The id of this process.
pub fn pid() -> u32 {
    #[cfg(unix)]
    {
        let cached = PID.load(Ordering::Relaxed);
        if cached != 0 {
            return cached;
        }
        let pid = std::process::id();
        PID.store(pid, Ordering::Relaxed);
        pid
    }
    #[cfg(not(unix))]
    {
        std::process::id()
    }
}

/// The runtime of this process.
pub fn runtime() -> &'static Runtime {
    let pid = pid();
    if RUNTIME_PID.load(Ordering::Acquire) == pid {
        // SAFETY: the pointer was published with this pid by `build` below and is never freed.
        return unsafe { &*RUNTIME.load(Ordering::Acquire) };
    }
    let _building = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    if RUNTIME_PID.load(Ordering::Acquire) != pid {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(2)
                    .clamp(1, 4),
            )
            // Results are handed to Python from blocking threads; a few suffice, and idle
            // ones go away soon so that a closed pool leaves no threads behind for long.
            .max_blocking_threads(16)
            .thread_keep_alive(Duration::from_millis(500))
            .thread_name("mcpmux")
            .enable_all()
            .build()
            .expect("cannot start the tokio runtime");
        RUNTIME.store(Box::into_raw(Box::new(rt)), Ordering::Release);
        RUNTIME_PID.store(pid, Ordering::Release);
    }
    // SAFETY: as above.
    unsafe { &*RUNTIME.load(Ordering::Acquire) }
}

/// The process-aware runtime, as pyo3-async-runtimes sees it.
pub struct MuxRuntime;

impl AsyncRuntime for MuxRuntime {
    type JoinError = tokio::task::JoinError;
    type JoinHandle = tokio::task::JoinHandle<()>;

    fn spawn<F>(fut: F) -> Self::JoinHandle
    where
        F: Future<Output = ()> + Send + 'static,
    {
        runtime().spawn(fut)
    }

    fn spawn_blocking<F>(f: F) -> Self::JoinHandle
    where
        F: FnOnce() + Send + 'static,
    {
        // pyo3-async-runtimes hands results to Python from these closures.
        runtime().spawn_blocking(move || {
            let _attaching = ATTACHING.read().unwrap_or_else(|e| e.into_inner());
            if PYTHON_ALIVE.load(Ordering::Acquire) {
                f();
            }
        })
    }
}

impl ContextExt for MuxRuntime {
    fn scope<F, R>(locals: TaskLocals, fut: F) -> Pin<Box<dyn Future<Output = R> + Send>>
    where
        F: Future<Output = R> + Send + 'static,
    {
        let cell = OnceCell::new();
        let _ = cell.set(locals);
        Box::pin(TASK_LOCALS.scope(cell, fut))
    }

    fn get_task_locals() -> Option<TaskLocals> {
        TASK_LOCALS.try_with(|c| c.get().cloned()).ok().flatten()
    }
}

/// What a finished call hands to the event loop's thread: builds the Python result there.
pub type Deliver = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;

/// A future whose outcome is delivered to Python.
pub type BoxFuture = Pin<Box<dyn Future<Output = Deliver> + Send>>;

/// A `Deliver` run when pyo3-async-runtimes converts the result.
pub struct Delivered(pub Deliver);

impl<'py> IntoPyObject<'py> for Delivered {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        (self.0)(py).map(|v| v.into_bound(py))
    }
}

/// Turns a Rust future into an asyncio awaitable of the running loop, run as a tokio task and
/// completed through the loop's completer (see `completion`). Cancelling the awaitable drops
/// the Rust future.
pub fn awaitable<F, T>(py: Python<'_>, fut: F) -> PyResult<Bound<'_, PyAny>>
where
    F: Future<Output = PyResult<T>> + Send + 'static,
    T: for<'py> IntoPyObject<'py> + Send + 'static,
{
    #[cfg(unix)]
    {
        crate::completion::future_on_runtime(
            py,
            Box::pin(async move {
                let result = fut.await;
                Box::new(move |py: Python<'_>| {
                    result.and_then(|v| pyo3::IntoPyObjectExt::into_py_any(v, py))
                }) as Deliver
            }),
        )
    }
    #[cfg(not(unix))]
    {
        legacy_awaitable(py, fut)
    }
}

/// pyo3-async-runtimes' awaitable: each result is handed to Python from a blocking thread.
/// For loops that cannot watch a file descriptor.
pub fn legacy_awaitable<F, T>(py: Python<'_>, fut: F) -> PyResult<Bound<'_, PyAny>>
where
    F: Future<Output = PyResult<T>> + Send + 'static,
    T: for<'py> IntoPyObject<'py> + Send + 'static,
{
    pyo3_async_runtimes::generic::future_into_py::<MuxRuntime, _, T>(py, fut)
}

/// The event loop running on this thread (or of the current task).
pub fn running_loop(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    pyo3_async_runtimes::generic::get_current_loop::<MuxRuntime>(py)
}

/// A value holding a pool clone: dropped inside the runtime's context (connections stop their
/// tasks on drop), and never in a forked child (its connections are the parent's).
pub struct InRuntime<T> {
    value: std::mem::ManuallyDrop<T>,
    pid: u32,
}

impl<T> InRuntime<T> {
    pub fn new(value: T) -> Self {
        InRuntime {
            value: std::mem::ManuallyDrop::new(value),
            pid: pid(),
        }
    }
}

impl<T> std::ops::Deref for InRuntime<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> Drop for InRuntime<T> {
    fn drop(&mut self) {
        if self.pid == pid() {
            let _ctx = runtime().enter();
            // SAFETY: dropped once, here, and never used again.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.value) };
        }
    }
}
