//! Node's loop sends the requests of one turn to each stdio server as one write (core's
//! `write_batch`): the turn ends in a libuv prepare handle, which runs right before the loop
//! waits for I/O. A call made after a reply the loop read is the first of its turn.
//!
//! With many calls in flight, the calls settled together each send their next request in the
//! promise reactions that follow; written one by one, each is a system call on the JS thread
//! and a wake-up of the server. The first request of a turn still goes out at once.

use std::cell::Cell;
use std::ffi::c_void;

use mcpmux::transport::write_batch;
use napi::{Env, sys};

use crate::uv::{UV_PREPARE, Uv, uv};

thread_local! {
    /// This thread's loop has its prepare handle.
    static INSTALLED: Cell<bool> = const { Cell::new(false) };
}

/// The prepare handle's memory (a `uv_prepare_t`, whose first field points back here).
struct TurnEnd {
    handle: Box<[u64]>,
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
    // SAFETY: plain libuv call.
    let size = unsafe { (uv.handle_size)(UV_PREPARE) };
    let turn = Box::into_raw(Box::new(TurnEnd {
        handle: vec![0u64; size.div_ceil(8)].into_boxed_slice(),
        uv,
    }));
    // SAFETY: `turn` is ours until `on_closed` takes it back; its handle is only given to
    // libuv, on the loop's thread (this one).
    unsafe {
        let handle: *mut c_void = (*turn).handle.as_mut_ptr().cast();
        *(handle as *mut *mut TurnEnd) = turn;
        if (uv.prepare_init)(uv_loop, handle) != 0 {
            drop(Box::from_raw(turn));
            return;
        }
        // Initialized: from here on only `uv_close` frees it. It must not keep Node alive.
        (uv.unref)(handle);
        if (uv.prepare_start)(handle, on_prepare) != 0 {
            (uv.close)(handle, Some(on_closed));
            return;
        }
        sys::napi_add_env_cleanup_hook(env.raw(), Some(on_teardown), turn.cast());
    }
    write_batch::batch_writes_on_this_thread();
    INSTALLED.set(true);
}

/// libuv: the loop is about to wait for I/O.
unsafe extern "C" fn on_prepare(_handle: *mut c_void) {
    let _entered = crate::runtime().enter();
    write_batch::end_of_turn();
}

/// The environment is going away: what waits is sent, and its loop must not keep the handle.
unsafe extern "C" fn on_teardown(arg: *mut c_void) {
    let turn = arg as *mut TurnEnd;
    {
        let _entered = crate::runtime().enter();
        write_batch::stop_batching_on_this_thread();
    }
    INSTALLED.set(false);
    // SAFETY: `turn` is live (closing happens only here) and its handle initialized.
    unsafe {
        let handle: *mut c_void = (*turn).handle.as_mut_ptr().cast();
        ((*turn).uv.prepare_stop)(handle);
        ((*turn).uv.close)(handle, Some(on_closed));
    }
}

/// libuv is done with the handle: its memory can go.
unsafe extern "C" fn on_closed(handle: *mut c_void) {
    // SAFETY: `data` is the `Box<TurnEnd>` leaked in `install`; libuv calls this once.
    drop(unsafe { Box::from_raw(*(handle as *mut *mut TurnEnd)) });
}
