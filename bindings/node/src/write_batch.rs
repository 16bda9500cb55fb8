//! Node's loop sends the requests of one turn to each stdio server as one write (core's
//! `write_batch`): the turn ends in a libuv prepare handle, which runs right before the loop
//! waits for I/O. A call made after a reply the loop read is the first of its turn.
//!
//! With many calls in flight, the calls settled together each send their next request in the
//! promise reactions that follow; written one by one, each is a system call on the JS thread
//! and a wake-up of the server. The first request of a turn still goes out at once.
//!
//! Electron runs JS from Chromium's tasks too, outside the loop's turns, and turns the loop only
//! when something wakes it: a turn that holds a request also wakes the loop (a libuv async
//! handle, which ends the turn as well), so that nothing waits for an unrelated event.

use std::cell::Cell;
use std::ffi::c_void;

use mcpmux::event_loop;
use napi::{Env, sys};

use crate::uv::{UV_ASYNC, UV_PREPARE, Uv, uv};

thread_local! {
    /// This thread's loop has its handles.
    static INSTALLED: Cell<bool> = const { Cell::new(false) };
}

/// The loop's two handles (`uv_prepare_t` and `uv_async_t`, in memory from `calloc`).
struct TurnEnd {
    prepare: *mut c_void,
    wake: *mut c_void,
    uv: &'static Uv,
}

/// Has the loop of `env` (this thread's) batch its requests, once. On the JS thread.
pub(crate) fn install(env: &Env) {
    if INSTALLED.get() {
        return;
    }
    let Some(uv) = uv() else {
        return;
    };
    let mut uv_loop = std::ptr::null_mut();
    // SAFETY: on the JS thread of `env`.
    let status = unsafe { sys::napi_get_uv_event_loop(env.raw(), &mut uv_loop) };
    if status != sys::Status::napi_ok || uv_loop.is_null() {
        return;
    }
    // SAFETY: libuv calls on the loop's thread (this one), on handle memory that only
    // `on_closed` frees, once libuv is done with it.
    let wake = unsafe {
        let prepare = handle_memory(uv, UV_PREPARE);
        let wake = handle_memory(uv, UV_ASYNC);
        if prepare.is_null() || wake.is_null() {
            libc::free(prepare);
            libc::free(wake);
            return;
        }
        if (uv.prepare_init)(uv_loop, prepare) != 0 {
            libc::free(prepare);
            libc::free(wake);
            return;
        }
        if (uv.async_init)(uv_loop, wake, on_turn) != 0 {
            libc::free(wake);
            (uv.close)(prepare, Some(on_closed));
            return;
        }
        // Initialized: from here on only `uv_close` frees them. Neither keeps Node alive.
        (uv.unref)(prepare);
        (uv.unref)(wake);
        if (uv.prepare_start)(prepare, on_turn) != 0 {
            (uv.close)(prepare, Some(on_closed));
            (uv.close)(wake, Some(on_closed));
            return;
        }
        let turn = Box::into_raw(Box::new(TurnEnd { prepare, wake, uv }));
        sys::napi_add_env_cleanup_hook(env.raw(), Some(on_teardown), turn.cast());
        wake as usize
    };
    let send = uv.async_send;
    event_loop::batch_writes_on_this_thread(move || {
        // SAFETY: the handle lives until `on_teardown`, which stops the batching (and so
        // drops this closure) before it closes the handle.
        unsafe { send(wake as *mut c_void) };
    });
    INSTALLED.set(true);
}

/// Zeroed memory for a libuv handle of `kind`; null if out of memory.
unsafe fn handle_memory(uv: &Uv, kind: std::ffi::c_int) -> *mut c_void {
    // SAFETY: plain libuv and libc calls.
    unsafe { libc::calloc(1, (uv.handle_size)(kind)) }
}

/// libuv: the loop is about to wait for I/O (prepare), or a turn that held requests woke it
/// (async).
unsafe extern "C" fn on_turn(_handle: *mut c_void) {
    let _entered = crate::runtime().enter();
    event_loop::end_of_turn();
}

/// The environment is going away: what waits is sent, and its loop must not keep the handles.
unsafe extern "C" fn on_teardown(arg: *mut c_void) {
    // SAFETY: `arg` is the `TurnEnd` leaked in `install`, given back once, here.
    let turn = unsafe { Box::from_raw(arg as *mut TurnEnd) };
    {
        let _entered = crate::runtime().enter();
        event_loop::stop_batching_on_this_thread();
    }
    INSTALLED.set(false);
    // SAFETY: both handles are initialized and not closed yet (only here).
    unsafe {
        (turn.uv.prepare_stop)(turn.prepare);
        (turn.uv.close)(turn.prepare, Some(on_closed));
        (turn.uv.close)(turn.wake, Some(on_closed));
    }
}

/// libuv is done with a handle: its memory can go.
unsafe extern "C" fn on_closed(handle: *mut c_void) {
    // SAFETY: memory from `calloc` in `install`; libuv calls this once per handle.
    unsafe { libc::free(handle) };
}
