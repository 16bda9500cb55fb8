//! `tools/call` through the pool: the options a caller gives, what a round of a call returns,
//! and the pool's verbs for it (how it is sent is `send.rs`; the tool index it uses is
//! `listing/tool_index.rs`).

use std::borrow::BorrowMut;
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::Either;
use rmcp::model::{CallToolResult, InputRequiredResult, JsonObject, Task};
use rmcp::service::ServiceError;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::error::{Error, Result, URL_ELICITATION_REQUIRED, UrlElicitation};
use crate::events::Event;
use crate::pool::Pool;
use crate::pool::session::client_side::ProgressFn;
use crate::tools::host_tools::HOST_TOOLS_SERVER;

/// Per-call settings of [`Pool::call_tool`].
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Overrides the server's and the pool's request timeout; reset by progress.
    pub timeout: Option<Duration>,
    /// Receives the call's progress notifications.
    pub on_progress: Option<ProgressFn>,
    /// Cancelling it cancels the call (the server gets `notifications/cancelled`).
    pub cancel: Option<CancellationToken>,
    /// Whether a result is checked against the tool's `outputSchema` (unset: it is); one that
    /// does not match is an `invalid_result` error.
    pub validate: Option<bool>,
    /// Keys merged into the request's `_meta` (trace context, keys of the host's own); the
    /// pool's own keys (progress token, protocol context) win.
    pub meta: Option<JsonObject>,
    /// The most the whole call may take, however much progress the server reports (the
    /// `timeout` starts again with each report); past it the call is cancelled with a
    /// `timeout` error.
    pub max_total: Option<Duration>,
    /// The client capabilities a 2026-07-28 server is told in this call's `_meta` instead of
    /// the pool's: a gateway passes on its own client's, so that the server asks only what
    /// that client can answer.
    pub client_capabilities: Option<serde_json::Value>,
    /// What the call does when its server runs it as a task (the tasks extension).
    pub tasks: TaskMode,
    /// Told each status of the task the call's server runs it as, if it does (see
    /// [`Pool::start_task`]).
    pub on_task: Option<crate::pool::call::tasks::TaskFn>,
}

/// What a call does with a task its server starts instead of answering (the tasks extension).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TaskMode {
    /// The pool follows the task to its result: the caller sees a plain result.
    #[default]
    Follow,
    /// The call ends with the task ([`CallRound::Task`]): the caller relays `tasks/get`,
    /// `tasks/update` and `tasks/cancel` to its server (a gateway whose client takes tasks).
    Return,
    /// The server is told the caller's capabilities as they are, without the extension: a
    /// tool that needs a task is refused as the server refuses it (a gateway that passes its
    /// client through unchanged). A task the server starts anyway is followed.
    Withhold,
}

/// The part of [`CallOptions`] that is data, as the bindings take it (camelCase JSON, every
/// field optional, unknown ones refused): `{"validate": false, "meta": {...}, "maxTotalMs":
/// 60000}`.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CallSettings {
    #[serde(default)]
    pub validate: Option<bool>,
    #[serde(default)]
    pub meta: Option<JsonObject>,
    #[serde(default)]
    pub max_total_ms: Option<u64>,
}

impl CallSettings {
    /// Sets these on `options`.
    pub fn apply(self, options: &mut CallOptions) {
        if self.validate.is_some() {
            options.validate = self.validate;
        }
        if self.meta.is_some() {
            options.meta = self.meta;
        }
        if let Some(ms) = self.max_total_ms {
            options.max_total = Some(Duration::from_millis(ms));
        }
    }
}

/// A server's -32042 error as the error a host acts on; `None` for any other error, and for
/// one that names no URL.
pub(super) fn needs_url(server: &str, method: &str, e: &rmcp::ErrorData) -> Option<Error> {
    if e.code.0 != URL_ELICITATION_REQUIRED {
        return None;
    }
    let elicitations = UrlElicitation::from_error_data(e.data.as_ref());
    (!elicitations.is_empty()).then(|| Error::UrlElicitationRequired {
        server: server.to_string(),
        method: method.to_string(),
        elicitations,
    })
}

