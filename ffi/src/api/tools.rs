//! Listing, searching and calling the pool's tools.

use std::ffi::{CString, c_char, c_void};
use std::sync::Arc;

use mcpmux_core::{CallOptions, CallSettings, ProgressFn};

use crate::bodies::{asynchronous, blocking, list_work, work};
use crate::calls::{Gate, PoolEntry, UserData, Work, pool_entry, run_async, timeout_of};
use crate::error::{FfiResult, guard, json_arg, opt_json_arg, opt_str_arg, str_arg};
use crate::mcpmux_status;
use crate::rt::call_out;
use crate::{mcpmux_completion_fn, mcpmux_pool, mcpmux_progress_fn, mcpmux_request_id};

fn tools_list_work(
    e: &Arc<PoolEntry>,
    server: *const c_char,
    options_json: *const c_char,
) -> FfiResult<Work> {
    list_work(e, server, options_json, |p, server, options| async move {
        p.list_tools_with(server.as_deref(), options).await
    })
}

/// Tools of every active server, or of one (`server`: id or name; NULL for all), under
/// pool-unique ids: `[{"id": "mcp__files__read", "serverId": ..., "serverName": ...,
/// "name": "read", "description": ..., "inputSchema": {...}}]`. Listing all skips servers
/// that cannot be reached; asking for one that cannot be reached is an error.
/// `options_json`: NULL, or `{"refresh": true}` to ask the servers again past every cache
/// (the same options for every list call). `timeout_ms`: 0 for no limit of its own (the
/// pool's timeouts still apply).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_tools_list(
    pool: mcpmux_pool,
    server: *const c_char,
    options_json: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| {
        tools_list_work(e, server, options_json)
    })
}

/// Asynchronous mcpmux_tools_list().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_tools_list_async(
    pool: mcpmux_pool,
    server: *const c_char,
    options_json: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        tools_list_work(e, server, options_json)
    })
}

/// Ranks the tools the pool knows for `query` (names, titles, descriptions, parameter
/// names), best first, at most `limit` (0: not given, which is 10): `[{"id": ..., "score": 4.2, "serverName": ...,
/// "name": ..., "description": "first sentence"}]`. Answers from live tool lists and the
/// catalog saved beside the config; a server whose tools are not known for its current
/// config (never listed, or its config changed) is listed first, within its connect
/// timeout, so this call may block while such servers start. Servers whose tools are known
/// are not started.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_tools_search(
    pool: mcpmux_pool,
    query: *const c_char,
    limit: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, 0, out_json, |e| {
        let query = unsafe { str_arg(query, "query") }?.to_string();
        // C has no optional integers: 0 is "not given", and core says what that means.
        let limit = (limit != 0).then_some(limit as usize);
        let pool = e.pool.clone();
        Ok(work(async move { pool.search_tools(&query, limit).await }))
    })
}

/// What a tool call takes besides the tool: its arguments and options.
struct CallInput {
    arguments_json: *const c_char,
    options_json: *const c_char,
    timeout_ms: u32,
}

fn tools_call_work(
    e: &Arc<PoolEntry>,
    tool_id: *const c_char,
    input: CallInput,
    on_progress: Option<ProgressFn>,
) -> FfiResult<Work> {
    let tool_id = unsafe { str_arg(tool_id, "tool_id") }?.to_owned();
    let arguments: serde_json::Value =
        match unsafe { opt_str_arg(input.arguments_json, "arguments_json") }? {
            Some(text) => json_arg(text, "arguments_json")?,
            None => serde_json::Value::Null,
        };
    let settings: CallSettings = unsafe { opt_json_arg(input.options_json, "options_json") }?;
    let mut options = CallOptions {
        timeout: timeout_of(input.timeout_ms),
        on_progress,
        ..CallOptions::default()
    };
    settings.apply(&mut options);
    let p = e.pool.clone();
    Ok(work(async move {
        p.call_tool(&tool_id, arguments, options).await
    }))
}

/// Calls a tool by its pool id (from mcpmux_tools_list()) with `arguments_json`, a JSON
/// object (NULL for none). Answers MCP's CallToolResult: `{"content": [...],
/// "structuredContent": {...}, "isError": false}`; a result with isError true is still
/// MCPMUX_OK, a JSON-RPC error from the server is MCPMUX_ERR_TOOL or
/// MCPMUX_ERR_PROTOCOL, and a result that does not match the tool's outputSchema is
/// MCPMUX_ERR_INVALID_RESULT. `options_json` (NULL for none): `{"validate": false}` takes
/// results as they are, `"meta": {...}` adds keys to the request's `_meta` (e.g. a W3C
/// `traceparent`), `"maxTotalMs": n` caps the whole call. `timeout_ms` (0: the server's or
/// pool's request timeout) restarts with each progress notification of the server.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_tools_call(
    pool: mcpmux_pool,
    tool_id: *const c_char,
    arguments_json: *const c_char,
    options_json: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, 0, out_json, |e| {
        let input = CallInput {
            arguments_json,
            options_json,
            timeout_ms,
        };
        tools_call_work(e, tool_id, input, None)
    })
}

/// Asynchronous mcpmux_tools_call(); mcpmux_cancel() cancels it (the server is told).
/// `on_progress` (may be NULL) receives the server's progress notifications for this call,
/// `{"progress": 100, "total": 500, "message": "..."}`, with the same `user_data`, on a
/// library thread; it is never called once `callback` is due.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_tools_call_async(
    pool: mcpmux_pool,
    tool_id: *const c_char,
    arguments_json: *const c_char,
    options_json: *const c_char,
    timeout_ms: u32,
    on_progress: mcpmux_progress_fn,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    guard(|| {
        let entry = pool_entry(pool)?;
        let gate = Arc::new(Gate::default());
        let progress = on_progress.map(|f| {
            let gate = gate.clone();
            let user = UserData(user_data);
            Arc::new(move |p: mcpmux_core::Progress| {
                let user = user;
                let Ok(json) = serde_json::to_string(&p) else {
                    return;
                };
                let c = CString::new(json).unwrap_or_default();
                // SAFETY: the caller's progress function, with the call's user data.
                gate.run(|| call_out(|| unsafe { f(user.0, c.as_ptr(), c.as_bytes().len()) }));
            }) as ProgressFn
        });
        let input = CallInput {
            arguments_json,
            options_json,
            timeout_ms,
        };
        let work = tools_call_work(&entry, tool_id, input, progress)?;
        run_async(
            &entry,
            work,
            None,
            callback,
            user_data,
            out_request_id,
            Some(gate),
        )
    })
}
