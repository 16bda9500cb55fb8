//! Requests the host answers: the handlers of servers' sampling and elicitation requests,
//! and the answers to every kind of host request.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use mcpmux_core::host::BoxFuture;
use mcpmux_core::{ElicitationHandler, HostRequest, SamplingHandler, SamplingSupport};
use serde::Serialize;
use tokio::sync::oneshot;

use crate::bodies;
use crate::calls::pool_entry;
use crate::error::{guard, opt_json_arg, opt_str_arg, str_arg};
use crate::host::{CHandler, Pending, ask, read_answer, refuse, respond, stream_token, waiting};
use crate::mcpmux_status;
use crate::{mcpmux_free_fn, mcpmux_host_request_fn, mcpmux_host_request_id, mcpmux_pool};

fn server_request<P: Serialize, R: Send + 'static>(
    handler: Arc<CHandler>,
    request: HostRequest<P>,
    pending: impl FnOnce(oneshot::Sender<Result<R, String>>) -> Pending,
) -> BoxFuture<Result<R, String>> {
    let json = serde_json::to_string(&request).unwrap_or_default();
    let answer = ask(handler, json, pending);
    Box::pin(async move {
        answer
            .await
            .unwrap_or_else(|| Err("the host did not answer".into()))
    })
}

fn handler_of(
    handler: mcpmux_host_request_fn,
    user_data: *mut c_void,
    free_user_data: mcpmux_free_fn,
) -> Option<Arc<CHandler>> {
    handler.map(|f| CHandler::new(f, None, user_data, free_user_data, None))
}

/// Answers servers' sampling requests (`sampling/createMessage`) with `handler`; NULL
/// removes it (then `user_data` and `free_user_data` are ignored) and servers are refused.
/// `handler(user_data, request, json, len)` receives
/// `{"serverId": ..., "serverName": ..., "params": {"messages": [...], "maxTokens": ...}}`
/// on a library thread and must answer `request` exactly once, then or later, from any
/// thread, with mcpmux_host_request_respond() or mcpmux_host_request_refuse().
/// Servers learn that sampling is available when they connect: set it before connecting.
/// `options_json`: NULL, or `{"tools": true}` for a handler that reads the request's `tools`
/// and `toolChoice` and may answer `tool_use` content with `"stopReason": "toolUse"` (servers
/// are told with the `sampling.tools` capability). `free_user_data` (may be NULL) runs once
/// the handler is replaced or removed, or the pool closed, and no call of it is running.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_pool_set_sampling_handler(
    pool: mcpmux_pool,
    options_json: *const c_char,
    handler: mcpmux_host_request_fn,
    user_data: *mut c_void,
    free_user_data: mcpmux_free_fn,
) -> mcpmux_status {
    guard(|| {
        let entry = pool_entry(pool)?;
        let support: SamplingSupport = unsafe { opt_json_arg(options_json, "options_json") }?;
        let h: Option<SamplingHandler> = handler_of(handler, user_data, free_user_data).map(|h| {
            Arc::new(move |req| server_request(h.clone(), req, Pending::Sampling))
                as SamplingHandler
        });
        entry.pool.set_sampling_handler_with(h, support);
        Ok(())
    })
}

/// Like mcpmux_pool_set_sampling_handler(), for elicitation requests
/// (`elicitation/create`, form and URL modes; `params` carries `message` and
/// `requestedSchema` or `url`). Without a handler they are declined.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_pool_set_elicitation_handler(
    pool: mcpmux_pool,
    handler: mcpmux_host_request_fn,
    user_data: *mut c_void,
    free_user_data: mcpmux_free_fn,
) -> mcpmux_status {
    guard(|| {
        let entry = pool_entry(pool)?;
        let h: Option<ElicitationHandler> =
            handler_of(handler, user_data, free_user_data).map(|h| {
                Arc::new(move |req| server_request(h.clone(), req, Pending::Elicitation))
                    as ElicitationHandler
            });
        entry.pool.set_elicitation_handler(h);
        Ok(())
    })
}

