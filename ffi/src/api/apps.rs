//! MCP Apps (`io.modelcontextprotocol/ui`, with the pool option `apps`): a tool's view read
//! and checked with the policy to load it under, the view's own calls (its server's tools for
//! apps, its server's resources), and a view's bridge, which answers what the view posts.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use mcpmux_core::{AppBridge, AppView, CallOptions};
use serde_json::Value;

use crate::bodies::{answer_json, asynchronous, blocking, free_handle, new_handle, work};
use crate::calls::{PoolEntry, Work, pool_entry, run_async, run_blocking_into, timeout_of};
use crate::error::{FfiResult, guard, json_arg, opt_str_arg, out_arg, str_arg};
use crate::handles::{Table, Tag};
use crate::mcpmux_status;
use crate::{mcpmux_app_bridge, mcpmux_completion_fn, mcpmux_pool, mcpmux_request_id};

pub(crate) struct BridgeEntry {
    bridge: Arc<AppBridge>,
    pool: Arc<PoolEntry>,
}

static BRIDGES: Table<BridgeEntry> = Table::new(Tag::AppBridge, "app bridge");

fn view_arg(view_json: *const c_char) -> FfiResult<AppView> {
    json_arg(unsafe { str_arg(view_json, "view_json") }?, "view_json")
}

fn view_work(e: &Arc<PoolEntry>, tool_id: *const c_char) -> FfiResult<Work> {
    let tool_id = unsafe { str_arg(tool_id, "tool_id") }?.to_owned();
    let p = e.pool.clone();
    Ok(work(async move { p.app_view(&tool_id).await }))
}

/// The view of a tool (its `_meta.ui.resourceUri`), read from its server and checked:
/// `{"toolId", "serverId", "serverName", "resourceUri", "mimeType", "html", "csp":
/// {"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"},
/// "contentSecurityPolicy", "permissions": {"camera", "microphone", "geolocation",
/// "clipboardWrite"}, "allow", "prefersBorder"?, "domain"?, "tool": {...}}`. Load `html` in a
/// sandboxed frame under `contentSecurityPolicy`, with `allow` as its allow attribute. Without
/// the pool option `apps`, or for a tool without a view: MCPMUX_ERR_INVALID_ARGUMENT.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_app_view(
    pool: mcpmux_pool,
    tool_id: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| view_work(e, tool_id))
}

/// Asynchronous mcpmux_app_view().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_app_view_async(
    pool: mcpmux_pool,
    tool_id: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        view_work(e, tool_id)
    })
}

fn call_work(
    e: &Arc<PoolEntry>,
    view_json: *const c_char,
    name: *const c_char,
    arguments_json: *const c_char,
) -> FfiResult<Work> {
    let view = view_arg(view_json)?;
    let name = unsafe { str_arg(name, "name") }?.to_owned();
    let arguments: Value = match unsafe { opt_str_arg(arguments_json, "arguments_json") }? {
        Some(text) => json_arg(text, "arguments_json")?,
        None => Value::Object(Default::default()),
    };
    let p = e.pool.clone();
    Ok(work(async move {
        p.app_call(&view, &name, arguments, CallOptions::default())
            .await
    }))
}

/// A call the view `view_json` (from mcpmux_app_view()) makes: `name` is the tool's own
/// name on the view's server (a view reaches no other), `arguments_json` a JSON object (NULL
/// for none). A tool not visible to apps (`_meta.ui.visibility`) is
/// MCPMUX_ERR_INVALID_ARGUMENT; an unknown one MCPMUX_ERR_NOT_FOUND. Answers a CallToolResult.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_app_call(
    pool: mcpmux_pool,
    view_json: *const c_char,
    name: *const c_char,
    arguments_json: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| {
        call_work(e, view_json, name, arguments_json)
    })
}

/// Asynchronous mcpmux_app_call(); mcpmux_cancel() cancels it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_app_call_async(
    pool: mcpmux_pool,
    view_json: *const c_char,
    name: *const c_char,
    arguments_json: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        call_work(e, view_json, name, arguments_json)
    })
}

fn read_work(e: &Arc<PoolEntry>, view_json: *const c_char, uri: *const c_char) -> FfiResult<Work> {
    let view = view_arg(view_json)?;
    let uri = unsafe { str_arg(uri, "uri") }?.to_owned();
    let p = e.pool.clone();
    Ok(work(async move { p.app_read_resource(&view, &uri).await }))
}

/// A resource the view `view_json` reads, from its own server: a ReadResourceResult.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_app_read_resource(
    pool: mcpmux_pool,
    view_json: *const c_char,
    uri: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| read_work(e, view_json, uri))
}

/// Asynchronous mcpmux_app_read_resource().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_app_read_resource_async(
    pool: mcpmux_pool,
    view_json: *const c_char,
    uri: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        read_work(e, view_json, uri)
    })
}

