//! The errors the addon throws and rejects with: JS `Error`s whose `code` property is core's
//! stable error code (`ErrorKind::as_str`, or `internal` for a fault of the addon itself), so
//! `index.js` picks its error class from `err.code`, never from the message's text.
//!
//! Three ways out, one shape: a synchronous method returns [`Error`] and napi throws it with
//! its code; a promise made by [`crate::promise`] and a `callTool` promise reject with
//! [`js_error`]'s object. Errors napi makes itself (a JS value of the wrong type reaching a
//! method) keep napi's status as their code (`InvalidArg`, `StringExpected`, ...).

use std::ptr;

use napi::{Env, sys};

/// The `code` of an error this addon makes (one of core's error kinds, or `internal`), and
/// what core's error carries besides its message (`Error::data`, as JSON text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Code(&'static str, Option<String>);

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.0
    }
}

/// An error with its code, as every method of the addon returns it.
pub(crate) type Error = napi::Error<Code>;

/// The result of every method of the addon.
pub(crate) type Result<T> = std::result::Result<T, Error>;

/// An error of core's kind `code` (see `ErrorKind::as_str`) or `internal`.
pub(crate) fn error(code: &'static str, message: impl std::fmt::Display) -> Error {
    napi::Error::new(Code(code, None), message.to_string())
}

/// Core's error, with its kind as the code and what it carries as its data.
pub(crate) fn core_error(e: mcpmux::Error) -> Error {
    let data = e.data().map(|d| d.to_string());
    napi::Error::new(Code(e.kind().as_str(), data), e.to_string())
}

/// A failure of a Node-API call inside the addon: not the caller's doing.
pub(crate) fn internal(e: napi::Error) -> Error {
    error("internal", e.reason)
}

/// `e` as a JS `Error` with its `code`, its message and, when core's error carries
/// something, its `dataJson` (which `lib/errors.js` parses into `data`); on the JS thread of
/// `env`.
pub(crate) fn js_error(env: &Env, e: &Error) -> sys::napi_value {
    let raw = env.raw();
    // SAFETY: JS thread of `env`; each value is made before it is used, and a failure leaves
    // a null value, which napi_create_error refuses without touching anything.
    unsafe {
        let mut code = ptr::null_mut();
        sys::napi_create_string_utf8(
            raw,
            e.status.0.as_ptr().cast(),
            e.status.0.len() as isize,
            &mut code,
        );
        let mut message = ptr::null_mut();
        sys::napi_create_string_utf8(
            raw,
            e.reason.as_ptr().cast(),
            e.reason.len() as isize,
            &mut message,
        );
        let mut error = ptr::null_mut();
        sys::napi_create_error(raw, code, message, &mut error);
        if let Some(data) = &e.status.1 {
            let mut json = ptr::null_mut();
            sys::napi_create_string_utf8(raw, data.as_ptr().cast(), data.len() as isize, &mut json);
            sys::napi_set_named_property(raw, error, c"dataJson".as_ptr(), json);
        }
        error
    }
}
