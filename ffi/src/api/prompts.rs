//! Prompts: listing and getting them filled in.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use crate::bodies::{asynchronous, blocking, list_work, work};
use crate::calls::{PoolEntry, Work};
use crate::error::{FfiResult, json_arg, opt_str_arg, str_arg};
use crate::mcpmux_status;
use crate::{mcpmux_completion_fn, mcpmux_pool, mcpmux_request_id};

fn prompts_list_work(
    e: &Arc<PoolEntry>,
    server: *const c_char,
    options_json: *const c_char,
) -> FfiResult<Work> {
    list_work(e, server, options_json, |p, server, options| async move {
        p.list_prompts_with(server.as_deref(), options).await
    })
}

/// Prompts of every server that offers them, or of one (NULL for all):
/// `[{"serverId": ..., "serverName": ..., "name": ..., "arguments": [...]}]`.
/// `options_json`: NULL, or `{"refresh": true}` (see mcpmux_tools_list()).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_prompts_list(
    pool: mcpmux_pool,
    server: *const c_char,
    options_json: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| {
        prompts_list_work(e, server, options_json)
    })
}

/// Asynchronous mcpmux_prompts_list().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_prompts_list_async(
    pool: mcpmux_pool,
    server: *const c_char,
    options_json: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        prompts_list_work(e, server, options_json)
    })
}

fn prompts_get_work(
    e: &Arc<PoolEntry>,
    server: *const c_char,
    name: *const c_char,
    arguments_json: *const c_char,
) -> FfiResult<Work> {
    let server = unsafe { str_arg(server, "server") }?.to_owned();
    let name = unsafe { str_arg(name, "name") }?.to_owned();
    let arguments: Option<serde_json::Map<String, serde_json::Value>> =
        match unsafe { opt_str_arg(arguments_json, "arguments_json") }? {
            Some(text) => Some(json_arg(text, "arguments_json")?),
            None => None,
        };
    let p = e.pool.clone();
    Ok(work(async move {
        p.get_prompt(&server, &name, arguments).await
    }))
}

/// Gets one prompt of one server, filled with `arguments_json` (a JSON object of strings,
/// or NULL): MCP's GetPromptResult, `{"description": ..., "messages": [...]}`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_prompts_get(
    pool: mcpmux_pool,
    server: *const c_char,
    name: *const c_char,
    arguments_json: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| {
        prompts_get_work(e, server, name, arguments_json)
    })
}

/// Asynchronous mcpmux_prompts_get().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_prompts_get_async(
    pool: mcpmux_pool,
    server: *const c_char,
    name: *const c_char,
    arguments_json: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        prompts_get_work(e, server, name, arguments_json)
    })
}