/// Maps an rmcp failure of `method` on `server` to mcpmux's error.
pub(crate) fn service_error(server: &str, method: &str, e: ServiceError) -> Error {
    match e {
        ServiceError::McpError(e) => {
            needs_url(server, method, &e).unwrap_or_else(|| Error::Protocol {
                server: server.to_string(),
                message: format!("{method}: {} (code {})", e.message, e.code.0),
            })
        }
        ServiceError::Timeout { timeout } => Error::Timeout {
            what: format!("{method} on server '{server}'"),
            after: timeout,
        },
        ServiceError::Cancelled { .. } => Error::Cancelled,
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            Error::connection(server, format!("{method}: {e}"))
        }
        other => Error::Protocol {
            server: server.to_string(),
            message: format!("{method}: {other}"),
        },
    }
}

/// One round of a request whose server's questions go back to the caller
/// ([`Pool::call_tool_round`], [`Pool::get_prompt_round`], [`Pool::read_resource_round`]): the
/// result, or what a 2026-07-28 server asks first.
#[derive(Debug, Clone)]
pub enum CallRound<R = CallToolResult> {
    Done(R),
    /// The server's `input_required`, as it sent it: the caller answers its requests and
    /// calls again with the responses and the server's `requestState`.
    InputRequired(InputRequiredResult),
    /// The server runs the call as a task, returned as it started ([`TaskMode::Return`]).
    Task(StartedTask),
}

/// A task a server started for a call ([`TaskMode::Return`]): where it runs, for the
/// `tasks/*` requests that follow it ([`Pool::get_task`]).
#[derive(Debug, Clone)]
pub struct StartedTask {
    /// The pool's id of the server holding the task.
    pub server_id: String,
    /// The task as the server announced it (its own id).
    pub task: Task,
}

/// The result of a request whose rounds the pool answered.
pub(super) fn done<R>(round: CallRound<R>) -> Result<R> {
    match round {
        CallRound::Done(result) => Ok(result),
        // Only the `*_round` verbs return the server's questions, and only a call with
        // `TaskMode::Return` its task.
        CallRound::InputRequired(_) => Err(Error::invalid("an unanswered input round")),
        CallRound::Task(_) => Err(Error::invalid(
            "a task returned to a caller that relays none",
        )),
    }
}

/// What a caller brings to a round after the first: the responses to the server's input
/// requests and the server's `requestState`, as the server sent it.
#[derive(Debug, Clone, Default)]
pub struct InputRound {
    pub responses: Option<rmcp::model::InputResponses>,
    pub state: Option<String>,
}

impl Pool {
    /// Calls a tool by its pool id. The result keeps every content type, `structuredContent`
    /// and `isError`; a JSON-RPC error from the server is an `Error::Tool`.
    pub fn call_tool(
        &self,
        tool_id: &str,
        arguments: serde_json::Value,
        options: CallOptions,
    ) -> impl Future<Output = Result<CallToolResult>> {
        // Not an `async fn`: a call's future is moved into its caller's task on every call,
        // and an `async fn` keeps a second copy of its arguments beside its inner future.
        self.call_tool_rounds(tool_id, arguments, options, None)
            .map(|round| round.and_then(done))
    }

    /// `call_tool` for a caller that relays tasks (`CallOptions::tasks` set to
    /// [`TaskMode::Return`]): the result, or the task the server started
    /// ([`CallRound::Task`]). Questions are answered by the pool's handlers, as in `call_tool`.
    pub fn call_tool_or_task(
        &self,
        tool_id: &str,
        arguments: serde_json::Value,
        options: CallOptions,
    ) -> impl Future<Output = Result<CallRound>> {
        self.call_tool_rounds(tool_id, arguments, options, None)
    }

    /// One round of a tool call for a host that passes a 2026-07-28 server's questions on to
    /// a client of its own instead of answering them (`mcpmux serve`, for its 2026-07-28
    /// clients, which have no session to be asked on): an `input_required` comes back as it
    /// is, and the next round brings the client's `round`. A server before 2026-07-28 asks
    /// by requests of its own, answered by the pool's handlers as in `call_tool`.
    pub fn call_tool_round(
        &self,
        tool_id: &str,
        arguments: serde_json::Value,
        options: CallOptions,
        round: InputRound,
    ) -> impl Future<Output = Result<CallRound>> {
        self.call_tool_rounds(tool_id, arguments, options, Some(round))
    }

