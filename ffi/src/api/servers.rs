//! The servers of a pool: their records, connections, tests and what each offers.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use mcpmux_core::{ServerInput, ServerPatch};

use crate::bodies::{answer_json, asynchronous, blocking, blocking_unit, work};
use crate::calls::{PoolEntry, Work, pool_entry};
use crate::error::{FfiResult, json_arg, str_arg};
use crate::mcpmux_status;
use crate::{mcpmux_completion_fn, mcpmux_pool, mcpmux_request_id};

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
/// A server already saved under its name as given is answered as it is, with the fields the
/// input leaves out as they are saved (so a host can add it again at every start, after its
/// user disabled or trusted it); one that differs in what the input names is
/// MCPMUX_ERR_INVALID_ARGUMENT, the message naming the fields that differ.
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
/// entry (`[{"name": ..., "success": true, "record": {...}, "alreadyThere": false},
/// {"name": ..., "success": false, "error": "...", "alreadyThere": false}]`): a bad entry fails
/// alone, and `alreadyThere` is true for a server saved before as the entry asks (nothing was
/// added). A server added so is saved `"pending": true`: nothing of it runs until the user
/// has seen what it would run (the `server:pending` event's `consent`) and the host approves
/// it with mcpmux_servers_update(pool, name, "{\"pending\": false}", ...).
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
/// `{"disabledTools": ["x"]}`, or `{"pending": false}` to approve an imported server) into
/// the server named by id or name; answers the updated record. A change of type or config
/// reconnects it.
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

/// Connection state of every server, with what it said of itself at its last connection
/// (known before it connects, from the catalog):
/// `[{"id": ..., "name": ..., "state": "connected", "protocolVersion": ..., "pid": 123,
/// "serverInfo": {"name": ..., "version": ..., "title": ..., "icons": [...]},
/// "instructions": "...", "capabilities": {...}}]` (state is disconnected, connecting,
/// connected or error).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_servers_states(
    pool: mcpmux_pool,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    answer_json(out_json, || Ok(pool_entry(pool)?.pool.server_states()))
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
