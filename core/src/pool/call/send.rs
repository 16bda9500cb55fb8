//! One `tools/call` on one connection, sent by either path: the direct path (the request
//! written by hand and its reply read off the stdio server's stdout, `transport::direct`) for
//! a plain call to a stdio server, rmcp's otherwise; with the late answer, the cancellation
//! and the tasks each path shares.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, InputRequests, InputRequiredResult,
    InputResponses, JsonObject, NumberOrString, ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use rmcp::{Peer, RoleClient};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::pool::Inner;
use crate::pool::call::calls::{
    CallOptions, CallRound, InputRound, StartedTask, TaskMode, needs_url,
};
use crate::pool::call::input_rounds::{InputRounds, Retry, RoundsError, client_of, unexpected};
use crate::pool::call::reply::{Answer, call_reply};
use crate::pool::call::tasks::with_tasks;
use crate::pool::call::tell_on_drop::TellOnDrop;
use crate::pool::server::slot::Slot;
use crate::pool::session::client_side::ProgressFn;
use crate::pool::session::connection::Connection;
use crate::transport::direct::{Direct, DirectError};
use crate::transport::related_call::RELATED_CALL_META;

/// How long a cancelled call still listens for the answer its server may have sent before
/// it learned (a task it started, which is then cancelled too).
const LATE_ANSWER: Duration = Duration::from_secs(10);

/// How long a cancelled call of a server that runs calls as tasks waits for the answer (a
/// task's comes at once) before telling the server.
const TASK_ANSWER: Duration = Duration::from_millis(500);

/// The `_meta` key of a 2026-07-28 request's client capabilities.
const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

impl Inner {
    #[allow(
        clippy::manual_async_fn,
        reason = "an `async fn` would keep a second copy of its arguments in every call's future"
    )]
    pub(super) fn call_on(
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
    pub(super) async fn follow(
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
    pub(super) async fn send_direct(
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
    pub(super) async fn send_through_rmcp(
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
    pub(super) fn read_response(
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

/// `notifications/cancelled` of request `id`, for a call dropped before its answer.
pub(super) async fn tell_cancelled(peer: Peer<RoleClient>, id: RequestId) {
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
