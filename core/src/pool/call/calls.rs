//! Requests through the pool: tools, resources, prompts (the tool index they use is in
//! `tool_index.rs`).

use std::borrow::BorrowMut;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::Either;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, GetPromptRequestParams,
    GetPromptResult, InputRequests, InputRequiredResult, InputResponses, JsonObject,
    NumberOrString, ProgressToken, ReadResourceRequestParams, ReadResourceResult, RequestId,
    ServerResult, SubscribeRequestParams, Task, UnsubscribeRequestParams,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use rmcp::{Peer, RoleClient};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::error::{Error, Result, URL_ELICITATION_REQUIRED, UrlElicitation};
use crate::events::Event;
use crate::pool::call::input_rounds::{InputRounds, Retry, Round, RoundsError};
use crate::pool::call::reply::{Answer, call_reply};
use crate::pool::call::tasks::with_tasks;
use crate::pool::call::tell_on_drop::TellOnDrop;
use crate::pool::server::slot::Slot;
use crate::pool::session::client_side::{ClientSide, ProgressFn};
use crate::pool::session::connection::Connection;
use crate::pool::session::listen::RefilterError;
use crate::pool::{Inner, Pool};
use crate::tools::host_tools::HOST_TOOLS_SERVER;
use crate::transport::direct::{Direct, DirectError};
use crate::transport::related_call::RELATED_CALL_META;

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

/// How long a cancelled call still listens for the answer its server may have sent before
/// it learned (a task it started, which is then cancelled too).
const LATE_ANSWER: Duration = Duration::from_secs(10);
/// How long a cancelled call of a server that runs calls as tasks waits for the answer (a
/// task's comes at once) before telling the server.
const TASK_ANSWER: Duration = Duration::from_millis(500);

/// The `_meta` key of a 2026-07-28 request's client capabilities.
const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

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
fn needs_url(server: &str, method: &str, e: &rmcp::ErrorData) -> Option<Error> {
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

/// `notifications/cancelled` of request `id`, for a call dropped before its answer.
async fn tell_cancelled(peer: Peer<RoleClient>, id: RequestId) {
    let params = rmcp::model::CancelledNotificationParam::new(
        Some(id),
        Some("cancelled by the client".into()),
    );
    let _ = peer.notify_cancelled(params).await;
}

/// One `tools/call` on one connection: what the steps of `call_on` share.
pub(in crate::pool) struct ToolCall<'a> {
    pub slot: &'a Arc<Slot>,
    pub conn: &'a Arc<Connection>,
    /// The server's name.
    pub name: &'a str,
    pub tool: &'a str,
    pub timeout: Duration,
    cancel: Option<&'a CancellationToken>,
    /// `CallOptions::client_capabilities`.
    capabilities: Option<&'a serde_json::Value>,
    tasks: TaskMode,
    /// `CallOptions::on_task`.
    pub on_task: Option<&'a crate::pool::call::tasks::TaskFn>,
    /// `CallOptions::on_progress`: a task's status messages reach it too.
    pub on_progress: Option<&'a ProgressFn>,
}

impl ToolCall<'_> {
    /// The capabilities the server is told: the caller's, with the tasks extension unless
    /// the call withholds it.
    fn offered(&self, capabilities: &serde_json::Value) -> serde_json::Value {
        match self.tasks {
            TaskMode::Withhold => capabilities.clone(),
            TaskMode::Follow | TaskMode::Return => with_tasks(capabilities),
        }
    }

    /// Answers a task's input requests with the host's handlers.
    pub async fn fulfil(&self, requests: InputRequests) -> Result<InputResponses> {
        Box::pin(client_of(self.slot).fulfil(requests))
            .await
            .map_err(|e| Error::Tool {
                tool: self.tool.to_string(),
                message: format!(
                    "tools/call: answering the input request of its task failed: {}",
                    e.message
                ),
                code: None,
                data: None,
            })
    }

    /// Resolves when the caller cancels the call (never, without a token).
    pub async fn cancelled(&self) {
        match self.cancel {
            Some(c) => c.cancelled().await,
            None => std::future::pending().await,
        }
    }

    /// Answers a server's `input_required` with the host's handlers, for the next round.
    async fn answer_input(
        &self,
        rounds: &mut InputRounds,
        asked: InputRequiredResult,
        params: &mut CallToolRequestParams,
    ) -> Result<()> {
        rounds
            .answer(&client_of(self.slot), asked, params)
            .await
            .map_err(|e| match e {
                // The host's failure is the call's: the model sees it as the tool's error.
                RoundsError::Host(_) => Error::Tool {
                    tool: self.tool.to_string(),
                    message: e.describe("tools/call"),
                    code: None,
                    data: None,
                },
                _ => Error::Protocol {
                    server: self.name.to_string(),
                    message: e.describe("tools/call"),
                },
            })
    }
}

