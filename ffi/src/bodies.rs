//! What the exports share: their bodies (argument checks, the pool lookup, a blocking or an
//! asynchronous run) and output pointers.

use std::ffi::{c_char, c_void};
use std::future::Future;
use std::sync::Arc;

use mcpmux_core::ListOptions;
use serde::Serialize;

use crate::calls::{
    PoolEntry, Work, pool_entry, run_async, run_blocking, run_blocking_into, timeout_of,
};
use crate::error::{FfiResult, guard, into_c_string, opt_json_arg, opt_str_arg, out_arg, to_json};
use crate::handles::Table;
use crate::mcpmux_status;
use crate::{mcpmux_completion_fn, mcpmux_pool, mcpmux_request_id};

/// Wraps a core call as the work of a request: its result becomes JSON.
pub(crate) fn work<T, F>(f: F) -> Work
where
    T: Serialize,
    F: Future<Output = mcpmux_core::Result<T>> + Send + 'static,
{
    Box::pin(async move { to_json(&f.await?) })
}

/// The work of a list call: `server` (NULL for all) and `options_json` (NULL, or core's
/// `ListOptions`) read, then `list` run on the pool with them.
pub(crate) fn list_work<T, F, Fut>(
    e: &Arc<PoolEntry>,
    server: *const c_char,
    options_json: *const c_char,
    list: F,
) -> FfiResult<Work>
where
    T: Serialize,
    F: FnOnce(mcpmux_core::Pool, Option<String>, ListOptions) -> Fut,
    Fut: Future<Output = mcpmux_core::Result<T>> + Send + 'static,
{
    let server = unsafe { opt_str_arg(server, "server") }?.map(str::to_owned);
    let options: ListOptions = unsafe { opt_json_arg(options_json, "options_json") }?;
    Ok(work(list(e.pool.clone(), server, options)))
}

/// Body of a blocking call that answers JSON.
pub(crate) fn blocking(
    pool: mcpmux_pool,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
    make: impl FnOnce(&Arc<PoolEntry>) -> FfiResult<Work>,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        let entry = pool_entry(pool)?;
        let work = make(&entry)?;
        run_blocking_into(&entry, work, timeout_of(timeout_ms), out)
    })
}

/// Body of a blocking call without a result.
pub(crate) fn blocking_unit(
    pool: mcpmux_pool,
    timeout_ms: u32,
    make: impl FnOnce(&Arc<PoolEntry>) -> FfiResult<Work>,
) -> mcpmux_status {
    guard(|| {
        let entry = pool_entry(pool)?;
        let work = make(&entry)?;
        run_blocking(&entry, work, timeout_of(timeout_ms)).map(drop)
    })
}

/// Body of an asynchronous call.
pub(crate) fn asynchronous(
    pool: mcpmux_pool,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
    make: impl FnOnce(&Arc<PoolEntry>) -> FfiResult<Work>,
) -> mcpmux_status {
    guard(|| {
        let entry = pool_entry(pool)?;
        let work = make(&entry)?;
        run_async(
            &entry,
            work,
            timeout_of(timeout_ms),
            callback,
            user_data,
            out_request_id,
            None,
        )
    })
}

/// Writes `json` into an optional output pointer (NULL: the caller does not want it).
pub(crate) fn opt_out(
    out: *mut *mut c_char,
    json: impl FnOnce() -> FfiResult<String>,
) -> FfiResult<()> {
    // SAFETY: optional output pointer (header conventions).
    if let Some(out) = unsafe { out.as_mut() } {
        *out = into_c_string(json()?);
    }
    Ok(())
}

/// Clears an optional output pointer first, so it is NULL on failure.
pub(crate) fn clear(out: *mut *mut c_char) {
    // SAFETY: optional output pointer (header conventions).
    if let Some(out) = unsafe { out.as_mut() } {
        *out = std::ptr::null_mut();
    }
}

/// Body of a call that answers JSON at once: `*out_json` is NULL unless `answer` succeeds.
pub(crate) fn answer_json<T: Serialize>(
    out_json: *mut *mut c_char,
    answer: impl FnOnce() -> FfiResult<T>,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        *out = into_c_string(to_json(&answer()?)?);
        Ok(())
    })
}

/// Body of a `*_free`: 0 is ignored, a handle freed twice is MCPMUX_ERR_INVALID_HANDLE.
pub(crate) fn free_handle<T>(table: &Table<T>, handle: u64) -> mcpmux_status {
    if handle == 0 {
        return mcpmux_status::MCPMUX_OK;
    }
    guard(|| table.remove(handle).map(drop))
}

/// Body of a call that makes a handle: `*out_handle` is 0 unless `make` succeeds.
pub(crate) fn new_handle<T>(
    out_handle: *mut u64,
    name: &str,
    table: &Table<T>,
    make: impl FnOnce() -> FfiResult<T>,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_handle, name)?;
        *out = 0;
        *out = table.insert(Arc::new(make()?));
        Ok(())
    })
}
