//! Status codes, the thread-local last error, argument conversion and the panic boundary.

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use mcpmux_core::ErrorKind;
use serde::de::DeserializeOwned;

use crate::mcpmux_status::{self, *};

/// A failure on its way to C: a status and a message.
#[derive(Debug, Clone)]
pub(crate) struct FfiError {
    pub status: mcpmux_status,
    pub message: String,
    /// What core's error carries besides its message (`Error::data`).
    pub data: Option<serde_json::Value>,
}

pub(crate) type FfiResult<T> = Result<T, FfiError>;

impl FfiError {
    pub fn new(status: mcpmux_status, message: impl Into<String>) -> Self {
        FfiError {
            status,
            message: message.into(),
            data: None,
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(MCPMUX_ERR_INVALID_ARGUMENT, message)
    }

    /// `{"status": n, "code": "...", "message": "..."}`, with `"data"` when the error carries
    /// some: what completion callbacks receive.
    pub fn to_json(&self) -> String {
        let mut out = serde_json::json!({
            "status": self.status as i32,
            "code": status_code(self.status as i32),
            "message": self.message,
        });
        if let Some(data) = &self.data {
            out["data"] = data.clone();
        }
        out.to_string()
    }
}

/// The one place where core's error categories become C status codes.
pub(crate) fn status_of(kind: ErrorKind) -> mcpmux_status {
    match kind {
        ErrorKind::InvalidConfig => MCPMUX_ERR_INVALID_CONFIG,
        ErrorKind::InvalidArgument => MCPMUX_ERR_INVALID_ARGUMENT,
        ErrorKind::NotFound => MCPMUX_ERR_NOT_FOUND,
        ErrorKind::Connection => MCPMUX_ERR_CONNECTION,
        ErrorKind::Timeout => MCPMUX_ERR_TIMEOUT,
        ErrorKind::Cancelled => MCPMUX_ERR_CANCELLED,
        ErrorKind::Protocol => MCPMUX_ERR_PROTOCOL,
        ErrorKind::Tool => MCPMUX_ERR_TOOL,
        ErrorKind::MessageTooLarge => MCPMUX_ERR_MESSAGE_TOO_LARGE,
        ErrorKind::ShuttingDown => MCPMUX_ERR_SHUTTING_DOWN,
        ErrorKind::Io => MCPMUX_ERR_IO,
        ErrorKind::UrlElicitationRequired => MCPMUX_ERR_URL_ELICITATION_REQUIRED,
        ErrorKind::InvalidResult => MCPMUX_ERR_INVALID_RESULT,
    }
}

impl From<mcpmux_core::Error> for FfiError {
    fn from(e: mcpmux_core::Error) -> Self {
        FfiError {
            data: e.data(),
            ..FfiError::new(status_of(e.kind()), e.to_string())
        }
    }
}

/// Stable snake_case name of a status number (`"unknown"` for numbers not assigned).
pub(crate) fn status_code(status: i32) -> &'static str {
    status_code_c(status).to_str().expect("ASCII names")
}

/// The statuses of the C API itself, which no core error kind has.
const OWN_STATUSES: [(mcpmux_status, &CStr); 5] = [
    (MCPMUX_OK, c"ok"),
    (MCPMUX_ERR_NULL_ARGUMENT, c"null_argument"),
    (MCPMUX_ERR_INVALID_HANDLE, c"invalid_handle"),
    (MCPMUX_ERR_PANIC, c"panic"),
    (MCPMUX_ERR_BUFFER_TOO_SMALL, c"buffer_too_small"),
];

/// [`status_code`] as a C string with static lifetime, for `mcpmux_status_name`: the C
/// API's own names, and for every core error kind its code (`ErrorKind::as_str`).
pub(crate) fn status_code_c(status: i32) -> &'static CStr {
    static KINDS: std::sync::OnceLock<Vec<(i32, std::ffi::CString)>> = std::sync::OnceLock::new();
    if let Some((_, name)) = OWN_STATUSES.iter().find(|(s, _)| *s as i32 == status) {
        return name;
    }
    let kinds = KINDS.get_or_init(|| {
        ErrorKind::ALL
            .iter()
            .map(|k| {
                let name = std::ffi::CString::new(k.as_str()).expect("codes are ASCII");
                (status_of(*k) as i32, name)
            })
            .collect()
    });
    kinds
        .iter()
        .find(|(s, _)| *s == status)
        .map_or(c"unknown", |(_, name)| name.as_c_str())
}

thread_local! {
    static LAST_ERROR: RefCell<Option<FfiError>> = const { RefCell::new(None) };
}

pub(crate) fn set_last_error(e: &FfiError) {
    LAST_ERROR.with(|l| *l.borrow_mut() = Some(e.clone()));
}

pub(crate) fn last_error() -> Option<FfiError> {
    LAST_ERROR.with(|l| l.borrow().clone())
}

/// Describes a caught panic: its message when it has one.
pub(crate) fn panic_error(payload: Box<dyn std::any::Any + Send>) -> FfiError {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    FfiError::new(MCPMUX_ERR_PANIC, format!("mcpmux panicked: {what}"))
}

