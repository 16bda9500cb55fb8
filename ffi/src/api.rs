//! The exported functions (other than events): argument checks, JSON in and out, and the
//! calls into core.

use std::ffi::{CString, c_char, c_void};
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use mcpmux_core::{CallOptions, Pool, PoolOptions, ProgressFn, ServerInput, ServerPatch};
use serde::Serialize;

use crate::calls::{
    Gate, POOLS, PoolEntry, UserData, Work, cancel, close_pool, pool_entry, run_async,
    run_blocking, run_blocking_into, timeout_of,
};
use crate::error::{
    FfiResult, guard, into_c_string, json_arg, last_error, opt_str_arg, out_arg, status_code_c,
    str_arg, to_json,
};
use crate::mcpmux_status::{self, *};
use crate::rt::{block_on, call_out};
use crate::{mcpmux_completion_fn, mcpmux_pool, mcpmux_progress_fn, mcpmux_request_id};

/// Wraps a core call as the work of a request: its result becomes JSON.
pub(crate) fn work<T, F>(f: F) -> Work
where
    T: Serialize,
    F: Future<Output = mcpmux_core::Result<T>> + Send + 'static,
{
    Box::pin(async move { to_json(&f.await?) })
}

/// Body of a blocking call that answers JSON.
fn blocking(
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

// ---------------------------------------------------------------------------------------
// Library, errors, strings
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// Pool
// ---------------------------------------------------------------------------------------

/// Opens a pool over a config file; nothing connects yet. `options_json` (NULL for the
/// defaults) is a JSON object such as
/// `{"configPath": "/path/servers.json", "requestTimeoutMs": 30000, "shutdownTimeoutMs": 5000}`
/// (fields: configPath, projectPath, requestTimeoutMs, connectTimeoutMs, toolsTtlMs,
/// healthCheckIntervalMs, healthCheckIdleMs, autoReconnect, maxReconnectAttempts,
/// connectConcurrency, shutdownTimeoutMs, connectOnAdd, clientName, maxMessageBytes;
/// an unknown field is an error). Without configPath, $MCPMUX_CONFIG or the platform's
/// default file is used.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_pool_open(
    options_json: *const c_char,
    out_pool: *mut mcpmux_pool,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_pool, "out_pool")?;
        *out = 0;
        let options: PoolOptions = match unsafe { opt_str_arg(options_json, "options_json") }? {
            Some(text) => json_arg(text, "options_json")?,
            None => PoolOptions::default(),
        };
        let pool = block_on(Pool::open(options))?;
        *out = POOLS.insert(PoolEntry::new(pool));
        Ok(())
    })
}

/// Closes a pool and invalidates its handle at once (a second close is
/// MCPMUX_ERR_INVALID_HANDLE). Requests in flight get up to `drain_timeout_ms` to finish
/// (negative: the pool's shutdownTimeoutMs); those still running then end with
/// MCPMUX_ERR_SHUTTING_DOWN. Then every connection closes (stdio servers are stopped) and
/// every event subscription ends (finalizers run). From a host thread it returns when all
/// that is done and no callback of this pool is running any more; from inside a callback it
/// returns at once and the close completes in the background.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_pool_close(pool: mcpmux_pool, drain_timeout_ms: i64) -> mcpmux_status {
    guard(|| close_pool(pool, drain_timeout_ms))
}

/// Number of requests in flight in the pool (calls counted by the core pool).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_pool_in_flight(
    pool: mcpmux_pool,
    out_count: *mut usize,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_count, "out_count")?;
        *out = pool_entry(pool)?.pool.in_flight();
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// Servers
// ---------------------------------------------------------------------------------------

/// Every server of the pool, re-read from the config file: a JSON array of server records
/// (`[{"id": "mcp_...", "name": "...", "type": "stdio", "config": {...}, "isActive": true, ...}]`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_list(
    pool: mcpmux_pool,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, 0, out_json, |e| {
        let p = e.pool.clone();
        Ok(work(async move { p.list_servers().await }))
    })
}