/// Answers a host request with its result as JSON, read as in every language (the table of
/// answers and what they give is tests/contract/host_answers.json; mcpmux_host_answer_read()
/// shows what an answer gives):
/// - sampling: MCP's CreateMessageResult (`{"role": "assistant", "content": {"type": "text",
///   "text": "..."}, "model": "...", "stopReason": "endTurn"}`), or just the text (a JSON
///   string: model "host", stopReason "endTurn");
/// - elicitation: an ElicitResult (`{"action": "accept", "content": {...}}`, or action
///   "decline" / "cancel"), or the content alone (accepted), or `null` (declined);
/// - host tool (mcpmux_tools_register()): a CallToolResult (`{"content": [...],
///   "isError": false}`; `is_error`, `structured_content` also read), or any other JSON: a
///   string becomes text content, `null` no content, an object its JSON text plus
///   structuredContent, anything else its JSON text;
/// - host provider (mcpmux_provider_new_host()): a response, `{"content": [{"type": "text",
///   "text": "..."} | {"type": "tool_use", "id": "...", "name": "...", "input": {...}}],
///   "stopReason": "end_turn" | "tool_use" | "max_tokens", "usage": {"inputTokens": n,
///   "outputTokens": n}}` (stopReason and usage optional), or just the text;
/// - approval (mcpmux_agent_run()): `"once"` or `"allow"` or `true` (this call), `"always"`
///   (for the rest of the agent's life), `"deny"` or `false` or `null` (words in any case,
///   quoted or not);
/// - OAuth authorization (mcpmux_pool_set_oauth_handler()): the URL the authorization
///   server redirected to, with its code and state, as a JSON string
///   (`"http://localhost:3000/callback?code=...&state=..."`; the bare URL is accepted too);
/// - token store load (mcpmux_pool_set_token_store()): the credentials saved for the
///   server (any JSON value, as it was given to save), or `null` for none;
/// - token store save and clear: any JSON, e.g. `null`.
///
/// JSON of the wrong shape is MCPMUX_ERR_INVALID_ARGUMENT with a message saying what is
/// expected, and the request still waits for a good answer; MCPMUX_ERR_NOT_FOUND when it
/// was answered already or nobody waits for it any more. The answer may be given inside
/// the handler (a synchronous answer) or later from any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_host_request_respond(
    request: mcpmux_host_request_id,
    result_json: *const c_char,
) -> mcpmux_status {
    guard(|| {
        let text = unsafe { str_arg(result_json, "result_json") }?;
        respond(request, text)
    })
}

/// Refuses a host request with `reason` (NULL: "refused by the host"): a server sees an
/// error; a host tool's call becomes a result with isError and `reason` as its text; a host
/// provider's request fails the agent run with MCPMUX_ERR_CONNECTION; an approval is a
/// denial; an OAuth authorization or a token store operation fails with `reason` (the
/// connection attempt then fails with MCPMUX_ERR_CONNECTION). MCPMUX_ERR_NOT_FOUND when
/// it was answered already or nobody waits any more.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_host_request_refuse(
    request: mcpmux_host_request_id,
    reason: *const c_char,
) -> mcpmux_status {
    guard(|| {
        let reason = unsafe { opt_str_arg(reason, "reason") }?.unwrap_or("refused by the host");
        refuse(request, reason)
    })
}

/// Streams a piece of a host provider's answer (`text`, UTF-8) to the agent run that asked,
/// before answering `request` with mcpmux_host_request_respond(); the run's token callback
/// receives it on the calling thread. Ignored (MCPMUX_OK) when the run has no token
/// callback; MCPMUX_ERR_INVALID_ARGUMENT for a request that is not a provider's;
/// MCPMUX_ERR_NOT_FOUND once the request is answered or nobody waits for it any more.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_host_request_token(
    request: mcpmux_host_request_id,
    text: *const c_char,
) -> mcpmux_status {
    guard(|| {
        let text = unsafe { str_arg(text, "text") }?;
        stream_token(request, text)
    })
}

/// MCPMUX_OK while `request` still waits for the host's answer; MCPMUX_ERR_NOT_FOUND once
/// it was answered, or nobody waits for it any more (cancelled, timed out, pool closed):
/// a host working on a long answer can poll this to stop early.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_host_request_waiting(request: mcpmux_host_request_id) -> mcpmux_status {
    guard(|| waiting(request))
}

/// Reads `answer_json` as an answer of `kind` ("tool_result", "approval", "sampling",
/// "elicitation", "roots" or "provider_reply") the way mcpmux_host_request_respond() does,
/// and writes what it gives, as JSON, to `*out_json` (free it with mcpmux_string_free()): a
/// host can check an answer before giving it. An answer that would be refused is
/// MCPMUX_ERR_INVALID_ARGUMENT, with the message saying what is expected.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_host_answer_read(
    kind: *const c_char,
    answer_json: *const c_char,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    bodies::answer_json(out_json, || {
        let kind = unsafe { str_arg(kind, "kind") }?;
        let text = unsafe { str_arg(answer_json, "answer_json") }?;
        read_answer(kind, text)
    })
}