/// The boundary of every export: runs `f`, records its failure as the thread's last error,
/// and turns a panic into `MCPMUX_ERR_PANIC` instead of unwinding into C.
pub(crate) fn guard(f: impl FnOnce() -> FfiResult<()>) -> mcpmux_status {
    let outcome = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(panic_error(p)));
    match outcome {
        Ok(()) => MCPMUX_OK,
        Err(e) => {
            set_last_error(&e);
            e.status
        }
    }
}

/// A required C string argument, as UTF-8.
pub(crate) unsafe fn str_arg<'a>(p: *const c_char, name: &str) -> FfiResult<&'a str> {
    if p.is_null() {
        return Err(FfiError::new(
            MCPMUX_ERR_NULL_ARGUMENT,
            format!("{name} is NULL"),
        ));
    }
    // SAFETY: the caller passes a NUL-terminated string (header conventions).
    let bytes = unsafe { CStr::from_ptr(p) };
    bytes.to_str().map_err(|e| {
        FfiError::invalid(format!(
            "{name} is not valid UTF-8 (byte {})",
            e.valid_up_to()
        ))
    })
}

/// An optional C string argument: NULL means none.
pub(crate) unsafe fn opt_str_arg<'a>(p: *const c_char, name: &str) -> FfiResult<Option<&'a str>> {
    if p.is_null() {
        Ok(None)
    } else {
        unsafe { str_arg(p, name) }.map(Some)
    }
}

/// Parses a JSON argument into a core type, naming the argument in the error.
pub(crate) fn json_arg<T: DeserializeOwned>(text: &str, name: &str) -> FfiResult<T> {
    serde_json::from_str(text).map_err(|e| FfiError::invalid(format!("{name}: invalid JSON: {e}")))
}

/// An optional JSON argument: NULL is `T::default()`.
pub(crate) unsafe fn opt_json_arg<T: DeserializeOwned + Default>(
    p: *const c_char,
    name: &str,
) -> FfiResult<T> {
    match unsafe { opt_str_arg(p, name) }? {
        Some(text) => json_arg(text, name),
        None => Ok(T::default()),
    }
}

/// A required output pointer.
pub(crate) fn out_arg<'a, T>(p: *mut T, name: &str) -> FfiResult<&'a mut T> {
    // SAFETY: non-null output pointers point to writable storage (header conventions).
    unsafe { p.as_mut() }
        .ok_or_else(|| FfiError::new(MCPMUX_ERR_NULL_ARGUMENT, format!("{name} is NULL")))
}

/// A string for C, freed with `mcpmux_string_free`. Interior NULs (impossible in JSON,
/// possible in a message) are replaced so nothing is silently cut.
pub(crate) fn into_c_string(s: String) -> *mut c_char {
    c_string(s).into_raw()
}

/// A C string of `s`, with interior NULs replaced rather than cutting the text.
pub(crate) fn c_string(s: impl Into<Vec<u8>>) -> CString {
    CString::new(s).unwrap_or_else(|e| {
        let cleaned = String::from_utf8_lossy(&e.into_vec()).replace('\0', "\u{FFFD}");
        CString::new(cleaned).expect("NULs were replaced")
    })
}

/// Serializes a core result for C.
pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> FfiResult<String> {
    serde_json::to_string(value)
        .map_err(|e| FfiError::new(MCPMUX_ERR_PANIC, format!("cannot serialize result: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_has_its_name_and_every_core_kind_its_own_status() {
        let mut seen = std::collections::HashSet::new();
        for kind in ErrorKind::ALL {
            let status = status_of(kind) as i32;
            assert!(seen.insert(status), "{kind:?} shares status {status}");
            assert_eq!(status_code(status), kind.as_str());
        }
        for (status, name) in OWN_STATUSES {
            assert!(
                seen.insert(status as i32),
                "{name:?} is also a core kind's status"
            );
        }
        // The numbers are dense from 0: every one has a name, and the next one none.
        for status in 0..seen.len() as i32 {
            assert_ne!(status_code(status), "unknown", "status {status}");
        }
        assert_eq!(status_code(seen.len() as i32), "unknown");
        assert_eq!(status_code(-1), "unknown");
    }

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let status = guard(|| panic!("boom {}", 42));
        assert_eq!(status, MCPMUX_ERR_PANIC);
        let e = last_error().unwrap();
        assert_eq!(e.status, MCPMUX_ERR_PANIC);
        assert!(e.message.contains("boom 42"), "{}", e.message);
    }

    #[test]
    fn every_core_kind_maps_to_a_distinct_named_status() {
        let kinds = ErrorKind::ALL;
        let mut seen = std::collections::HashSet::new();
        for k in kinds {
            let s = status_of(k);
            assert!(seen.insert(s), "{k:?} shares a status");
            // The C code names match core's stable codes, so logs read the same everywhere.
            assert_eq!(status_code(s as i32), k.as_str());
        }
    }

    #[test]
    fn strings_with_nul_are_not_cut() {
        let p = into_c_string("a\0b".into());
        let s = unsafe { CString::from_raw(p) };
        assert_eq!(s.to_str().unwrap(), "a\u{FFFD}b");
    }
}
