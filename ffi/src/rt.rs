//! The library's one tokio runtime, and how a C thread waits for work on it.
//!
//! The runtime lives in a static and is never dropped: dropping a runtime from one of its
//! own threads panics, and a callback may well be where the last pool gets closed.

use std::cell::Cell;
use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::Runtime;

thread_local! {
    static ON_RUNTIME_THREAD: Cell<bool> = const { Cell::new(false) };
}

pub(crate) fn rt() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("mcpmux-rt")
            .on_thread_start(|| {
                ON_RUNTIME_THREAD.with(|c| c.set(true));
                block_sigpipe();
            })
            .build()
            .expect("mcpmux cannot start its runtime")
    })
}

/// A Rust program ignores SIGPIPE from `main`, but a C host usually does not, and the
/// default action kills the whole process. Writing to the stdin of a server that just died
/// raises it on the writing thread, so the runtime's threads block it: the write then fails
/// with EPIPE, which the connection reports. The host's own threads are left as they are.
fn block_sigpipe() {
    // SAFETY: plain libc calls on a local, zero-initialised signal set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// True on the runtime's own threads, i.e. inside a callback.
pub(crate) fn on_runtime_thread() -> bool {
    ON_RUNTIME_THREAD.with(|c| c.get())
}

/// Runs `fut` on the runtime and waits for it from any thread. On a runtime thread (a
/// callback calling a blocking function) the wait gives the worker's other tasks away
/// first, so the work it waits for can still run.
pub(crate) fn block_on<F>(fut: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    rt().spawn(async move {
        let _ = tx.send(fut.await);
    });
    let received = if on_runtime_thread() {
        tokio::task::block_in_place(|| rx.recv())
    } else {
        rx.recv()
    };
    received.expect("a task of the mcpmux runtime ended without an answer")
}

/// Runs a C callback. The callback may block (on a lock, on I/O, on a blocking call of this
/// API): the worker hands its other tasks to another thread first, so a few slow callbacks
/// never stall the runtime that would let them finish.
pub(crate) fn call_out<R>(f: impl FnOnce() -> R) -> R {
    if on_runtime_thread() {
        tokio::task::block_in_place(f)
    } else {
        f()
    }
}