/// The bridge of a view being rendered (`view_json` from mcpmux_app_view()): pass each
/// message the view posts to mcpmux_app_bridge_handle() and post back what it gives.
/// `host_context_json` (NULL for none) is what views learn of the host in `ui/initialize`,
/// e.g. `{"theme": "dark", "displayMode": "inline"}`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_app_bridge_new(
    pool: mcpmux_pool,
    view_json: *const c_char,
    host_context_json: *const c_char,
    out_bridge: *mut mcpmux_app_bridge,
) -> mcpmux_status {
    new_handle(out_bridge, "out_bridge", &BRIDGES, || {
        let entry = pool_entry(pool)?;
        let view = view_arg(view_json)?;
        let context: Value = match unsafe { opt_str_arg(host_context_json, "host_context_json") }? {
            Some(text) => json_arg(text, "host_context_json")?,
            None => Value::Object(Default::default()),
        };
        Ok(BridgeEntry {
            bridge: Arc::new(entry.pool.app_bridge(view, context)),
            pool: entry,
        })
    })
}

/// Frees a bridge handle. A second free is MCPMUX_ERR_INVALID_HANDLE; 0 is ignored.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_app_bridge_free(bridge: mcpmux_app_bridge) -> mcpmux_status {
    free_handle(&BRIDGES, bridge)
}

fn handle_work(b: &Arc<BridgeEntry>, message_json: *const c_char) -> FfiResult<Work> {
    let message: Value = json_arg(
        unsafe { str_arg(message_json, "message_json") }?,
        "message_json",
    )?;
    let bridge = b.bridge.clone();
    Ok(work(async move {
        Ok::<_, mcpmux_core::Error>(bridge.handle(message).await)
    }))
}

/// One message the view posted (JSON-RPC, as JSON text): `{"post": [messages to post back, in
/// order], "host": message}`, where `host` (absent when none) is a message only the host acts
/// on: `ui/open-link`, `ui/message`, `ui/update-model-context`, `ui/request-display-mode`
/// (the host posts their reply) or `ui/notifications/size-changed`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_app_bridge_handle(
    bridge: mcpmux_app_bridge,
    message_json: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        let b = BRIDGES.get(bridge)?;
        let work = handle_work(&b, message_json)?;
        run_blocking_into(&b.pool, work, timeout_of(timeout_ms), out)
    })
}

/// Asynchronous mcpmux_app_bridge_handle().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_app_bridge_handle_async(
    bridge: mcpmux_app_bridge,
    message_json: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    guard(|| {
        let b = BRIDGES.get(bridge)?;
        let work = handle_work(&b, message_json)?;
        run_async(
            &b.pool,
            work,
            timeout_of(timeout_ms),
            callback,
            user_data,
            out_request_id,
            None,
        )
    })
}

/// The tool's arguments (a JSON object): the messages to post to the view now, a JSON array
/// (empty before the view is initialized; mcpmux_app_bridge_handle() gives them then).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_app_bridge_tool_input(
    bridge: mcpmux_app_bridge,
    arguments_json: *const c_char,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    answer_json(out_json, || {
        let b = BRIDGES.get(bridge)?;
        let arguments: Value = json_arg(
            unsafe { str_arg(arguments_json, "arguments_json") }?,
            "arguments_json",
        )?;
        Ok(b.bridge.tool_input(arguments))
    })
}

/// The tool's result (a CallToolResult): the messages to post to the view now, a JSON array.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_app_bridge_tool_result(
    bridge: mcpmux_app_bridge,
    result_json: *const c_char,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    answer_json(out_json, || {
        let b = BRIDGES.get(bridge)?;
        let result: mcpmux_core::model::CallToolResult = json_arg(
            unsafe { str_arg(result_json, "result_json") }?,
            "result_json",
        )?;
        Ok(b.bridge.tool_result(&result))
    })
}

/// The tool's call did not finish (`reason` says why): the messages to post now, a JSON array.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_app_bridge_tool_cancelled(
    bridge: mcpmux_app_bridge,
    reason: *const c_char,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    answer_json(out_json, || {
        let b = BRIDGES.get(bridge)?;
        let reason = unsafe { str_arg(reason, "reason") }?;
        Ok(b.bridge.tool_cancelled(reason))
    })
}

/// A reply to the view's request `id_json` (its id, as JSON: a string or a number), for the
/// requests mcpmux_app_bridge_handle() leaves to the host (`ui/open-link`, `ui/message`, ...):
/// with `error_message` NULL, the result `result_json` (a JSON object; NULL for `{}`), else an
/// error the view sees with that message. The JSON-RPC message to post, as JSON.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_app_bridge_reply(
    id_json: *const c_char,
    result_json: *const c_char,
    error_message: *const c_char,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    answer_json(out_json, || {
        let id: Value = json_arg(unsafe { str_arg(id_json, "id_json") }?, "id_json")?;
        let answer = match unsafe { opt_str_arg(error_message, "error_message") }? {
            Some(message) => Err(message.to_owned()),
            None => match unsafe { opt_str_arg(result_json, "result_json") }? {
                Some(result) => Ok(json_arg(result, "result_json")?),
                None => Ok(Value::Object(Default::default())),
            },
        };
        Ok(AppBridge::reply(&id, answer)?)
    })
}