/// One server record by id or name. MCPMUX_ERR_NOT_FOUND when there is none.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_get(
    pool: mcpmux_pool,
    server: *const c_char,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, 0, out_json, |e| {
        let server = unsafe { str_arg(server, "server") }?.to_owned();
        let p = e.pool.clone();
        Ok(work(async move { p.get_server(&server).await }))
    })
}

/// Adds a server from a JSON server input
/// (`{"name": "files", "config": {"command": "npx", "args": [...], "env": {...}}}`; `type`
/// is inferred when absent) and answers the saved record. An active server starts
/// connecting in the background (if connectOnAdd); a failed connect never fails the add.
/// An HTTP server (`{"name": "remote", "config": {"url": "https://..."}}`) that answers 401
/// is authorized with OAuth when it connects (mcpmux_pool_set_oauth_handler()); its
/// optional `config.oauth` settings are `{"clientId", "clientSecret", "clientMetadataUrl",
/// "scopes": [...], "grant": "authorization_code" | "client_credentials" |
/// "enterprise_managed", "privateKeyPem", "signingAlgorithm", "idp": {"issuer",
/// "tokenEndpoint", "clientId", "clientSecret", "tokenEndpointAuthMethod", "idToken"}}`
/// (without them: dynamic client registration; "idp" is the enterprise identity provider
/// where the user's "idToken" becomes an ID-JAG for the enterprise_managed grant).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_add(
    pool: mcpmux_pool,
    input_json: *const c_char,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, 0, out_json, |e| {
        let input: ServerInput =
            json_arg(unsafe { str_arg(input_json, "input_json") }?, "input_json")?;
        let p = e.pool.clone();
        Ok(work(async move { p.add_server(input).await }))
    })
}

/// Imports servers from a JSON text in Claude Desktop / Cursor (`{"mcpServers": {...}}`),
/// VS Code (`{"servers": {...}}`) or bare `{name: config}` form. Answers one result per
/// entry (`[{"name": ..., "success": true, "record": {...}}, {"name": ..., "success": false,
/// "error": "..."}]`): a bad entry fails alone.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_add_json(
    pool: mcpmux_pool,
    text: *const c_char,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, 0, out_json, |e| {
        let text = unsafe { str_arg(text, "text") }?.to_owned();
        let p = e.pool.clone();
        Ok(work(async move { p.add_json(&text).await }))
    })
}

/// Merges a JSON patch (any record fields, e.g. `{"isActive": false}` or
/// `{"disabledTools": ["x"]}`) into the server named by id or name; answers the updated
/// record. A change of type or config reconnects it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_update(
    pool: mcpmux_pool,
    server: *const c_char,
    patch_json: *const c_char,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, 0, out_json, |e| {
        let server = unsafe { str_arg(server, "server") }?.to_owned();
        let patch: ServerPatch =
            json_arg(unsafe { str_arg(patch_json, "patch_json") }?, "patch_json")?;
        let p = e.pool.clone();
        Ok(work(async move { p.update_server(&server, patch).await }))
    })
}

/// Removes a server (by id or name), closing its connection; answers the removed record.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_remove(
    pool: mcpmux_pool,
    server: *const c_char,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, 0, out_json, |e| {
        let server = unsafe { str_arg(server, "server") }?.to_owned();
        let p = e.pool.clone();
        Ok(work(async move { p.remove_server(&server).await }))
    })
}

/// Connection state of every server:
/// `[{"id": ..., "name": ..., "state": "connected", "protocolVersion": ..., "pid": 123}]`
/// (state is disconnected, connecting, connected or error).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_states(
    pool: mcpmux_pool,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        let entry = pool_entry(pool)?;
        *out = into_c_string(to_json(&entry.pool.server_states())?);
        Ok(())
    })
}

fn test_work(e: &Arc<PoolEntry>, server: *const c_char) -> FfiResult<Work> {
    let server = unsafe { str_arg(server, "server") }?.to_owned();
    let p = e.pool.clone();
    Ok(work(async move { p.test_server(&server).await }))
}

/// Tests a saved server on a fresh, separate connection: answers
/// `{"success": bool, "tools": ["name", ...], "error": "...", "protocolVersion": "...",
/// "durationMs": n}`. A server that fails to connect is a success of this call with
/// `"success": false`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_test(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| test_work(e, server))
}

