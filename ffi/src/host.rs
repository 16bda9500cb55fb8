//! Requests that the C host answers: servers' sampling (`sampling/createMessage`) and
//! elicitation (`elicitation/create`), calls of host tools, chat requests of a host
//! provider, and an agent's approval questions. The host gets each request with an id and
//! answers it when it likes, from any thread, with `mcpmux_host_request_respond` or
//! `_refuse`; a request nobody waits for any more is told to the host's cancel callback.
#![allow(
    deprecated,
    reason = "sampling is deprecated by SEP-2577 but servers still use it"
)]

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use mcpmux_core::agent::{Approval, TokenFn};
use mcpmux_core::host::{BoxFuture, answers};
use mcpmux_core::model::{CallToolResult, CreateMessageResult, ElicitResult};
use mcpmux_core::{ElicitationHandler, HostRequest, SamplingHandler};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::calls::{Gate, UserData, lock, next_id, pool_entry};
use crate::error::{FfiError, FfiResult, c_string, guard, opt_str_arg, str_arg};
use crate::mcpmux_status::{self, *};
use crate::rt::call_out;
use crate::{
    mcpmux_free_fn, mcpmux_host_cancel_fn, mcpmux_host_request_fn, mcpmux_host_request_id,
    mcpmux_pool,
};

/// A request waiting for the host's answer, by the type of answer it needs.
pub(crate) enum Pending {
    Sampling(oneshot::Sender<Result<CreateMessageResult, String>>),
    Elicitation(oneshot::Sender<Result<ElicitResult, String>>),
    Tool(oneshot::Sender<Result<CallToolResult, String>>),
    Chat {
        tx: oneshot::Sender<Result<Value, String>>,
        on_token: Option<TokenFn>,
        provider: String,
    },
    Approval(oneshot::Sender<Approval>),
    /// An OAuth authorization: the redirect URL.
    Authorize(oneshot::Sender<Result<String, String>>),
    /// A token store's load: the credentials, or none.
    TokenLoad(oneshot::Sender<Result<Option<Value>, String>>),
    /// A token store's save or clear: done.
    TokenDone(oneshot::Sender<Result<(), String>>),
}

static PENDING: Mutex<Option<HashMap<u64, Pending>>> = Mutex::new(None);

fn take_pending(request: u64) -> Option<Pending> {
    lock(&PENDING).as_mut().and_then(|m| m.remove(&request))
}

/// A C handler and its user data; the finalizer runs when the last reference goes, i.e.
/// once the handler is replaced or removed (or its pool closed) and no call of it is
/// waiting.
pub(crate) struct CHandler {
    f: unsafe extern "C" fn(*mut c_void, u64, *const c_char, usize),
    on_cancel: mcpmux_host_cancel_fn,
    user: UserData,
    free: mcpmux_free_fn,
    /// False once the registration failed: the user data stays the caller's.
    armed: AtomicBool,
    /// The callbacks of one request (an agent run's approvals) stop once its completion
    /// is due.
    gate: Option<Arc<Gate>>,
    /// The handler whose user data this one shares (and whose finalizer must wait for this
    /// one too): the callbacks of one token store.
    _owner: Option<Arc<CHandler>>,
}

impl CHandler {
    pub fn new(
        f: unsafe extern "C" fn(*mut c_void, u64, *const c_char, usize),
        on_cancel: mcpmux_host_cancel_fn,
        user_data: *mut c_void,
        free: mcpmux_free_fn,
        gate: Option<Arc<Gate>>,
    ) -> Arc<Self> {
        Arc::new(CHandler {
            f,
            on_cancel,
            user: UserData(user_data),
            free,
            armed: AtomicBool::new(true),
            gate,
            _owner: None,
        })
    }

    /// Another callback over the user data of `owner`: `owner`'s finalizer runs once both
    /// are gone.
    pub fn sharing(
        f: unsafe extern "C" fn(*mut c_void, u64, *const c_char, usize),
        owner: &Arc<CHandler>,
    ) -> Arc<Self> {
        Arc::new(CHandler {
            f,
            on_cancel: None,
            user: owner.user,
            free: None,
            armed: AtomicBool::new(false),
            gate: None,
            _owner: Some(owner.clone()),
        })
    }

    /// Gives up the user data: the finalizer will not run (a failed registration).
    pub fn disarm(&self) {
        self.armed.store(false, Ordering::SeqCst);
    }

    fn gated(&self, f: impl FnOnce()) {
        match &self.gate {
            Some(g) => g.run(f),
            None => f(),
        }
    }
}

impl Drop for CHandler {
    fn drop(&mut self) {
        if let Some(free) = self.free
            && self.armed.load(Ordering::SeqCst)
        {
            let user = self.user;
            // SAFETY: the caller's finalizer for its own user data, called once.
            call_out(|| unsafe { free(user.0) });
        }
    }
}

