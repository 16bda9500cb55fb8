//! A client served over a byte stream (stdio): its tool calls answered beside rmcp's session
//! loop. The loop hands every request to a task of its own and every answer back through
//! itself, so a call crosses four tasks in this process, the front's largest cost. Here one
//! reader takes the client's lines: a `tools/call` of a session that is up goes straight to the
//! gateway's handler (the same `ServerHandler` the loop would call, with the context the loop
//! would build), whose answer is written at once; every other line goes to the loop unchanged,
//! so the handshake, lists, notifications and malformed input behave as rmcp makes them.
//! Messages the loop sends and the lane's answers share one writer, in the order they were
//! made, so a call's progress still precedes its answer.

mod lines;
mod output;

use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientNotification, ClientRequest,
    ProtocolVersion, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleServer, ServiceRole};
use rmcp::{ServerHandler, Service};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::serve::Gateway;
use lines::{Head, LaneId, Line, LineReader, MAX_LINE, might_concern_lane};
use output::MAX_BACKLOG;
pub(in crate::serve) use output::{LoopWriter, Output};

/// Past this many unanswered calls the lane stops reading the client, as a server blocked on
/// its pipe would: the lane reads lines far faster than calls are answered, so without a bound
/// a client writing calls and not reading answers grows the process without end. Generous,
/// because a call waiting on the client (sampling, elicitation) holds its place until the
/// client's answer, which comes on the same stream.
const MAX_CALLS_IN_FLIGHT: usize = 1024;

/// What the lane needs of a session once rmcp has opened it.
pub(in crate::serve) struct Session {
    pub peer: Peer<RoleServer>,
    /// Cancelled when the session ends: every call in the lane is its child.
    pub ended: CancellationToken,
}

/// The gateway as rmcp's loop serves it, opening the lane's session as the client's
/// `initialize` is answered. rmcp hands back the session once that answer is written, and the
/// client may send its first calls as soon as it reads the answer: a session opened only then
/// lets those calls, read in between, go to the loop, which does not count its answers
/// against the unread backlog the lane bounds.
pub(in crate::serve) struct Opening {
    pub gateway: Gateway,
    pub session: Arc<OnceLock<Session>>,
    pub ended: CancellationToken,
}

impl Opening {
    /// The lane takes this session's calls from now on.
    pub(in crate::serve) fn open(&self, peer: Peer<RoleServer>) {
        let _ = self.session.set(Session {
            peer,
            ended: self.ended.clone(),
        });
    }
}

impl Service<RoleServer> for Opening {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        let initialize = matches!(request, ClientRequest::InitializeRequest(_));
        let peer = context.peer.clone();
        let result = Service::handle_request(&self.gateway, request, context).await;
        // Only a session that `initialize` opened: rmcp stores the client's info before it
        // answers one, and never in a session opened without it (whose every request must
        // carry its metadata, checked by rmcp's loop, not by the lane).
        if initialize && result.is_ok() && peer.peer_info().is_some() {
            self.open(peer);
        }
        result
    }

    fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + Send + '_ {
        Service::handle_notification(&self.gateway, notification, context)
    }

    fn get_info(&self) -> <RoleServer as ServiceRole>::Info {
        Service::get_info(&self.gateway)
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        Service::supported_protocol_versions(&self.gateway)
    }
}

/// The lane's half of a served stream: the reader and what it shares with the writer.
pub(in crate::serve) struct Lane {
    /// Shared with every call's task: one count to raise per call, where a copy of the
    /// gateway raises one for each of its parts.
    gateway: Arc<Gateway>,
    session: Arc<OnceLock<Session>>,
    output: Arc<Output>,
    /// Calls in the lane by request id: a client's `notifications/cancelled` cancels one, and
    /// an answer is written only while its call is still here (as the loop drops the answer
    /// of a cancelled request).
    calls: Arc<Mutex<crate::fast_map::FastMap<RequestId, CancellationToken>>>,
}

impl Lane {
    pub(in crate::serve) fn new(
        gateway: Gateway,
        session: Arc<OnceLock<Session>>,
        output: Arc<Output>,
    ) -> Lane {
        Lane {
            gateway: Arc::new(gateway),
            session,
            output,
            calls: Arc::default(),
        }
    }

