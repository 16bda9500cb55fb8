//! Node's own event loop reading a stdio server's replies: a libuv poll handle on its stdout.
//!
//! Otherwise a reply wakes the runtime thread, which reads it and wakes the JS thread through
//! the pool's threadsafe function: two threads woken per call. Once a call polled on the JS
//! thread has written to a stdio server, the loop watches that server's stdout as well; when it
//! is readable the loop reads it itself (`StdoutReader::pump`), which hands each reply to its
//! call and queues the call on the pool's port, settled in the loop's next turn with no other
//! thread woken. One loop per server (the first to call it); the runtime still reads for every
//! other caller, and for this one when the loop is busy for longer than a moment.
//!
//! libuv's functions come from the process (`uv`); where they are missing nothing is watched.
//! The handle does not keep Node alive, and it is closed when the stream ends or the
//! environment is torn down.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use mcpmux::event_loop::{Pumped, StdoutReader};
use napi::{Env, sys};

use crate::uv::{UV_POLL, UV_READABLE, Uv, uv};

/// One watched stdout: the poll handle's memory and what its callback needs.
struct Watch {
    /// A `uv_poll_t`; its first field (`data`) points back at this `Watch`.
    handle: Box<[u64]>,
    reader: Arc<StdoutReader>,
    watcher_id: u64,
    env: sys::napi_env,
    uv: &'static Uv,
}

impl Watch {
    fn handle(&mut self) -> *mut c_void {
        self.handle.as_mut_ptr().cast()
    }
}

/// Has the JS thread of `env` watch `reader` as watcher `watcher_id`, unless another loop
/// already does. On the JS thread.
pub(crate) fn watch(env: &Env, reader: Arc<StdoutReader>, watcher_id: u64) {
    let Some(uv) = uv() else {
        return;
    };
    if !reader.claim(watcher_id) {
        return;
    }
    let mut uv_loop = std::ptr::null_mut();
    // SAFETY: on the JS thread of `env`.
    let status = unsafe { sys::napi_get_uv_event_loop(env.raw(), &mut uv_loop) };
    if status != sys::Status::napi_ok || uv_loop.is_null() {
        reader.release(watcher_id);
        return;
    }
    // SAFETY: plain libuv call.
    let size = unsafe { (uv.handle_size)(UV_POLL) };
    let watch = Box::into_raw(Box::new(Watch {
        handle: vec![0u64; size.div_ceil(8)].into_boxed_slice(),
        reader,
        watcher_id,
        env: env.raw(),
        uv,
    }));
    // SAFETY: `watch` is ours until `on_closed` takes it back; the handle memory lives inside it
    // and is only given to libuv, on the loop's thread (this one).
    unsafe {
        let w = &mut *watch;
        let handle = w.handle();
        *(handle as *mut *mut Watch) = watch;
        let fd = w.reader.fd();
        if (uv.poll_init)(uv_loop, handle, fd) != 0 {
            w.reader.release(watcher_id);
            drop(Box::from_raw(watch));
            return;
        }
        // Initialized: from here on only `uv_close` frees it.
        (uv.unref)(handle);
        if (uv.poll_start)(handle, UV_READABLE, on_readable) != 0 {
            stop(watch);
            return;
        }
        sys::napi_add_env_cleanup_hook(env.raw(), Some(on_teardown), watch.cast());
    }
}

/// libuv: the pipe is readable (or the poll failed).
unsafe extern "C" fn on_readable(handle: *mut c_void, status: c_int, _events: c_int) {
    // SAFETY: the handle's `data` is its `Watch`, alive until `on_closed`.
    let watch = unsafe { *(handle as *mut *mut Watch) };
    let reader = unsafe { &(*watch).reader };
    let pumped = if status < 0 {
        Pumped::Ended
    } else {
        let _entered = crate::runtime().enter();
        // SAFETY: the environment is alive (its loop runs this).
        crate::calls::reading_replies(unsafe { (*watch).env }, || reader.pump())
    };
    // Ended, or rmcp's side has all it may take for now (the pipe stays readable): a full
    // pipe goes back to the runtime, which reads it at rmcp's pace, and a later call of this
    // loop watches it again.
    if pumped != Pumped::Drained {
        // SAFETY: on the loop's thread; the environment is alive (its loop runs this).
        unsafe {
            sys::napi_remove_env_cleanup_hook((*watch).env, Some(on_teardown), watch.cast());
            stop(watch);
        }
    }
}

/// The environment is going away: its loop must not keep the handle.
unsafe extern "C" fn on_teardown(arg: *mut c_void) {
    // SAFETY: `arg` is the `Watch` registered with the hook, not yet closed (closing removes
    // the hook first).
    unsafe { stop(arg.cast()) };
}

/// Stops and closes the handle; the runtime reads the pipe alone again.
unsafe fn stop(watch: *mut Watch) {
    // SAFETY: `watch` is live and its handle initialized; called once per watch.
    unsafe {
        let w = &mut *watch;
        w.reader.release(w.watcher_id);
        let handle = w.handle();
        (w.uv.poll_stop)(handle);
        (w.uv.close)(handle, Some(on_closed));
    }
}

/// libuv is done with the handle: its memory can go.
unsafe extern "C" fn on_closed(handle: *mut c_void) {
    // SAFETY: `data` is the `Box<Watch>` leaked in `watch`; libuv calls this once.
    drop(unsafe { Box::from_raw(*(handle as *mut *mut Watch)) });
}
