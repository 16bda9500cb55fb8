//! Conversations: a host loop's view of the pool's tools, with discovery.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use mcpmux_core::{CallOptions, Conversation};

use serde_json::Value;

use crate::bodies::{answer_json, free_handle, new_handle, work};
use crate::calls::{PoolEntry, Work, pool_entry, run_async, run_blocking_into, timeout_of};
use crate::error::{FfiResult, guard, json_arg, opt_str_arg, out_arg, str_arg};
use crate::handles::{Table, Tag};
use crate::mcpmux_status::{self};
use crate::{mcpmux_completion_fn, mcpmux_conversation, mcpmux_pool, mcpmux_request_id};

pub(crate) struct ConversationEntry {
    conversation: Arc<Conversation>,
    pool: Arc<PoolEntry>,
}

static CONVERSATIONS: Table<ConversationEntry> = Table::new(Tag::Conversation, "conversation");

/// Starts a conversation over an open pool: what an LLM of the host's own loop may call.
/// It offers discovery tools first (`search_tools`, and per server `{server}_mcp_list_tools`,
/// `_search_tools`, `_list_recipes`, `_search_recipes`, `_get_recipe`), answered locally;
/// calling a server's real tool activates all that server's tools. `filter_json` (NULL: all
/// servers): `{"enabled": [ids or names], "disabled": [...]}`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_conversation_new(
    pool: mcpmux_pool,
    filter_json: *const c_char,
    out_conversation: *mut mcpmux_conversation,
) -> mcpmux_status {
    new_handle(out_conversation, "out_conversation", &CONVERSATIONS, || {
        let entry = pool_entry(pool)?;
        // Core does not export the filter's type; its parameter names it here.
        let conversation = Arc::new(match unsafe { opt_str_arg(filter_json, "filter_json") }? {
            Some(text) => entry.pool.conversation_with(json_arg(text, "filter_json")?),
            None => entry.pool.conversation(),
        });
        Ok(ConversationEntry {
            conversation,
            pool: entry,
        })
    })
}

/// Frees a conversation handle; calls in progress finish. A second free is
/// MCPMUX_ERR_INVALID_HANDLE; 0 is ignored.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_conversation_free(conversation: mcpmux_conversation) -> mcpmux_status {
    free_handle(&CONVERSATIONS, conversation)
}

/// The function definitions to offer the LLM now:
/// `[{"name": ..., "description": ..., "inputSchema": {...}}]`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_conversation_tools(
    conversation: mcpmux_conversation,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    answer_json(out_json, || {
        Ok(CONVERSATIONS.get(conversation)?.conversation.tools())
    })
}

/// Ids of the servers the conversation has activated so far (a JSON array).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_conversation_activated(
    conversation: mcpmux_conversation,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    answer_json(out_json, || {
        Ok(CONVERSATIONS.get(conversation)?.conversation.activated())
    })
}

fn conversation_call_work(
    c: &Arc<ConversationEntry>,
    name: *const c_char,
    arguments_json: *const c_char,
    timeout_ms: u32,
) -> FfiResult<Work> {
    let name = unsafe { str_arg(name, "name") }?.to_owned();
    let arguments: Value = match unsafe { opt_str_arg(arguments_json, "arguments_json") }? {
        Some(text) => json_arg(text, "arguments_json")?,
        None => Value::Object(Default::default()),
    };
    let options = CallOptions {
        timeout: timeout_of(timeout_ms),
        ..CallOptions::default()
    };
    let c = c.clone();
    Ok(work(async move {
        c.conversation.call(&name, arguments, options).await
    }))
}

/// Calls a function the LLM asked for by `name` (a discovery tool, a host tool or a pool
/// tool id) with `arguments_json` (a JSON object, NULL for none): answers a CallToolResult
/// like mcpmux_tools_call(). `timeout_ms`: 0 for the pool's request timeout.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_conversation_call(
    conversation: mcpmux_conversation,
    name: *const c_char,
    arguments_json: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        let c = CONVERSATIONS.get(conversation)?;
        let work = conversation_call_work(&c, name, arguments_json, timeout_ms)?;
        run_blocking_into(&c.pool, work, None, out)
    })
}

/// Asynchronous mcpmux_conversation_call(); mcpmux_cancel() cancels it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_conversation_call_async(
    conversation: mcpmux_conversation,
    name: *const c_char,
    arguments_json: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    guard(|| {
        let c = CONVERSATIONS.get(conversation)?;
        let work = conversation_call_work(&c, name, arguments_json, timeout_ms)?;
        run_async(
            &c.pool,
            work,
            None,
            callback,
            user_data,
            out_request_id,
            None,
        )
    })
}
