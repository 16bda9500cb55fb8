//! Resources and resource templates: listing, reading, subscribing.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use crate::bodies::{asynchronous, blocking, blocking_unit, list_work, work};
use crate::calls::{PoolEntry, Work};
use crate::error::{FfiResult, str_arg};
use crate::mcpmux_status;
use crate::{mcpmux_completion_fn, mcpmux_pool, mcpmux_request_id};

fn resources_list_work(
    e: &Arc<PoolEntry>,
    server: *const c_char,
    options_json: *const c_char,
) -> FfiResult<Work> {
    list_work(e, server, options_json, |p, server, options| async move {
        p.list_resources_with(server.as_deref(), options).await
    })
}

/// Resources of every server that offers them, or of one (NULL for all):
/// `[{"serverId": ..., "serverName": ..., "uri": ..., "name": ..., "mimeType": ...}]`.
/// `options_json`: NULL, or `{"refresh": true}` (see mcpmux_tools_list()).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_resources_list(
    pool: mcpmux_pool,
    server: *const c_char,
    options_json: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| {
        resources_list_work(e, server, options_json)
    })
}

/// Asynchronous mcpmux_resources_list().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_resources_list_async(
    pool: mcpmux_pool,
    server: *const c_char,
    options_json: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        resources_list_work(e, server, options_json)
    })
}

fn templates_work(
    e: &Arc<PoolEntry>,
    server: *const c_char,
    options_json: *const c_char,
) -> FfiResult<Work> {
    list_work(e, server, options_json, |p, server, options| async move {
        p.list_resource_templates_with(server.as_deref(), options)
            .await
    })
}

/// Resource templates of every server that offers them, or of one (NULL for all):
/// `[{"serverId": ..., "serverName": ..., "uriTemplate": ..., "name": ...}]`.
/// `options_json`: NULL, or `{"refresh": true}` (see mcpmux_tools_list()).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_resources_templates(
    pool: mcpmux_pool,
    server: *const c_char,
    options_json: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| {
        templates_work(e, server, options_json)
    })
}

/// Asynchronous mcpmux_resources_templates().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_resources_templates_async(
    pool: mcpmux_pool,
    server: *const c_char,
    options_json: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        templates_work(e, server, options_json)
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
/// (mcpmux_events_subscribe()). The subscription holds over reconnects until
/// mcpmux_resources_unsubscribe(). A server without subscriptions, or one that refuses this
/// resource, answers MCPMUX_ERR_PROTOCOL, with the resource named in the message.
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