/// The client side of a server's connection, answering its input requests.
fn client_of(slot: &Slot) -> ClientSide {
    ClientSide {
        shared: slot.shared.clone(),
        server_name: slot.name(),
        legacy: false,
    }
}

/// Answers a server's `input_required` to `method` (not `tools/call`), for the next round.
async fn answer_input(
    slot: &Slot,
    rounds: &mut InputRounds,
    asked: InputRequiredResult,
    request: &mut impl Retry,
    method: &str,
) -> Result<()> {
    rounds
        .answer(&client_of(slot), asked, request)
        .await
        .map_err(|e| Error::Protocol {
            server: slot.name(),
            message: e.describe(method),
        })
}

/// A response of a kind the request does not have.
fn unexpected(slot: &Slot, method: &str) -> Error {
    Error::Protocol {
        server: slot.name(),
        message: format!("{method}: unexpected response type"),
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
fn done<R>(round: CallRound<R>) -> Result<R> {
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

    /// Reads one resource of one server.
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<ReadResourceResult> {
        done(self.read_resource_rounds(server, uri, None).await?)
    }

    /// One round of `read_resource` whose server's questions come back (see
    /// [`Pool::call_tool_round`]).
    pub async fn read_resource_round(
        &self,
        server: &str,
        uri: &str,
        round: InputRound,
    ) -> Result<CallRound<ReadResourceResult>> {
        self.read_resource_rounds(server, uri, Some(round)).await
    }

    async fn read_resource_rounds(
        &self,
        server: &str,
        uri: &str,
        round: Option<InputRound>,
    ) -> Result<CallRound<ReadResourceResult>> {
        let _flight = self.inner.begin()?;
        let slot = self.slot_for(&self.inner.slot(server)?)?;
        let conn = slot.connection(&self.inner).await?;
        let mut params = ReadResourceRequestParams::new(uri);
        let span = tracing::info_span!("mcpmux.read_resource", server = %slot.name(), %uri);
        let peer = &conn.peer;
        async {
            crate::trace_context::stamp(&mut params.meta);
            self.in_rounds(
                &slot,
                &conn,
                "resources/read",
                params,
                round,
                |p| async move { peer.read_resource_once(p).await.map(Round::from) },
            )
            .await
        }
        .instrument(span)
        .await
    }

    /// Subscribes to changes of a resource; they arrive as `resource:updated` events. The
    /// subscription lasts until [`Pool::unsubscribe_resource`], over reconnects: on a
    /// 2026-07-28 server through the connection's `subscriptions/listen` stream, on older
    /// ones with `resources/subscribe`.
    pub async fn subscribe_resource(&self, server: &str, uri: &str) -> Result<()> {
        self.set_subscribed(server, uri, true).await
    }

    /// Ends a subscription made with [`Pool::subscribe_resource`].
    pub async fn unsubscribe_resource(&self, server: &str, uri: &str) -> Result<()> {
        self.set_subscribed(server, uri, false).await
    }

    #[allow(
        deprecated,
        reason = "resources/subscribe is how servers before 2026-07-28 do it"
    )]
    async fn set_subscribed(&self, server: &str, uri: &str, subscribe: bool) -> Result<()> {
        let _flight = self.inner.begin()?;
        let slot = self.inner.slot(server)?;
        let conn = slot.connection(&self.inner).await?;
        let name = slot.name();
        let Some(listener) = &conn.listener else {
            // Before 2026-07-28: the server keeps the subscription; the set is what a new
            // connection subscribes to again.
            let sent = if subscribe {
                conn.peer.subscribe(SubscribeRequestParams::new(uri)).await
            } else {
                conn.peer
                    .unsubscribe(UnsubscribeRequestParams::new(uri))
                    .await
            };
            let method = if subscribe {
                "resources/subscribe"
            } else {
                "resources/unsubscribe"
            };
            sent.map_err(|e| conn.failure(&name, method, e))?;
            slot.shared.set_subscribed(uri, subscribe);
            return Ok(());
        };
        let refused = |why: String| Error::Protocol {
            server: name.clone(),
            message: format!("could not subscribe to {uri}: {why}"),
        };
        if subscribe && !crate::pool::session::listen::can_subscribe(&conn.peer) {
            return Err(refused(
                "the server does not offer resource subscriptions (capability resources.subscribe)"
                    .into(),
            ));
        }
        if !slot.shared.set_subscribed(uri, subscribe) {
            return Ok(());
        }
        let timeout = self.inner.opts.request_timeout();
        let accepted = match listener.refilter(timeout).await {
            Ok(accepted) => accepted,
            Err(e) => {
                slot.shared.set_subscribed(uri, !subscribe);
                return Err(match e {
                    RefilterError::Failed(why) => refused(why),
                    RefilterError::Timeout => Error::Timeout {
                        what: format!("subscriptions/listen to server '{name}'"),
                        after: timeout,
                    },
                });
            }
        };
        let listed = accepted
            .and_then(|f| f.resource_subscriptions)
            .is_some_and(|uris| uris.iter().any(|u| u == uri));
        if subscribe && !listed {
            slot.shared.set_subscribed(uri, false);
            return Err(refused(
                "the server's subscriptions/listen acknowledgement left it out".into(),
            ));
        }
        Ok(())
    }

    /// Gets one prompt of one server, filled with `arguments`.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<GetPromptResult> {
        done(
            self.get_prompt_rounds(server, name, arguments, None)
                .await?,
        )
    }

    /// One round of `get_prompt` whose server's questions come back (see
    /// [`Pool::call_tool_round`]).
    pub async fn get_prompt_round(
        &self,
        server: &str,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        round: InputRound,
    ) -> Result<CallRound<GetPromptResult>> {
        self.get_prompt_rounds(server, name, arguments, Some(round))
            .await
    }

    async fn get_prompt_rounds(
        &self,
        server: &str,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        round: Option<InputRound>,
    ) -> Result<CallRound<GetPromptResult>> {
        let _flight = self.inner.begin()?;
        let slot = self.slot_for(&self.inner.slot(server)?)?;
        let conn = slot.connection(&self.inner).await?;
        let mut params = GetPromptRequestParams::new(name);
        if let Some(args) = arguments {
            params = params.with_arguments(args);
        }
        let span = tracing::info_span!("mcpmux.get_prompt", server = %slot.name(), prompt = %name);
        let peer = &conn.peer;
        async {
            crate::trace_context::stamp(&mut params.meta);
            self.in_rounds(&slot, &conn, "prompts/get", params, round, |p| async move {
                peer.get_prompt_once(p).await.map(Round::from)
            })
            .await
        }
        .instrument(span)
        .await
    }

    /// Sends a request with `send` until the server answers it with a result, answering the
    /// `input_required` rounds of a 2026-07-28 server in between; with `round`, sends it once
    /// with the caller's answers and returns what the server asks.
    async fn in_rounds<P, R, F, Fut>(
        &self,
        slot: &Arc<Slot>,
        conn: &Arc<Connection>,
        method: &str,
        mut params: P,
        round: Option<InputRound>,
        send: F,
    ) -> Result<CallRound<R>>
    where
        P: Retry + Clone,
        F: Fn(P) -> Fut,
        Fut: Future<Output = std::result::Result<Round<R>, ServiceError>>,
    {
        let returns_input = round.is_some();
        if let Some(round) = round {
            params.retry_with(round.responses, round.state);
        }
        let mut rounds = InputRounds::new(self.inner.opts.max_input_rounds);
        loop {
            // Boxed: an rmcp request's future is some 7 KB, and every future awaiting this
            // one (a served request's, spawned and moved whole) would carry it.
            let round = match Box::pin(send(params.clone())).await {
                Ok(round) => round,
                Err(e) => return Err(slot.request_failed(&self.inner, conn, method, e).await),
            };
            let asked = match round {
                Round::Done(result) => return Ok(CallRound::Done(result)),
                Round::Input(asked) if returns_input => return Ok(CallRound::InputRequired(asked)),
                Round::Input(asked) => asked,
                Round::Unexpected => return Err(unexpected(slot, method)),
            };
            answer_input(slot, &mut rounds, asked, &mut params, method).await?;
        }
    }
}