/// Forgets a request whose asker stopped waiting (cancelled, disconnected, pool closed),
/// so that a late answer is `NOT_FOUND` rather than lost silently, and tells the host.
struct Forget {
    id: u64,
    handler: Arc<CHandler>,
}

impl Drop for Forget {
    fn drop(&mut self) {
        let abandoned = take_pending(self.id).is_some();
        if abandoned && let Some(f) = self.handler.on_cancel {
            let (user, id) = (self.handler.user, self.id);
            // SAFETY: the caller's cancel callback with its user data, as registered.
            self.handler.gated(|| call_out(|| unsafe { f(user.0, id) }));
        }
    }
}

/// Hands one request (as JSON) to the C handler and waits for the host's answer; `None`
/// when the request was dropped without one.
pub(crate) fn ask<R: Send + 'static>(
    handler: Arc<CHandler>,
    json: String,
    pending: impl FnOnce(oneshot::Sender<R>) -> Pending,
) -> impl Future<Output = Option<R>> + Send + 'static {
    let id = next_id();
    let (tx, rx) = oneshot::channel();
    lock(&PENDING)
        .get_or_insert_with(HashMap::new)
        .insert(id, pending(tx));
    let forget = Forget { id, handler };
    async move {
        let c = c_string(json);
        let (f, user) = (forget.handler.f, forget.handler.user);
        // SAFETY: the caller's handler with its user data, as registered.
        forget
            .handler
            .gated(|| call_out(|| unsafe { f(user.0, id, c.as_ptr(), c.as_bytes().len()) }));
        let answer = rx.await.ok();
        drop(forget);
        answer
    }
}

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
/// `free_user_data` (may be NULL) runs once the handler is replaced or removed, or the
/// pool closed, and no call of it is running.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_pool_set_sampling_handler(
    pool: mcpmux_pool,
    handler: mcpmux_host_request_fn,
    user_data: *mut c_void,
    free_user_data: mcpmux_free_fn,
) -> mcpmux_status {
    guard(|| {
        let entry = pool_entry(pool)?;
        let h: Option<SamplingHandler> = handler_of(handler, user_data, free_user_data).map(|h| {
            Arc::new(move |req| server_request(h.clone(), req, Pending::Sampling))
                as SamplingHandler
        });
        entry.pool.set_sampling_handler(h);
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

fn not_pending(request: u64) -> FfiError {
    FfiError::new(
        MCPMUX_ERR_NOT_FOUND,
        format!("host request {request} is not waiting (answered, or nobody waits any more)"),
    )
}

/// The JSON of an answer. An approval may also be a bare word (`once`), as C hosts write it.
fn answer_value(text: &str, approval: bool) -> Result<Value, FfiError> {
    match serde_json::from_str(text) {
        Ok(v) => Ok(v),
        Err(_) if approval => Ok(Value::String(text.trim().to_string())),
        Err(e) => Err(FfiError::invalid(format!(
            "result_json is not valid JSON text: {e}"
        ))),
    }
}

/// One of core's readers of host answers (`mcpmux_core::host::answers`), on C's JSON text.
fn read_as<T>(text: &str, read: impl FnOnce(Value) -> Result<T, String>) -> Result<T, FfiError> {
    let value = answer_value(text, false)?;
    read(value).map_err(|e| FfiError::invalid(format!("result_json was refused: {e}")))
}

/// Delivers an answer, or hands the request back with why the answer is unusable.
fn answer(pending: Pending, text: &str) -> Result<(), (Pending, FfiError)> {
    fn parsed<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T, FfiError> {
        serde_json::from_str(text)
            .map_err(|e| FfiError::invalid(format!("result_json is not a valid {what}: {e}")))
    }
    match pending {
        Pending::Sampling(tx) => match read_as(text, answers::sampling_result) {
            Ok(r) => drop(tx.send(Ok(r))),
            Err(e) => return Err((Pending::Sampling(tx), e)),
        },
        Pending::Elicitation(tx) => match read_as(text, answers::elicitation_result) {
            Ok(r) => drop(tx.send(Ok(r))),
            Err(e) => return Err((Pending::Elicitation(tx), e)),
        },
        Pending::Tool(tx) => match read_as(text, answers::tool_result) {
            Ok(r) => drop(tx.send(Ok(r))),
            Err(e) => return Err((Pending::Tool(tx), e)),
        },
        Pending::Chat {
            tx,
            on_token,
            provider,
        } => {
            // Checked here, so that the host can answer again; the run reads it once more.
            let checked = answer_value(text, false).and_then(|v| {
                answers::provider_reply(&provider, v.clone())
                    .map(|_| v)
                    .map_err(FfiError::from)
            });
            match checked {
                Ok(v) => drop(tx.send(Ok(v))),
                Err(e) => {
                    return Err((
                        Pending::Chat {
                            tx,
                            on_token,
                            provider,
                        },
                        e,
                    ));
                }
            }
        }
        Pending::Approval(tx) => match answer_value(text, true)
            .and_then(|v| answers::approval(&v).map_err(FfiError::invalid))
        {
            Ok(a) => drop(tx.send(a)),
            Err(e) => return Err((Pending::Approval(tx), e)),
        },
        Pending::Authorize(tx) => match crate::oauth::redirect_of(text) {
            Ok(url) => drop(tx.send(Ok(url))),
            Err(e) => return Err((Pending::Authorize(tx), FfiError::invalid(e))),
        },
        Pending::TokenLoad(tx) => match parsed::<Value>(text, "JSON text") {
            Ok(Value::Null) => drop(tx.send(Ok(None))),
            Ok(v) => drop(tx.send(Ok(Some(v)))),
            Err(e) => return Err((Pending::TokenLoad(tx), e)),
        },
        Pending::TokenDone(tx) => match parsed::<Value>(text, "JSON text") {
            Ok(_) => drop(tx.send(Ok(()))),
            Err(e) => return Err((Pending::TokenDone(tx), e)),
        },
    }
    Ok(())
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
        // Held throughout, so a request whose answer is unusable is put back before its
        // asker could give up on it.
        let mut map = lock(&PENDING);
        let pending = map
            .as_mut()
            .and_then(|m| m.remove(&request))
            .ok_or_else(|| not_pending(request))?;
        answer(pending, text).map_err(|(pending, e)| {
            map.get_or_insert_with(HashMap::new)
                .insert(request, pending);
            e
        })
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
        let reason = unsafe { opt_str_arg(reason, "reason") }?
            .unwrap_or("refused by the host")
            .to_owned();
        let pending = take_pending(request).ok_or_else(|| not_pending(request))?;
        match pending {
            Pending::Sampling(tx) => drop(tx.send(Err(reason))),
            Pending::Elicitation(tx) => drop(tx.send(Err(reason))),
            Pending::Tool(tx) => drop(tx.send(Err(reason))),
            Pending::Chat { tx, .. } => drop(tx.send(Err(reason))),
            Pending::Approval(tx) => drop(tx.send(Approval::Deny)),
            Pending::Authorize(tx) => drop(tx.send(Err(reason))),
            Pending::TokenLoad(tx) => drop(tx.send(Err(reason))),
            Pending::TokenDone(tx) => drop(tx.send(Err(reason))),
        }
        Ok(())
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
        let on_token = match lock(&PENDING).as_ref().and_then(|m| m.get(&request)) {
            Some(Pending::Chat { on_token, .. }) => on_token.clone(),
            Some(_) => {
                return Err(FfiError::invalid(format!(
                    "host request {request} is not a provider's chat request"
                )));
            }
            None => return Err(not_pending(request)),
        };
        if let Some(f) = on_token {
            f(text);
        }
        Ok(())
    })
}

/// MCPMUX_OK while `request` still waits for the host's answer; MCPMUX_ERR_NOT_FOUND once
/// it was answered, or nobody waits for it any more (cancelled, timed out, pool closed):
/// a host working on a long answer can poll this to stop early.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_host_request_waiting(request: mcpmux_host_request_id) -> mcpmux_status {
    guard(|| {
        let waiting = lock(&PENDING)
            .as_ref()
            .is_some_and(|m| m.contains_key(&request));
        if waiting {
            Ok(())
        } else {
            Err(not_pending(request))
        }
    })
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
    guard(|| {
        let out = crate::error::out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        let kind_text = unsafe { str_arg(kind, "kind") }?;
        let text = unsafe { str_arg(answer_json, "answer_json") }?;
        let kind: answers::AnswerKind =
            serde_json::from_value(Value::String(kind_text.to_string())).map_err(|_| {
                FfiError::invalid(format!(
                    "kind must be tool_result, approval, sampling, elicitation, roots or \
                     provider_reply, not '{kind_text}'"
                ))
            })?;
        let value = answer_value(text, kind == answers::AnswerKind::Approval)?;
        let read = answers::read(kind, value)?;
        *out = crate::error::into_c_string(read.to_string());
        Ok(())
    })
}

/// Handler-less checks shared by the registration functions.
pub(crate) fn required_handler(
    handler: mcpmux_host_request_fn,
    name: &str,
) -> FfiResult<unsafe extern "C" fn(*mut c_void, u64, *const c_char, usize)> {
    handler.ok_or_else(|| FfiError::new(MCPMUX_ERR_NULL_ARGUMENT, format!("{name} is NULL")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_approval_word_is_read_as_its_json_string() {
        for (text, want) in [
            ("once", Approval::AllowOnce),
            (" deny ", Approval::Deny),
            ("\"always\"", Approval::AllowAlways),
            ("true", Approval::AllowOnce),
        ] {
            let value = answer_value(text, true).unwrap();
            assert_eq!(answers::approval(&value), Ok(want), "{text}");
        }
        // Only approvals: any other answer must be JSON.
        assert!(answer_value("once", false).is_err());
    }
}