    /// `call_tool`, whose server's questions the pool answers (`round` none) or returns.
    fn call_tool_rounds(
        &self,
        tool_id: &str,
        arguments: serde_json::Value,
        options: CallOptions,
        round: Option<InputRound>,
    ) -> impl Future<Output = Result<CallRound>> {
        // Read before the call's future is made, which then holds the object alone, not also
        // the value it came in as.
        let arguments: Option<JsonObject> = match arguments {
            serde_json::Value::Null => None,
            serde_json::Value::Object(m) => Some(m),
            other => {
                let refused = format!("tool arguments must be a JSON object, not {other}");
                return Either::Left(std::future::ready(Err(Error::invalid(refused))));
            }
        };
        Either::Right(self.call_tool_with(tool_id, arguments, options, round))
    }

    #[cfg(feature = "serve")]
    /// `call_tool_or_task` (with a `round`, `call_tool_round`) with the arguments lent: a call
    /// the pool refuses because it does not know `tool_id` (`Error::NotFound` of a tool)
    /// leaves them as they were, for a caller that lists again and calls once more by name
    /// (`mcpmux serve`'s gateway), which would otherwise copy them for every call.
    pub(crate) fn call_tool_lent(
        &self,
        tool_id: &str,
        arguments: &mut Option<JsonObject>,
        options: &mut CallOptions,
        round: &mut Option<InputRound>,
    ) -> impl Future<Output = Result<CallRound>> {
        self.call_tool_with(tool_id, arguments, options, round)
    }

