//! Tools of the host application, listed and called beside the servers' tools.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use mcpmux_core::HostTool;

use serde_json::Value;

use crate::bodies::{clear, opt_out};
use crate::calls::pool_entry;
use crate::error::{FfiError, guard, json_arg, opt_str_arg, str_arg, to_json};
use crate::host::{CHandler, Pending, ask, required_handler};
use crate::mcpmux_status::{self, *};
use crate::{mcpmux_free_fn, mcpmux_host_cancel_fn, mcpmux_host_request_fn, mcpmux_pool};

/// Registers (or replaces) a tool of the host application, listed with the servers' tools
/// under server "local" and called through mcpmux_tools_call() with its `name` as tool id,
/// and by agents and conversations. `name`: 1 to 64 characters of `[A-Za-z0-9_-]`, not
/// starting with `mcp__`; `input_schema_json`: a JSON Schema object with `"type":
/// "object"`; `description` may be NULL.
///
/// Each call's arguments are checked against the schema first (a bad call answers an
/// isError result with the errors and the schema, without calling `handler`). Then
/// `handler(user_data, request, arguments_json, len)` runs on a library thread and must
/// answer `request` exactly once, inside the handler or later from any thread, with
/// mcpmux_host_request_respond() (the result JSON) or mcpmux_host_request_refuse() (an
/// isError result with the reason). `on_cancel` (may be NULL) learns that a call is no
/// longer awaited (it was cancelled or timed out, or the pool closed).
/// `free_user_data` (may be NULL) runs once, after the last callback: when the tool is
/// replaced or unregistered, or the pool closed, and no call of it is waiting. When this
/// function fails, none of them is ever called and `user_data` stays the caller's.
/// `out_json` (may be NULL) receives the tool as mcpmux_tools_list() lists it.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments, reason = "a C signature")]
pub unsafe extern "C" fn mcpmux_tools_register(
    pool: mcpmux_pool,
    name: *const c_char,
    description: *const c_char,
    input_schema_json: *const c_char,
    handler: mcpmux_host_request_fn,
    on_cancel: mcpmux_host_cancel_fn,
    user_data: *mut c_void,
    free_user_data: mcpmux_free_fn,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        clear(out_json);
        let entry = pool_entry(pool)?;
        let name = unsafe { str_arg(name, "name") }?.to_owned();
        let description = unsafe { opt_str_arg(description, "description") }?
            .unwrap_or_default()
            .to_owned();
        let schema: Value = json_arg(
            unsafe { str_arg(input_schema_json, "input_schema_json") }?,
            "input_schema_json",
        )?;
        let f = required_handler(handler, "handler")?;
        let h = CHandler::new(f, on_cancel, user_data, free_user_data, None);
        let tool_handler = h.clone();
        let tool = HostTool {
            name,
            description,
            input_schema: schema,
            handler: Arc::new(move |arguments: Value| {
                let answer = ask(tool_handler.clone(), arguments.to_string(), Pending::Tool);
                Box::pin(async move {
                    answer
                        .await
                        .unwrap_or_else(|| Err("the host did not answer".into()))
                })
            }),
        };
        match entry.pool.register_tool(tool) {
            Ok(info) => {
                drop(h);
                opt_out(out_json, || to_json(&info))
            }
            Err(e) => {
                h.disarm();
                Err(e.into())
            }
        }
    })
}

/// Removes a host tool registered with mcpmux_tools_register() (or one of the recipe
/// tools); calls of it already running still get their answer. MCPMUX_ERR_NOT_FOUND when
/// there is no host tool of that name.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_tools_unregister(
    pool: mcpmux_pool,
    name: *const c_char,
) -> mcpmux_status {
    guard(|| {
        let entry = pool_entry(pool)?;
        let name = unsafe { str_arg(name, "name") }?;
        if entry.pool.unregister_tool(name) {
            Ok(())
        } else {
            Err(FfiError::new(
                MCPMUX_ERR_NOT_FOUND,
                format!("there is no host tool '{name}'"),
            ))
        }
    })
}