/// Asynchronous mcpmux_servers_test().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_test_async(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        test_work(e, server)
    })
}

fn test_config_work(e: &Arc<PoolEntry>, input_json: *const c_char) -> FfiResult<Work> {
    let input: ServerInput = json_arg(unsafe { str_arg(input_json, "input_json") }?, "input_json")?;
    let p = e.pool.clone();
    Ok(work(async move { p.test_config(input).await }))
}

/// Like mcpmux_servers_test() for a server given as JSON input and not saved.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_test_config(
    pool: mcpmux_pool,
    input_json: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| {
        test_config_work(e, input_json)
    })
}

/// Asynchronous mcpmux_servers_test_config().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_test_config_async(
    pool: mcpmux_pool,
    input_json: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        test_config_work(e, input_json)
    })
}

fn discover_work(e: &Arc<PoolEntry>, server: *const c_char) -> FfiResult<Work> {
    let server = unsafe { str_arg(server, "server") }?.to_owned();
    let p = e.pool.clone();
    Ok(work(async move { p.discover(&server).await }))
}

/// Everything one server offers, through the pool's connection:
/// `{"tools": [...], "prompts": [...], "resources": [...], "promptsError": "...",
/// "resourcesError": "..."}` (MCP's own shapes).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_discover(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| discover_work(e, server))
}

/// Asynchronous mcpmux_servers_discover().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_discover_async(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        discover_work(e, server)
    })
}

fn connect_work(e: &Arc<PoolEntry>, server: *const c_char) -> FfiResult<Work> {
    let server = unsafe { str_arg(server, "server") }?.to_owned();
    let p = e.pool.clone();
    Ok(work(async move { p.connect(&server).await }))
}

/// Connects one server now (servers otherwise connect on first use); answers its state
/// (one element of mcpmux_servers_states()).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_connect(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| connect_work(e, server))
}

/// Asynchronous mcpmux_servers_connect().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_connect_async(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        connect_work(e, server)
    })
}

fn disconnect_work(e: &Arc<PoolEntry>, server: *const c_char) -> FfiResult<Work> {
    let server = unsafe { str_arg(server, "server") }?.to_owned();
    let p = e.pool.clone();
    Ok(work(async move { p.disconnect(&server).await }))
}

/// Closes one server's connection; it reconnects on next use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_disconnect(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
) -> mcpmux_status {
    blocking_unit(pool, timeout_ms, |e| disconnect_work(e, server))
}

/// Asynchronous mcpmux_servers_disconnect(); the callback's JSON is `null`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_disconnect_async(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        disconnect_work(e, server)
    })
}

// ---------------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------------

fn tools_list_work(e: &Arc<PoolEntry>, server: *const c_char) -> FfiResult<Work> {
    let server = unsafe { opt_str_arg(server, "server") }?.map(str::to_owned);
    let p = e.pool.clone();
    Ok(work(async move { p.list_tools(server.as_deref()).await }))
}

/// Tools of every active server, or of one (`server`: id or name; NULL for all), under
/// pool-unique ids: `[{"id": "mcp__files__read", "serverId": ..., "serverName": ...,
/// "name": "read", "description": ..., "inputSchema": {...}}]`. Listing all skips servers
/// that cannot be reached; asking for one that cannot be reached is an error.
/// `timeout_ms`: 0 for no limit of its own (the pool's timeouts still apply).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_tools_list(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| tools_list_work(e, server))
}

/// Asynchronous mcpmux_tools_list().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_tools_list_async(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        tools_list_work(e, server)
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

fn tools_call_work(
    e: &Arc<PoolEntry>,
    tool_id: *const c_char,
    arguments_json: *const c_char,
    timeout_ms: u32,
    on_progress: Option<ProgressFn>,
) -> FfiResult<Work> {
    let tool_id = unsafe { str_arg(tool_id, "tool_id") }?.to_owned();
    let arguments: serde_json::Value =
        match unsafe { opt_str_arg(arguments_json, "arguments_json") }? {
            Some(text) => json_arg(text, "arguments_json")?,
            None => serde_json::Value::Null,
        };
    let options = CallOptions {
        timeout: timeout_of(timeout_ms),
        on_progress,
        ..CallOptions::default()
    };
    let p = e.pool.clone();
    Ok(work(async move {
        p.call_tool(&tool_id, arguments, options).await
    }))
}

