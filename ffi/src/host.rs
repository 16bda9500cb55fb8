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
use mcpmux_core::host::answers;
use mcpmux_core::model::{CallToolResult, CreateMessageResult, ElicitResult};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::calls::{Gate, UserData, lock, next_id};
use crate::error::{FfiError, FfiResult, c_string};
use crate::mcpmux_status::*;
use crate::rt::call_out;
use crate::{mcpmux_free_fn, mcpmux_host_cancel_fn, mcpmux_host_request_fn};

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
        Pending::Authorize(tx) => match crate::api::oauth::redirect_of(text) {
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

/// Answers `request` with the host's JSON text. A request whose answer is unusable stays
/// waiting for a good one.
pub(crate) fn respond(request: u64, text: &str) -> FfiResult<()> {
    // Held throughout, so a request whose answer is unusable is put back before its asker
    // could give up on it.
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
}

/// Refuses `request`: an error with `reason` for whoever asked, a denial for an approval.
pub(crate) fn refuse(request: u64, reason: &str) -> FfiResult<()> {
    let pending = take_pending(request).ok_or_else(|| not_pending(request))?;
    let reason = reason.to_owned();
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
}

/// Hands a piece of a host provider's streamed answer to the run's token callback.
pub(crate) fn stream_token(request: u64, text: &str) -> FfiResult<()> {
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
}

/// Ok while `request` still waits for the host's answer.
pub(crate) fn waiting(request: u64) -> FfiResult<()> {
    let waiting = lock(&PENDING)
        .as_ref()
        .is_some_and(|m| m.contains_key(&request));
    if waiting {
        Ok(())
    } else {
        Err(not_pending(request))
    }
}

/// Reads an answer of the kind named by `kind` as a host request's answer is read, and gives
/// what it reads.
pub(crate) fn read_answer(kind: &str, text: &str) -> FfiResult<Value> {
    let named: answers::AnswerKind = serde_json::from_value(Value::String(kind.to_string()))
        .map_err(|_| {
            FfiError::invalid(format!(
                "kind must be tool_result, approval, sampling, elicitation, roots or \
                 provider_reply, not '{kind}'"
            ))
        })?;
    let value = answer_value(text, named == answers::AnswerKind::Approval)?;
    Ok(answers::read(named, value)?)
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
