//! Server requests that the C host answers: sampling (`sampling/createMessage`) and
//! elicitation (`elicitation/create`). The host gets each request with an id and answers it
//! when it likes, from any thread, with `mcpmux_host_request_respond` or `_refuse`.
#![allow(
    deprecated,
    reason = "sampling is deprecated by SEP-2577 but servers still use it"
)]

use std::collections::HashMap;
use std::ffi::{CString, c_char, c_void};
use std::sync::{Arc, Mutex};

use mcpmux_core::host::BoxFuture;
use mcpmux_core::model::{CreateMessageResult, ElicitResult};
use mcpmux_core::{ElicitationHandler, HostRequest, SamplingHandler};
use serde::Serialize;
use tokio::sync::oneshot;

use crate::calls::{UserData, lock, next_id, pool_entry};
use crate::error::{FfiError, FfiResult, guard, opt_str_arg, str_arg};
use crate::mcpmux_status::{self, *};
use crate::rt::call_out;
use crate::{mcpmux_free_fn, mcpmux_host_request_fn, mcpmux_host_request_id, mcpmux_pool};

/// A request waiting for the host's answer, by the type of answer it needs.
enum Pending {
    Sampling(oneshot::Sender<Result<CreateMessageResult, String>>),
    Elicitation(oneshot::Sender<Result<ElicitResult, String>>),
}

static PENDING: Mutex<Option<HashMap<u64, Pending>>> = Mutex::new(None);

/// A C handler and its user data; the finalizer runs when the last reference goes, i.e.
/// once the handler is replaced or the pool closed and no call of it is running.
struct CHandler {
    f: unsafe extern "C" fn(*mut c_void, u64, *const c_char, usize),
    user: UserData,
    free: mcpmux_free_fn,
}

impl Drop for CHandler {
    fn drop(&mut self) {
        if let Some(free) = self.free {
            let user = self.user;
            // SAFETY: the caller's finalizer for its own user data, called once.
            call_out(|| unsafe { free(user.0) });
        }
    }
}

/// Forgets a request whose server stopped waiting (cancelled, disconnected, pool closed),
/// so that a late answer is `NOT_FOUND` rather than lost silently.
struct Forget(u64);

impl Drop for Forget {
    fn drop(&mut self) {
        if let Some(m) = lock(&PENDING).as_mut() {
            m.remove(&self.0);
        }
    }
}

/// Hands one server request to the C handler and waits for the host's answer.
fn ask<P: Serialize, R: Send + 'static>(
    handler: Arc<CHandler>,
    request: HostRequest<P>,
    pending: impl FnOnce(oneshot::Sender<Result<R, String>>) -> Pending,
) -> BoxFuture<Result<R, String>> {
    let id = next_id();
    let (tx, rx) = oneshot::channel();
    lock(&PENDING)
        .get_or_insert_with(HashMap::new)
        .insert(id, pending(tx));
    let forget = Forget(id);
    let json = serde_json::json!({
        "serverId": request.server_id,
        "serverName": request.server_name,
        "params": request.params,
    })
    .to_string();
    Box::pin(async move {
        let _forget = forget;
        let c = CString::new(json).unwrap_or_default();
        let user = handler.user;
        // SAFETY: the caller's handler with its user data, as registered.
        call_out(|| unsafe { (handler.f)(user.0, id, c.as_ptr(), c.as_bytes().len()) });
        drop(handler);
        rx.await
            .unwrap_or_else(|_| Err("the host did not answer".into()))
    })
}

fn handler_of(
    handler: mcpmux_host_request_fn,
    user_data: *mut c_void,
    free_user_data: mcpmux_free_fn,
) -> Option<Arc<CHandler>> {
    handler.map(|f| {
        Arc::new(CHandler {
            f,
            user: UserData(user_data),
            free: free_user_data,
        })
    })
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
            Arc::new(move |req| ask(h.clone(), req, Pending::Sampling)) as SamplingHandler
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
                Arc::new(move |req| ask(h.clone(), req, Pending::Elicitation)) as ElicitationHandler
            });
        entry.pool.set_elicitation_handler(h);
        Ok(())
    })
}

fn not_pending(request: u64) -> FfiError {
    FfiError::new(
        MCPMUX_ERR_NOT_FOUND,
        format!("host request {request} is not waiting (answered, or the server gave up)"),
    )
}

/// Answers a host request with its result as JSON: for sampling MCP's CreateMessageResult
/// (`{"role": "assistant", "content": {"type": "text", "text": "..."}, "model": "...",
/// "stopReason": "endTurn"}`), for elicitation an ElicitResult (`{"action": "accept",
/// "content": {...}}`, or action "decline" / "cancel"). JSON of the wrong shape is
/// MCPMUX_ERR_INVALID_ARGUMENT and the request still waits for a good answer;
/// MCPMUX_ERR_NOT_FOUND when it was answered already or the server stopped waiting.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_host_request_respond(
    request: mcpmux_host_request_id,
    result_json: *const c_char,
) -> mcpmux_status {
    guard(|| {
        let text = unsafe { str_arg(result_json, "result_json") }?;
        let mut map = lock(&PENDING);
        let pending = map
            .as_mut()
            .and_then(|m| m.remove(&request))
            .ok_or_else(|| not_pending(request))?;
        let bad = |e: serde_json::Error, what: &str| {
            FfiError::invalid(format!("result_json is not a valid {what}: {e}"))
        };
        let outcome: FfiResult<()> = match pending {
            Pending::Sampling(tx) => match serde_json::from_str::<CreateMessageResult>(text) {
                Ok(r) => {
                    let _ = tx.send(Ok(r));
                    Ok(())
                }
                Err(e) => {
                    map.get_or_insert_with(HashMap::new)
                        .insert(request, Pending::Sampling(tx));
                    Err(bad(e, "CreateMessageResult"))
                }
            },
            Pending::Elicitation(tx) => match serde_json::from_str::<ElicitResult>(text) {
                Ok(r) => {
                    let _ = tx.send(Ok(r));
                    Ok(())
                }
                Err(e) => {
                    map.get_or_insert_with(HashMap::new)
                        .insert(request, Pending::Elicitation(tx));
                    Err(bad(e, "ElicitResult"))
                }
            },
        };
        outcome
    })
}

/// Refuses a host request; the server sees `reason` (NULL: "refused by the host").
/// MCPMUX_ERR_NOT_FOUND when it was answered already or the server stopped waiting.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_host_request_refuse(
    request: mcpmux_host_request_id,
    reason: *const c_char,
) -> mcpmux_status {
    guard(|| {
        let reason = unsafe { opt_str_arg(reason, "reason") }?
            .unwrap_or("refused by the host")
            .to_owned();
        let pending = lock(&PENDING)
            .as_mut()
            .and_then(|m| m.remove(&request))
            .ok_or_else(|| not_pending(request))?;
        match pending {
            Pending::Sampling(tx) => drop(tx.send(Err(reason))),
            Pending::Elicitation(tx) => drop(tx.send(Err(reason))),
        }
        Ok(())
    })
}