    /// A tool call with its arguments, options and round given (`call_tool_rounds`) or lent
    /// (`call_tool_lent`): one body, and either way one future that holds them once. A
    /// future that owned them around one that borrowed them would be the size of both
    /// borrows larger, and at about a kilobyte a call's future in its caller's task passes
    /// what glibc's malloc serves from its per-thread cache.
    #[allow(
        clippy::manual_async_fn,
        reason = "an `async fn` would keep a second copy of its arguments in every call's future"
    )]
    fn call_tool_with<A, O, R>(
        &self,
        tool_id: &str,
        mut arguments: A,
        mut options: O,
        mut round: R,
    ) -> impl Future<Output = Result<CallRound>>
    where
        A: BorrowMut<Option<JsonObject>>,
        O: BorrowMut<CallOptions>,
        R: BorrowMut<Option<InputRound>>,
    {
        async move {
            let _flight = self.inner.begin()?;
            if self.inner.local.contains(tool_id) {
                // Boxed, like every rare path, so that a server tool call's future stays
                // small: it is moved into its task or binding on every call. A copy of the
                // arguments: a host tool's handler takes them whole, and one removed
                // meanwhile is refused as unknown, which must leave lent ones to the caller.
                let arguments = arguments.borrow().clone();
                let options = std::mem::take(options.borrow_mut());
                return Box::pin(self.call_local(tool_id, arguments, options))
                    .await
                    .map(CallRound::Done);
            }
            let (slot, tool) = match self.inner.find_tool(tool_id) {
                Some(hit) => hit,
                None => Box::pin(self.inner.resolve_tool(tool_id)).await?,
            };
            // Under the lock rather than a copy of the whole record: this runs on every call.
            {
                let record = slot.record.read().unwrap();
                if record.disabled_tools.iter().any(|t| **t == *tool) {
                    return Err(Error::invalid(format!(
                        "tool '{tool}' of server '{}' is disabled",
                        record.name
                    )));
                }
            }
            let server_name = slot.shared_name();
            let span = tracing::info_span!("mcpmux.call_tool", server = %server_name, tool = %tool);
            let started = self.inner.events.listening().then(Instant::now);
            let validate = options.borrow().validate != Some(false);
            let max_total = options.borrow().max_total;
            // A `perClient` server's call goes to this view's client's own connection; the
            // tool's output schema is the server's, checked on the shared slot below.
            let own;
            let target = match &self.client {
                None => &slot,
                Some(_) => {
                    own = self.slot_for(&slot)?;
                    &own
                }
            };
            // Lent, not moved: a call's future then holds them once, here (or in the
            // caller's), and not again in the future of `call_on`.
            let call = self
                .inner
                .call_on(
                    target,
                    &server_name,
                    &tool,
                    arguments.borrow_mut(),
                    options.borrow_mut(),
                    round.borrow_mut(),
                )
                .instrument(span);
            let result = match max_total {
                None => call.await,
                // Dropping the call cancels it at the server. Boxed: few calls have a limit.
                Some(limit) => match Box::pin(tokio::time::timeout(limit, call)).await {
                    Ok(r) => r,
                    Err(_) => Err(Error::Timeout {
                        what: format!("tool '{tool}' on server '{server_name}' (its whole call)"),
                        after: limit,
                    }),
                },
            };
            let result = match result {
                Ok(CallRound::Done(r)) if validate => {
                    slot.checked_output(&tool, r).map(CallRound::Done)
                }
                other => other,
            };
            // A round that asks the caller is not a call yet: the last round is.
            if let Ok(CallRound::InputRequired(_)) = &result {
                return result;
            }
            self.inner.events.emit_with(|| Event::ToolCalled {
                server_id: slot.id.clone(),
                tool_name: tool.to_string(),
                tool_id: tool_id.to_string(),
                duration_ms: started.map_or(0, |s| s.elapsed().as_millis() as u64),
                success: matches!(&result, Ok(CallRound::Done(r)) if r.is_error != Some(true)),
            });
            result
        }
    }

    /// A call of a host (local) tool.
    async fn call_local(
        &self,
        tool_id: &str,
        arguments: Option<JsonObject>,
        options: CallOptions,
    ) -> Result<CallToolResult> {
        let started = Instant::now();
        let call = self.inner.local.call(
            tool_id,
            arguments.map(serde_json::Value::Object).unwrap_or_default(),
        );
        // Host tools get the same limits as server tools: dropping the handler's
        // future is how the binding learns it was cancelled.
        let cancel = options.cancel.clone().unwrap_or_default();
        // No progress resets a host tool's time: its cap is the shorter of the two.
        let limit = options.timeout.unwrap_or(self.inner.opts.request_timeout());
        let limit = options.max_total.map_or(limit, |cap| cap.min(limit));
        let result = tokio::select! {
            r = call => r,
            _ = cancel.cancelled() => Err(Error::Cancelled),
            _ = tokio::time::sleep(limit) => Err(Error::Timeout {
                what: format!("host tool '{tool_id}'"),
                after: limit,
            }),
        };
        self.inner.events.emit(Event::ToolCalled {
            server_id: HOST_TOOLS_SERVER.into(),
            tool_name: tool_id.to_string(),
            tool_id: tool_id.to_string(),
            duration_ms: started.elapsed().as_millis() as u64,
            success: matches!(&result, Ok(r) if r.is_error != Some(true)),
        });
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mcpmux serve` lists again and calls once more with the same arguments when the pool
    /// no longer knows a tool: the refusal must hand them back untouched.
    #[cfg(feature = "serve")]
    #[tokio::test]
    async fn a_call_of_a_tool_the_pool_does_not_know_leaves_the_lent_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::pool::empty_pool(dir.path()).await;
        let given: JsonObject = serde_json::from_str(r#"{"text":"hello","n":[1,2]}"#).unwrap();
        let mut arguments = Some(given.clone());
        let (mut options, mut round) = (CallOptions::default(), None);
        let result = pool
            .call_tool_lent("gone__echo", &mut arguments, &mut options, &mut round)
            .await;
        assert!(
            matches!(result, Err(Error::NotFound { kind: "tool", .. })),
            "{:?}",
            result.err()
        );
        assert_eq!(arguments, Some(given));
        pool.close().await;
    }

    /// The budget `send.rs` gives a call's future: under a kilobyte, which glibc's malloc
    /// serves from its per-thread cache when a caller's task or a binding boxes it on every
    /// call (past it, every call took malloc's slow path). The rare paths stay boxed for it.
    #[tokio::test]
    async fn a_calls_future_stays_under_a_kilobyte() {
        const BUDGET: usize = 1024;
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::pool::empty_pool(dir.path()).await;
        let futures = [
            (
                "call_tool",
                std::mem::size_of_val(&pool.call_tool(
                    "s__t",
                    serde_json::json!({}),
                    CallOptions::default(),
                )),
            ),
            (
                "call_tool_or_task",
                std::mem::size_of_val(&pool.call_tool_or_task(
                    "s__t",
                    serde_json::json!({}),
                    CallOptions::default(),
                )),
            ),
        ];
        for (verb, size) in futures {
            assert!(
                size < BUDGET,
                "{verb}'s future is {size} bytes, over the {BUDGET} a call's future is given \
                 (see pool/call/send.rs): box what made it grow"
            );
        }
        pool.close().await;
    }
}
