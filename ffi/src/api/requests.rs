//! Requests beyond the verbs: argument completions, and any request or notification by
//! method name (an extension's methods).

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use mcpmux_core::model::{CompleteRequestParams, JsonObject};

use crate::bodies::{asynchronous, blocking, blocking_unit, work};
use crate::calls::{PoolEntry, Work};
use crate::error::{FfiResult, json_arg, opt_json_arg, str_arg};
use crate::mcpmux_status;
use crate::{mcpmux_completion_fn, mcpmux_pool, mcpmux_request_id};

fn complete_work(
    e: &Arc<PoolEntry>,
    server: *const c_char,
    params_json: *const c_char,
) -> FfiResult<Work> {
    let server = unsafe { str_arg(server, "server") }?.to_owned();
    let text = unsafe { str_arg(params_json, "params_json") }?;
    let params: CompleteRequestParams = json_arg(text, "params_json")?;
    let p = e.pool.clone();
    Ok(work(async move { p.complete(&server, params).await }))
}

/// Completion values for an argument of a prompt or of a resource template, as a form
/// autocompletes: `params_json` is MCP's `completion/complete` params, `{"ref": {"type":
/// "ref/prompt", "name": "..."} or {"type": "ref/resource", "uri": "..."}, "argument":
/// {"name": "...", "value": "typed so far"}, "context": {"arguments": {"chosen": "..."}}}`
/// (`context` optional). Answers `{"values": [...], "total": n, "hasMore": false}`. A server
/// without the completions capability is MCPMUX_ERR_PROTOCOL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_complete(
    pool: mcpmux_pool,
    server: *const c_char,
    params_json: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| {
        complete_work(e, server, params_json)
    })
}

/// Asynchronous mcpmux_complete().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_complete_async(
    pool: mcpmux_pool,
    server: *const c_char,
    params_json: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        complete_work(e, server, params_json)
    })
}

/// What a request or notification by name carries: its server, method and params.
fn by_name(
    server: *const c_char,
    method: *const c_char,
    params_json: *const c_char,
) -> FfiResult<(String, String, Option<JsonObject>)> {
    let server = unsafe { str_arg(server, "server") }?.to_owned();
    let method = unsafe { str_arg(method, "method") }?.to_owned();
    let params: Option<JsonObject> = unsafe { opt_json_arg(params_json, "params_json") }?;
    Ok((server, method, params))
}

fn request_work(
    e: &Arc<PoolEntry>,
    server: *const c_char,
    method: *const c_char,
    params_json: *const c_char,
) -> FfiResult<Work> {
    let (server, method, params) = by_name(server, method, params_json)?;
    let p = e.pool.clone();
    Ok(work(
        async move { p.request(&server, &method, params).await },
    ))
}

/// Sends the request `method` (one mcpmux has no call for, e.g. an extension's) with
/// `params_json` (a JSON object, or NULL) to one server and answers its result as JSON. An
/// error the server answers is MCPMUX_ERR_PROTOCOL, with its message and code.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_send_request(
    pool: mcpmux_pool,
    server: *const c_char,
    method: *const c_char,
    params_json: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| {
        request_work(e, server, method, params_json)
    })
}

/// Asynchronous mcpmux_send_request().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_send_request_async(
    pool: mcpmux_pool,
    server: *const c_char,
    method: *const c_char,
    params_json: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        request_work(e, server, method, params_json)
    })
}

/// Sends the notification `method` with `params_json` (a JSON object, or NULL) to one
/// server. Notifications a server sends that mcpmux has no meaning for arrive as
/// `notification` events (`{"serverId", "method", "params"}`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_send_notification(
    pool: mcpmux_pool,
    server: *const c_char,
    method: *const c_char,
    params_json: *const c_char,
    timeout_ms: u32,
) -> mcpmux_status {
    blocking_unit(pool, timeout_ms, |e| {
        let (server, method, params) = by_name(server, method, params_json)?;
        let p = e.pool.clone();
        Ok(work(
            async move { p.notify(&server, &method, params).await },
        ))
    })
}