    /// Reads the client's lines until it closes the stream (or `stop`), sending to `to_loop`
    /// every line the lane does not answer. Closing `to_loop` at the end ends rmcp's loop.
    pub(in crate::serve) async fn run<R, W>(
        self,
        reader: R,
        mut to_loop: W,
        stop: CancellationToken,
    ) where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let mut lines = LineReader::new(reader);
        // One wait for the stop, polled again for every line: a wait made per line would
        // join the token's waiters and leave them again each time.
        let stopped = stop.cancelled();
        tokio::pin!(stopped);
        loop {
            // Both steps are cancel-safe: a partial line stays in the reader.
            let next = async {
                self.room().await;
                lines.next().await
            };
            let line = tokio::select! {
                line = next => line,
                _ = &mut stopped => break,
            };
            let line = match line {
                Line::Whole(line) => line,
                Line::Oversized => {
                    tracing::warn!(
                        max = MAX_LINE,
                        "a served client's message was too long, dropped"
                    );
                    continue;
                }
                Line::End => break,
            };
            if self.took(&line) {
                continue;
            }
            if to_loop.write_all(&line).await.is_err() || to_loop.flush().await.is_err() {
                break;
            }
        }
        let _ = to_loop.shutdown().await;
    }

    /// Returns once the lane may take another line: fewer than [`MAX_CALLS_IN_FLIGHT`] calls
    /// unanswered and fewer than [`MAX_BACKLOG`] bytes of answers unread.
    async fn room(&self) {
        loop {
            // Every freed call and every write leaves a permit, so none is missed between
            // the check and the wait.
            let freed = self.output.room.notified();
            let in_flight = self.calls.lock().unwrap().len();
            if in_flight < MAX_CALLS_IN_FLIGHT && self.output.backlog() < MAX_BACKLOG {
                return;
            }
            freed.await;
        }
    }

    /// Answers `line` in the lane if it is a tool call of an open session; notes a cancel of a
    /// call in the lane (the loop is told too: it ignores ids it does not know).
    fn took(&self, line: &[u8]) -> bool {
        let Some(session) = self.session.get() else {
            return false;
        };
        if !might_concern_lane(line) {
            return false;
        }
        // Checked whole once: read from bytes, serde checks each string apart, which for
        // the short strings of a call costs more than the one pass over the line.
        let Ok(line) = std::str::from_utf8(line) else {
            return false;
        };
        let Ok(head) = serde_json::from_str::<Head>(line) else {
            return false;
        };
        if head.version != "2.0" {
            return false;
        }
        match (head.method.as_deref(), head.id, head.params) {
            (Some("tools/call"), Some(LaneId(id)), Some(params)) => {
                // What is not a call's params goes to the loop, which answers it as it
                // always has.
                let Some(params) = params.into_call() else {
                    return false;
                };
                self.call(session, id, params);
                true
            }
            (Some("notifications/cancelled"), None, Some(params)) => {
                if let Some(LaneId(id)) = params.request_id
                    && let Some(call) = self.calls.lock().unwrap().remove(&id)
                {
                    call.cancel();
                }
                false
            }
            _ => false,
        }
    }

    /// Runs one call as the loop would (its own task, a context with the request's `_meta`
    /// and a token cancelled with the session), and writes its answer.
    fn call(&self, session: &Session, id: RequestId, mut params: CallToolRequestParams) {
        let request_ct = session.ended.child_token();
        let mut context = RequestContext::new(id.clone(), session.peer.clone());
        // The request's own token, where rmcp's loop gives the handler a child of it: the
        // gateway only watches its context's token, never cancels it, so a child would only
        // add a node to the session's tree of tokens on every call.
        context.ct = request_ct.clone();
        // Where rmcp's parse of the request puts `_meta`, and its loop then takes it from.
        context.meta = params.meta.take().unwrap_or_default();
        self.calls
            .lock()
            .unwrap()
            .insert(id.clone(), request_ct.clone());
        let (gateway, output, calls) = (
            self.gateway.clone(),
            self.output.clone(),
            self.calls.clone(),
        );
        tokio::spawn(async move {
            // Boxed: a call's future is some kilobytes, and a task's own future is copied
            // whole as it is spawned and again as it ends, where a box moves as a pointer.
            let handled = Box::pin(handle_call(&gateway, params, context));
            let answer = match handled.await {
                Ok(result) => ServerJsonRpcMessage::response(result, id.clone()),
                Err(error) => ServerJsonRpcMessage::error(error, Some(id.clone())),
            };
            let still_asked = calls.lock().unwrap().remove(&id).is_some();
            request_ct.cancel();
            if still_asked {
                output.send(&answer);
            }
            output.room.notify_one();
        });
    }
}

/// A call as rmcp's dispatch of a request (`Service::handle_request`) handles one in a session
/// opened by `initialize`: the protocol version the request names, if it names one, checked as
/// rmcp checks it; the gateway's `call_tool`, whose task rmcp refuses to a client that did not
/// declare tasks; the result shaped for the client's version as rmcp shapes it. rmcp's
/// dispatch future is as large as its largest request's (some 7 KB, copied into its box on
/// every call); this one is as large as a call's. The tests compare the two.
async fn handle_call(
    gateway: &Gateway,
    params: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<ServerResult, ErrorData> {
    admitted(gateway, &context)?;
    let modern = crate::serve::gateway::is_modern(&context);
    let declared_tasks = crate::serve::gateway::declares_tasks(&context);
    let response = ServerHandler::call_tool(gateway, params, context).await?;
    if matches!(response, CallToolResponse::Task(_)) && !declared_tasks {
        return Err(ErrorData::missing_required_client_capability(
            ClientCapabilities::builder().enable_tasks().build(),
        ));
    }
    let mut result = ServerResult::from(response);
    if modern {
        result.fill_missing_cache_hints();
    } else if matches!(result, ServerResult::InputRequiredResult(_)) {
        return Err(ErrorData::invalid_request(
            "InputRequiredResult requires negotiated protocol version 2026-07-28 or newer",
            None,
        ));
    } else {
        result.strip_result_type_for_legacy_peer();
        result.strip_non_object_output_for_legacy_peer();
    }
    Ok(result)
}

/// rmcp's checks of the protocol version a request names in its `_meta`: one the gateway
/// speaks, and from 2026-07-28 on with the rest of the metadata that version requires.
fn admitted(gateway: &Gateway, context: &RequestContext<RoleServer>) -> Result<(), ErrorData> {
    let Some(requested) = context.meta.protocol_version() else {
        return Ok(());
    };
    let supported = Service::supported_protocol_versions(gateway);
    if !supported.contains(&requested) {
        return Err(ErrorData::unsupported_protocol_version(
            requested, &supported,
        ));
    }
    if requested.as_str() >= ProtocolVersion::V_2026_07_28.as_str() {
        let missing = context
            .meta
            .missing_required_keys(&ProtocolVersion::V_2026_07_28);
        if !missing.is_empty() {
            return Err(ErrorData::invalid_params(
                format!(
                    "request _meta is missing or has malformed required fields: {}",
                    missing.join(", ")
                ),
                None,
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