impl Inner {
    #[allow(
        clippy::manual_async_fn,
        reason = "an `async fn` would keep a second copy of its arguments in every call's future"
    )]
    fn call_on(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
        name: &str,
        tool: &str,
        arguments: &mut Option<JsonObject>,
        options: &mut CallOptions,
        round: &mut Option<InputRound>,
    ) -> impl Future<Output = Result<CallRound>> {
        async move {
            let conn = slot.connection(self).await?;
            let timeout = options
                .timeout
                .or(slot.record.read().unwrap().timeouts.tool(tool))
                .unwrap_or(self.opts.request_timeout());
            let mut params = CallToolRequestParams::new(tool.to_string());
            if let Some(args) = arguments.take() {
                params = params.with_arguments(args);
            }
            if let Some(meta) = options.meta.take() {
                let mine = params.meta.get_or_insert_default();
                for (k, v) in meta {
                    mine.insert(k, v);
                }
            }
            crate::trace_context::stamp(&mut params.meta);
            let returns_input = round.is_some();
            if let Some(round) = round.take() {
                params.retry_with(round.responses, round.state);
            }
            let call = ToolCall {
                slot,
                conn: &conn,
                name,
                tool,
                timeout,
                cancel: options.cancel.as_ref(),
                capabilities: options.client_capabilities.as_ref(),
                tasks: options.tasks,
                on_task: options.on_task.as_ref(),
                on_progress: options.on_progress.as_ref(),
            };
            // stdio sessions take the direct path, progress and all; every other transport goes
            // through rmcp.
            let direct = conn.direct.as_ref();
            // 2026-07-28 servers ask for sampling, elicitation or roots by answering
            // `input_required`; the host answers and the call is retried with the responses.
            let mut rounds = InputRounds::new(self.opts.max_input_rounds);
            let rounds = async {
                loop {
                    let response = match direct {
                        // Boxed, though it is the common path: a call's future, moved into
                        // its caller's task on every call, then stays under a kilobyte, which
                        // glibc's malloc serves from its per-thread cache; at 1.3 KB every call
                        // took its slow path (callgrind, 32 calls in flight: 13.5k instructions
                        // a call against 12.6k). The 2.8 KB future before made 192k calls/s
                        // against 290k on tokio's multi-thread runtime (medians of ten runs).
                        Some(direct) => {
                            Box::pin(self.send_direct(
                                &call,
                                direct,
                                &mut params,
                                &options.on_progress,
                            ))
                            .await?
                        }
                        None => {
                            Box::pin(self.send_through_rmcp(&call, &params, &options.on_progress))
                                .await?
                        }
                    };
                    let answer = self.read_response(&call, response)?;
                    if let Answer::Result(result) = answer {
                        return Ok(CallRound::Done(result));
                    }
                    // Every other answer is followed in a future of its own, which takes the
                    // answer whole: an answer only partly moved out of would be kept through
                    // the await, in every call's future.
                    let follow =
                        self.follow(&call, answer, returns_input, &mut rounds, &mut params);
                    if let Some(round) = Box::pin(follow).await? {
                        return Ok(round);
                    }
                }
            };
            // The explanation's future is made before it is awaited, so that the result matched
            // on is not kept through that await (in every call's future).
            let explain = match rounds.await {
                Err(e @ Error::Connection { .. }) if conn.child_pid.is_some() => {
                    Box::pin(conn.explain("tools/call", e))
                }
                other => return other,
            };
            Err(explain.await)
        }
    }

    /// What a call does with an answer that is not its result: returns the server's questions
    /// or its task to a caller that relays them, or answers them (`None`: send the call again)
    /// or follows the task to its result.
    async fn follow(
        self: &Arc<Self>,
        call: &ToolCall<'_>,
        answer: Answer,
        returns_input: bool,
        rounds: &mut InputRounds,
        params: &mut CallToolRequestParams,
    ) -> Result<Option<CallRound>> {
        Ok(Some(match answer {
            Answer::Result(result) => CallRound::Done(result),
            Answer::InputRequired(asked) if returns_input => CallRound::InputRequired(asked),
            Answer::InputRequired(asked) => {
                call.answer_input(rounds, asked, params).await?;
                return Ok(None);
            }
            Answer::Task(task) if call.tasks == TaskMode::Return => CallRound::Task(StartedTask {
                server_id: call.slot.id.clone(),
                task,
            }),
            Answer::Task(task) => CallRound::Done(self.drive_task(call, task).await?),
        }))
    }

    /// `tools/call` written straight to a stdio session (`transport::direct`), past rmcp's
    /// service loop.
    async fn send_direct(
        self: &Arc<Self>,
        call: &ToolCall<'_>,
        direct: &Arc<Direct>,
        params: &mut CallToolRequestParams,
        on_progress: &Option<ProgressFn>,
    ) -> Result<std::result::Result<Answer, ServiceError>> {
        let id = direct.reserve();
        let session = call.conn.request_meta.as_ref();
        if let Some(session) = session {
            let mine = params.meta.get_or_insert_default();
            session.take_over(mine);
            crate::pool::session::logs::stamp(mine, &call.slot.shared);
            if let Some(capabilities) = call.capabilities {
                mine.insert(CLIENT_CAPABILITIES.into(), call.offered(capabilities));
            }
        }
        // As through rmcp: the server may report progress, which keeps the call from timing
        // out, and goes to the caller's callback (routed before the request is written, so
        // none is missed; the session layer hands it over before the reply is read).
        let token = Direct::progress_token(id);
        let _route = on_progress.clone().map(|f| {
            let token = NumberOrString::String(token.as_str().into());
            call.slot.shared.route_progress(ProgressToken(token), f)
        });
        let mut pending = direct
            .request(id, "tools/call", call.timeout, |line| {
                crate::wire::call_params::write(params, Some(token.as_str()), session, line)
            })
            .await
            .map_err(|e| {
                call.slot.connection_failed(self, call.conn);
                call.conn.too_large(call.name).unwrap_or_else(|| {
                    self.closing_or(Error::connection(call.name, format!("tools/call: {e}")))
                })
            })?;
        let reply = tokio::select! {
            r = pending.reply() => r,
            _ = call.cancelled() => {
                // A server that runs calls as tasks is told after a moment without an
                // answer: one told at once may start the task and never name it.
                let first = crate::pool::call::tasks::runs_tasks(call.conn).then_some(TASK_ANSWER);
                let heard = pending.cancel_hearing(first, LATE_ANSWER);
                crate::pool::call::tasks::stop_late_task(call.conn.clone(), heard);
                return Err(Error::Cancelled);
            }
        };
        call.conn.answered();
        Ok(match reply {
            Ok(line) => call_reply(&line).map_err(|message| Error::Protocol {
                server: call.name.to_string(),
                message: format!("tools/call: {message}"),
            })?,
            Err(DirectError::TimedOut) => Err(ServiceError::Timeout {
                timeout: call.timeout,
            }),
            Err(DirectError::Closed(_)) => Err(ServiceError::TransportClosed),
        })
    }

    /// `tools/call` through rmcp's session, with progress routed to `on_progress` and a
    /// `notifications/cancelled` sent if the call is dropped before its answer.
    async fn send_through_rmcp(
        self: &Arc<Self>,
        call: &ToolCall<'_>,
        params: &CallToolRequestParams,
        on_progress: &Option<ProgressFn>,
    ) -> Result<std::result::Result<Answer, ServiceError>> {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
        let mut options =
            PeerRequestOptions::with_timeout(call.timeout).reset_timeout_on_progress();
        // rmcp writes its own capabilities into `_meta` and then the options' keys over them.
        if let Some(capabilities) = call.capabilities
            && call.conn.modern
        {
            let meta = options.meta.get_or_insert_default();
            meta.insert(CLIENT_CAPABILITIES.into(), call.offered(capabilities));
        }
        // The caller's number for this call, which the transport takes off before it leaves
        // and puts on the server's requests on the call's stream.
        if call.conn.relates_calls
            && let Some(number) = crate::pool::call::call_mark::current()
        {
            let meta = options.meta.get_or_insert_default();
            meta.insert(RELATED_CALL_META.into(), number.into());
        }
        let handle = call
            .conn
            .peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| {
                call.slot.connection_failed(self, call.conn);
                self.closing_or(call.conn.failure(call.name, "tools/call", e))
            })?;
        let _route = on_progress.clone().map(|f| {
            call.slot
                .shared
                .route_progress(handle.progress_token.clone(), f)
        });
        let mut guard = TellOnDrop::new(tell_cancelled(call.conn.peer.clone(), handle.id.clone()));
        let mut answer = Box::pin(handle.await_response());
        let response = tokio::select! {
            r = &mut answer => r,
            _ = call.cancelled() => {
                // As on the direct path: a server that runs calls as tasks is told only after
                // a moment without an answer, and a task in the answer is cancelled.
                if crate::pool::call::tasks::runs_tasks(call.conn) {
                    let conn = call.conn.clone();
                    tokio::spawn(async move {
                        let heard = tokio::time::timeout(TASK_ANSWER, answer).await;
                        let Ok(answered) = heard else {
                            return drop(guard);
                        };
                        guard.disarm();
                        if let Ok(ServerResult::CreateTaskResult(created)) = answered {
                            let params = rmcp::model::CancelTaskParams::new(created.task.task_id);
                            let _ = conn.peer.cancel_task(params).await;
                        }
                    });
                }
                return Err(Error::Cancelled);
            }
        };
        guard.disarm();
        call.conn.answered();
        match response.map(Answer::of) {
            Ok(Some(answer)) => Ok(Ok(answer)),
            Ok(None) => Err(unexpected(call.slot, "tools/call")),
            Err(e) => Ok(Err(e)),
        }
    }

    /// What the server's response to `tools/call` means: the result, input the host must
    /// give, or an error. A failed connection is marked so; after a timeout the session is
    /// checked in the background.
    fn read_response(
        self: &Arc<Self>,
        call: &ToolCall<'_>,
        response: std::result::Result<Answer, ServiceError>,
    ) -> Result<Answer> {
        if response.is_err()
            && let Some(e) = call.conn.too_large(call.name)
        {
            // Over HTTP rmcp reports a refused reply as an error from the server.
            call.slot.connection_failed(self, call.conn);
            return Err(e);
        }
        match response {
            Ok(answer) => Ok(answer),
            Err(ServiceError::McpError(e)) => Err(needs_url(call.name, "tools/call", &e)
                .unwrap_or_else(|| Error::Tool {
                    tool: call.tool.to_string(),
                    message: e.message.to_string(),
                    code: Some(e.code.0),
                    data: e.data.clone(),
                })),
            Err(ServiceError::Timeout { timeout }) => {
                // A session the server forgot (e.g. it restarted and answers HTTP 400 rather
                // than 404) swallows requests; a failed check finds it, so the next call
                // reconnects instead of timing out again.
                call.slot.verify_in_background(self, call.conn);
                Err(Error::Timeout {
                    what: format!("tool '{}' on server '{}'", call.tool, call.name),
                    after: timeout,
                })
            }
            Err(e) => {
                call.slot.connection_failed(self, call.conn);
                Err(self.closing_or(call.conn.failure(call.name, "tools/call", e)))
            }
        }
    }

    /// While shutting down, a call cut off by the closing connection is a `ShuttingDown` error.
    pub(in crate::pool) fn closing_or(&self, e: Error) -> Error {
        if self.closing.load(std::sync::atomic::Ordering::SeqCst)
            && matches!(e, Error::Connection { .. })
        {
            Error::ShuttingDown
        } else {
            e
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mcpmux serve` lists again and calls once more with the same arguments when the pool
    /// no longer knows a tool: the refusal must hand them back untouched.
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
}
