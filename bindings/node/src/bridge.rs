//! Calling JavaScript from tokio and waiting for its answer.
//!
//! A JS callback (host tool, sampling or elicitation handler, approval, a provider's `chat`)
//! is a weak thread-safe function taking one JSON string `{"id", "payload"}`. The JS wrapper
//! (`bridge()` in `index.js`) runs the user's function, sync or async, and answers with
//! `NativePool.hostReply(id, ok, json)`, which completes the waiting future here. This keeps
//! Promise handling entirely in JS: a thrown error or a rejected promise is an `ok: false`
//! reply carrying the message.
//!
//! When the waiting future is dropped (the call was cancelled, the run aborted) the callback
//! gets `{"abort": id}`, which aborts the `signal` the user's function was given.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use mcpmux::agent::TokenFn;
use napi::Status;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::JsonCallback;

struct Pending {
    reply: oneshot::Sender<Result<Value, String>>,
    /// Where `hostToken(id, text)` sends streamed text (a JS provider's `onToken`).
    on_token: Option<TokenFn>,
}

/// The JS calls of one pool that wait for an answer.
#[derive(Default)]
pub(crate) struct Bridge {
    next: AtomicU32,
    pending: Mutex<HashMap<u32, Pending>>,
    closed: AtomicBool,
}

/// Forgets a call when its future ends, and tells JS to abort it if it never answered.
struct Guard<'a> {
    bridge: &'a Bridge,
    callback: &'a JsonCallback,
    id: u32,
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        let unanswered = self.bridge.pending.lock().unwrap().remove(&self.id);
        if unanswered.is_some() {
            let abort = json!({ "abort": self.id }).to_string();
            self.callback
                .call(abort, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

impl Bridge {
    /// Calls `callback` with `payload` and waits for its answer: `Ok` with the JSON it
    /// resolved with, or `Err` with the message of what it threw.
    pub async fn ask(
        &self,
        callback: &JsonCallback,
        payload: Value,
        on_token: Option<TokenFn>,
    ) -> Result<Value, String> {
        if self.closed.load(Ordering::Acquire) {
            return Err("the pool is closed: its JavaScript callbacks are gone".into());
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap().insert(
            id,
            Pending {
                reply: tx,
                on_token,
            },
        );
        let guard = Guard {
            bridge: self,
            callback,
            id,
        };
        let message = json!({ "id": id, "payload": payload }).to_string();
        match callback.call(message, ThreadsafeFunctionCallMode::NonBlocking) {
            Status::Ok => {}
            status => {
                self.pending.lock().unwrap().remove(&id);
                return Err(format!(
                    "cannot call the JavaScript callback ({status}): its environment is shutting down"
                ));
            }
        }
        let answer = rx.await;
        drop(guard);
        answer.unwrap_or_else(|_| {
            Err("the pool was closed before the JavaScript callback answered".into())
        })
    }

    /// The JS side's answer to call `id`; an unknown or late id is ignored.
    pub fn reply(&self, id: u32, ok: bool, text: String) {
        let Some(pending) = self.pending.lock().unwrap().remove(&id) else {
            return;
        };
        let answer = if ok {
            serde_json::from_str(&text)
                .map_err(|e| format!("the JavaScript callback answered invalid JSON: {e}"))
        } else {
            Err(text)
        };
        let _ = pending.reply.send(answer);
    }

    /// Text streamed by the JS side during call `id`.
    pub fn token(&self, id: u32, text: &str) {
        let on_token = self
            .pending
            .lock()
            .unwrap()
            .get(&id)
            .and_then(|p| p.on_token.clone());
        if let Some(f) = on_token {
            f(text);
        }
    }

    /// Fails every waiting call and refuses new ones.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.pending.lock().unwrap().clear();
    }
}

/// A callback and the bridge it answers through, shared by the closures handed to core.
#[derive(Clone)]
pub(crate) struct JsFn {
    pub bridge: Arc<Bridge>,
    pub callback: Arc<JsonCallback>,
}

impl JsFn {
    pub async fn ask(&self, payload: Value, on_token: Option<TokenFn>) -> Result<Value, String> {
        self.bridge.ask(&self.callback, payload, on_token).await
    }
}