/// Calls a tool by its pool id (from mcpmux_tools_list()) with `arguments_json`, a JSON
/// object (NULL for none). Answers MCP's CallToolResult: `{"content": [...],
/// "structuredContent": {...}, "isError": false}`; a result with isError true is still
/// MCPMUX_OK, a JSON-RPC error from the server is MCPMUX_ERR_TOOL or
/// MCPMUX_ERR_PROTOCOL. `timeout_ms` (0: the server's or pool's request timeout) restarts
/// with each progress notification of the server.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_tools_call(
    pool: mcpmux_pool,
    tool_id: *const c_char,
    arguments_json: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, 0, out_json, |e| {
        tools_call_work(e, tool_id, arguments_json, timeout_ms, None)
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
        let work = tools_call_work(&entry, tool_id, arguments_json, timeout_ms, progress)?;
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

// ---------------------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------------------

fn resources_list_work(e: &Arc<PoolEntry>, server: *const c_char) -> FfiResult<Work> {
    let server = unsafe { opt_str_arg(server, "server") }?.map(str::to_owned);
    let p = e.pool.clone();
    Ok(work(
        async move { p.list_resources(server.as_deref()).await },
    ))
}

/// Resources of every server that offers them, or of one (NULL for all):
/// `[{"serverId": ..., "serverName": ..., "uri": ..., "name": ..., "mimeType": ...}]`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_resources_list(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| {
        resources_list_work(e, server)
    })
}

/// Asynchronous mcpmux_resources_list().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_resources_list_async(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        resources_list_work(e, server)
    })
}

fn templates_work(e: &Arc<PoolEntry>, server: *const c_char) -> FfiResult<Work> {
    let server = unsafe { opt_str_arg(server, "server") }?.map(str::to_owned);
    let p = e.pool.clone();
    Ok(work(async move {
        p.list_resource_templates(server.as_deref()).await
    }))
}

/// Resource templates of every server that offers them, or of one (NULL for all):
/// `[{"serverId": ..., "serverName": ..., "uriTemplate": ..., "name": ...}]`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_resources_templates(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| templates_work(e, server))
}

/// Asynchronous mcpmux_resources_templates().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_resources_templates_async(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        templates_work(e, server)
    })
}

/// Which resource call to make: they share their arguments.
#[derive(Clone, Copy)]
enum ResourceOp {
    Read,
    Subscribe,
    Unsubscribe,
}

fn resource_work(
    e: &Arc<PoolEntry>,
    server: *const c_char,
    uri: *const c_char,
    op: ResourceOp,
) -> FfiResult<Work> {
    let server = unsafe { str_arg(server, "server") }?.to_owned();
    let uri = unsafe { str_arg(uri, "uri") }?.to_owned();
    let p = e.pool.clone();
    Ok(match op {
        ResourceOp::Read => work(async move { p.read_resource(&server, &uri).await }),
        ResourceOp::Subscribe => work(async move { p.subscribe_resource(&server, &uri).await }),
        ResourceOp::Unsubscribe => work(async move { p.unsubscribe_resource(&server, &uri).await }),
    })
}

/// Reads one resource of one server (id or name): MCP's ReadResourceResult,
/// `{"contents": [{"uri": ..., "mimeType": ..., "text": ...}]}` (`blob` for binary).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_resources_read(
    pool: mcpmux_pool,
    server: *const c_char,
    uri: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| {
        resource_work(e, server, uri, ResourceOp::Read)
    })
}

/// Asynchronous mcpmux_resources_read().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_resources_read_async(
    pool: mcpmux_pool,
    server: *const c_char,
    uri: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        resource_work(e, server, uri, ResourceOp::Read)
    })
}

/// Subscribes to changes of a resource; they arrive as `resource:updated` events
/// (mcpmux_events_subscribe()). A server without subscriptions answers
/// MCPMUX_ERR_PROTOCOL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_resources_subscribe(
    pool: mcpmux_pool,
    server: *const c_char,
    uri: *const c_char,
    timeout_ms: u32,
) -> mcpmux_status {
    blocking_unit(pool, timeout_ms, |e| {
        resource_work(e, server, uri, ResourceOp::Subscribe)
    })
}

