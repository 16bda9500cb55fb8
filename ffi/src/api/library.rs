//! The library itself: its version, status names, strings it hands out, the last
//! error of a thread, and cancelling a request.

use std::ffi::{CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::calls::cancel;
use crate::error::{guard, into_c_string, last_error, status_code_c};
use crate::mcpmux_request_id;
use crate::mcpmux_status::{self, *};

/// The library's version, e.g. "0.1.0" (a static string: do not free).
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The stable snake_case name of a status ("ok", "timeout", ...; "unknown" for a number
/// that is not a status). A static string: do not free.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_status_name(status: i32) -> *const c_char {
    status_code_c(status).as_ptr()
}

/// Frees a string returned by this library. NULL is ignored. Each string is freed once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_string_free(s: *mut c_char) {
    if s.is_null() {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: a string this library returned and the caller has not freed yet.
        drop(unsafe { CString::from_raw(s) });
    }));
}

/// Copies the message of the last failure on the calling thread into `buf`, NUL-terminated
/// and cut (at a UTF-8 character boundary) to fit `buf_len` bytes. `*out_len` (`out_len`
/// may be NULL) receives the full length without the NUL, so `buf = NULL, buf_len = 0`
/// asks for the size. Returns MCPMUX_ERR_BUFFER_TOO_SMALL when the message was cut and
/// MCPMUX_ERR_NOT_FOUND when nothing failed yet on this thread. It never changes the
/// last error itself.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_last_error_message(
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> mcpmux_status {
    catch_unwind(AssertUnwindSafe(|| {
        let Some(e) = last_error() else {
            // SAFETY: optional output pointers (header conventions).
            if let Some(l) = unsafe { out_len.as_mut() } {
                *l = 0;
            }
            if !buf.is_null() && buf_len > 0 {
                unsafe { *buf = 0 };
            }
            return MCPMUX_ERR_NOT_FOUND;
        };
        let msg = e.message.as_bytes();
        if let Some(l) = unsafe { out_len.as_mut() } {
            *l = msg.len();
        }
        if buf.is_null() || buf_len == 0 {
            return if msg.is_empty() {
                MCPMUX_OK
            } else {
                MCPMUX_ERR_BUFFER_TOO_SMALL
            };
        }
        let mut n = msg.len().min(buf_len - 1);
        while !e.message.is_char_boundary(n) {
            n -= 1;
        }
        // SAFETY: `buf` has `buf_len` writable bytes and n < buf_len.
        unsafe {
            std::ptr::copy_nonoverlapping(msg.as_ptr(), buf.cast::<u8>(), n);
            *buf.add(n) = 0;
        }
        if n < msg.len() {
            MCPMUX_ERR_BUFFER_TOO_SMALL
        } else {
            MCPMUX_OK
        }
    }))
    .unwrap_or(MCPMUX_ERR_PANIC)
}

/// The message of the last failure on the calling thread as a new string (free it with
/// mcpmux_string_free()), or NULL when nothing failed yet on this thread.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_last_error() -> *mut c_char {
    catch_unwind(|| last_error().map(|e| into_c_string(e.message)))
        .ok()
        .flatten()
        .unwrap_or(std::ptr::null_mut())
}

/// What the last failure on the calling thread carries besides its message, as JSON (free it
/// with mcpmux_string_free()); NULL when nothing failed yet on this thread or its error
/// carries nothing more. Errors with data: MCPMUX_ERR_URL_ELICITATION_REQUIRED,
/// {"elicitations": [{"elicitationId": "...", "url": "https://...", "message": "..."}]};
/// MCPMUX_ERR_INVALID_RESULT, {"problems": ["/path: what is wrong"]}.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_last_error_data() -> *mut c_char {
    catch_unwind(|| {
        last_error()
            .and_then(|e| e.data)
            .map(|d| into_c_string(d.to_string()))
    })
    .ok()
    .flatten()
    .unwrap_or(std::ptr::null_mut())
}

/// The status of the last failure on the calling thread (MCPMUX_OK when none yet).
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_last_error_status() -> mcpmux_status {
    catch_unwind(|| last_error().map_or(MCPMUX_OK, |e| e.status)).unwrap_or(MCPMUX_ERR_PANIC)
}

/// Cancels an asynchronous request: its callback then gets MCPMUX_ERR_CANCELLED (a tool
/// call's server is told with notifications/cancelled). MCPMUX_ERR_NOT_FOUND when the
/// request has finished already (its callback was called or is being called).
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_cancel(request: mcpmux_request_id) -> mcpmux_status {
    guard(|| cancel(request))
}
