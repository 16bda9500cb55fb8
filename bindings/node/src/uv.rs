//! The libuv functions the addon calls on Node's own event loop, looked up in the process at
//! run time: Node and Electron export them, so the addon links without them, and where they
//! are missing the loop is left alone (`uv()` is `None`).

use std::ffi::{CStr, c_int, c_void};
use std::sync::OnceLock;

use napi::sys;

pub(crate) type PollCb = unsafe extern "C" fn(*mut c_void, c_int, c_int);
pub(crate) type PrepareCb = unsafe extern "C" fn(*mut c_void);
pub(crate) type AsyncCb = unsafe extern "C" fn(*mut c_void);
pub(crate) type CloseCb = unsafe extern "C" fn(*mut c_void);

/// `UV_ASYNC`, `UV_POLL` and `UV_PREPARE` in libuv's `uv_handle_type`, and `UV_READABLE` in
/// `uv_poll_event`.
pub(crate) const UV_ASYNC: c_int = 1;
pub(crate) const UV_POLL: c_int = 8;
pub(crate) const UV_PREPARE: c_int = 9;
pub(crate) const UV_READABLE: c_int = 1;

type HandleSize = unsafe extern "C" fn(c_int) -> usize;
type PollInit = unsafe extern "C" fn(*mut sys::uv_loop_s, *mut c_void, c_int) -> c_int;
type PollStart = unsafe extern "C" fn(*mut c_void, c_int, PollCb) -> c_int;
type PollStop = unsafe extern "C" fn(*mut c_void) -> c_int;
type PrepareInit = unsafe extern "C" fn(*mut sys::uv_loop_s, *mut c_void) -> c_int;
type PrepareStart = unsafe extern "C" fn(*mut c_void, PrepareCb) -> c_int;
type PrepareStop = unsafe extern "C" fn(*mut c_void) -> c_int;
type AsyncInit = unsafe extern "C" fn(*mut sys::uv_loop_s, *mut c_void, AsyncCb) -> c_int;
type AsyncSend = unsafe extern "C" fn(*mut c_void) -> c_int;
type Close = unsafe extern "C" fn(*mut c_void, Option<CloseCb>);
type Unref = unsafe extern "C" fn(*mut c_void);

/// The libuv functions used, from the process.
pub(crate) struct Uv {
    pub handle_size: HandleSize,
    pub poll_init: PollInit,
    pub poll_start: PollStart,
    pub poll_stop: PollStop,
    pub prepare_init: PrepareInit,
    pub prepare_start: PrepareStart,
    pub prepare_stop: PrepareStop,
    pub async_init: AsyncInit,
    pub async_send: AsyncSend,
    pub close: Close,
    pub unref: Unref,
}

pub(crate) fn uv() -> Option<&'static Uv> {
    static UV: OnceLock<Option<Uv>> = OnceLock::new();
    UV.get_or_init(|| {
        let find = |name: &CStr| {
            // SAFETY: dlsym with a NUL-terminated name; RTLD_DEFAULT searches the process.
            let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
            (!p.is_null()).then_some(p)
        };
        // SAFETY: each symbol is libuv's function of that name, with the signature declared
        // here (libuv's stable 1.x ABI).
        unsafe {
            Some(Uv {
                handle_size: std::mem::transmute::<*mut c_void, HandleSize>(find(
                    c"uv_handle_size",
                )?),
                poll_init: std::mem::transmute::<*mut c_void, PollInit>(find(c"uv_poll_init")?),
                poll_start: std::mem::transmute::<*mut c_void, PollStart>(find(c"uv_poll_start")?),
                poll_stop: std::mem::transmute::<*mut c_void, PollStop>(find(c"uv_poll_stop")?),
                prepare_init: std::mem::transmute::<*mut c_void, PrepareInit>(find(
                    c"uv_prepare_init",
                )?),
                prepare_start: std::mem::transmute::<*mut c_void, PrepareStart>(find(
                    c"uv_prepare_start",
                )?),
                prepare_stop: std::mem::transmute::<*mut c_void, PrepareStop>(find(
                    c"uv_prepare_stop",
                )?),
                async_init: std::mem::transmute::<*mut c_void, AsyncInit>(find(c"uv_async_init")?),
                async_send: std::mem::transmute::<*mut c_void, AsyncSend>(find(c"uv_async_send")?),
                close: std::mem::transmute::<*mut c_void, Close>(find(c"uv_close")?),
                unref: std::mem::transmute::<*mut c_void, Unref>(find(c"uv_unref")?),
            })
        }
    })
    .as_ref()
}