/// Asynchronous mcpmux_resources_subscribe(); the callback's JSON is `null`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_resources_subscribe_async(
    pool: mcpmux_pool,
    server: *const c_char,
    uri: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        resource_work(e, server, uri, ResourceOp::Subscribe)
    })
}

/// Ends a subscription made with mcpmux_resources_subscribe().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_resources_unsubscribe(
    pool: mcpmux_pool,
    server: *const c_char,
    uri: *const c_char,
    timeout_ms: u32,
) -> mcpmux_status {
    blocking_unit(pool, timeout_ms, |e| {
        resource_work(e, server, uri, ResourceOp::Unsubscribe)
    })
}

/// Asynchronous mcpmux_resources_unsubscribe(); the callback's JSON is `null`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_resources_unsubscribe_async(
    pool: mcpmux_pool,
    server: *const c_char,
    uri: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        resource_work(e, server, uri, ResourceOp::Unsubscribe)
    })
}

// ---------------------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------------------

fn prompts_list_work(e: &Arc<PoolEntry>, server: *const c_char) -> FfiResult<Work> {
    let server = unsafe { opt_str_arg(server, "server") }?.map(str::to_owned);
    let p = e.pool.clone();
    Ok(work(async move { p.list_prompts(server.as_deref()).await }))
}

/// Prompts of every server that offers them, or of one (NULL for all):
/// `[{"serverId": ..., "serverName": ..., "name": ..., "arguments": [...]}]`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_prompts_list(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| prompts_list_work(e, server))
}

/// Asynchronous mcpmux_prompts_list().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_prompts_list_async(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        prompts_list_work(e, server)
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

// ---------------------------------------------------------------------------------------
// Roots (what servers see from roots/list)
// ---------------------------------------------------------------------------------------

#[allow(
    deprecated,
    reason = "roots are deprecated by SEP-2577 but servers still ask for them"
)]
/// Roots as every binding reads them (`mcpmux_core::host::answers::roots`).
fn roots_arg(text: &str, name: &str) -> FfiResult<Vec<mcpmux_core::model::Root>> {
    let value: serde_json::Value = json_arg(text, name)?;
    mcpmux_core::host::answers::roots(value)
        .map_err(|e| crate::error::FfiError::invalid(format!("{name}: {e}")))
}

/// Replaces the roots every server sees unless it has its own, a JSON array
/// `[{"uri": "file:///home/me/project", "name": "project"}]` (a root may also be just its URI,
/// `["file:///home/me/project"]`); connected servers are told
/// the list changed. Set them before connecting for servers that read roots only once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_roots_set(
    pool: mcpmux_pool,
    roots_json: *const c_char,
) -> mcpmux_status {
    blocking_unit(pool, 0, |e| {
        let roots = roots_arg(unsafe { str_arg(roots_json, "roots_json") }?, "roots_json")?;
        let p = e.pool.clone();
        Ok(work(async move {
            p.set_roots(roots).await;
            Ok(())
        }))
    })
}

/// The roots of the pool (not a server's own) as a JSON array.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_roots_get(
    pool: mcpmux_pool,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        let entry = pool_entry(pool)?;
        *out = into_c_string(to_json(&entry.pool.roots())?);
        Ok(())
    })
}

/// Gives one server (id or name) its own roots, a JSON array like mcpmux_roots_set()'s;
/// `roots_json` NULL gives it the pool's roots again. The server is told if connected.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_roots_set_for_server(
    pool: mcpmux_pool,
    server: *const c_char,
    roots_json: *const c_char,
) -> mcpmux_status {
    blocking_unit(pool, 0, |e| {
        let server = unsafe { str_arg(server, "server") }?.to_owned();
        let roots = match unsafe { opt_str_arg(roots_json, "roots_json") }? {
            Some(text) => Some(roots_arg(text, "roots_json")?),
            None => None,
        };
        let p = e.pool.clone();
        Ok(work(
            async move { p.set_server_roots(&server, roots).await },
        ))
    })
}
