//! A client served over a byte stream (stdio): its tool calls answered beside rmcp's session
//! loop. The loop hands every request to a task of its own and every answer back through
//! itself, so a call crosses four tasks in this process, the front's largest cost. Here one
//! reader takes the client's lines: a `tools/call` of a session that is up goes straight to the
//! gateway's handler (the same `ServerHandler` the loop would call, with the context the loop
//! would build), whose answer is written at once; every other line goes to the loop unchanged,
//! so the handshake, lists, notifications and malformed input behave as rmcp makes them.
//! Messages the loop sends and the lane's answers share one writer, in the order they were
//! made, so a call's progress still precedes its answer.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, LazyLock, Mutex, OnceLock};
use std::task::{Context, Poll};

use memchr::memmem::Finder;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientNotification, ClientRequest,
    ProtocolVersion, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleServer, ServiceRole};
use rmcp::{ServerHandler, Service};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

use crate::serve::Gateway;

/// rmcp's own bound on a client's line (`async_rw::DEFAULT_MAX_LINE_LENGTH`): longer lines are
/// dropped, as the loop drops them.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// Past this many unanswered calls the lane stops reading the client, as a server blocked on
/// its pipe would: the lane reads lines far faster than calls are answered, so without a bound
/// a client writing calls and not reading answers grows the process without end. Generous,
/// because a call waiting on the client (sampling, elicitation) holds its place until the
/// client's answer, which comes on the same stream.
const MAX_CALLS_IN_FLIGHT: usize = 1024;

/// Past this many bytes of answers the client has not read yet, the lane stops reading too.
const MAX_BACKLOG: u64 = 4 * 1024 * 1024;

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

/// A client's JSON-RPC message, read only as far as the lane needs, in one pass: rmcp's own
/// parse of a whole message buffers it through serde's untagged machinery, and reading the
/// params apart (as a raw value, then as a call's) scanned them twice.
#[derive(serde::Deserialize)]
struct Head<'a> {
    /// "2.0", else the line is the loop's to refuse.
    #[serde(rename = "jsonrpc", borrow)]
    version: std::borrow::Cow<'a, str>,
    id: Option<LaneId>,
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    params: Option<LaneParams>,
}

/// The params of the two messages the lane reads: a `tools/call` (rmcp's
/// `CallToolRequestParams`, field for field) and a `notifications/cancelled` (its
/// `requestId`). A line whose params do not fit goes to the loop.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct LaneParams {
    #[serde(rename = "_meta")]
    meta: Option<rmcp::model::RequestMetaObject>,
    name: Option<std::borrow::Cow<'static, str>>,
    arguments: Option<rmcp::model::JsonObject>,
    input_responses: Option<rmcp::model::InputResponses>,
    request_state: Option<String>,
    request_id: Option<LaneId>,
}

impl LaneParams {
    /// A call's params as rmcp's parse of the request would make them; `None` without a name.
    fn into_call(self) -> Option<CallToolRequestParams> {
        let mut call = CallToolRequestParams::new(self.name?);
        call.meta = self.meta;
        call.arguments = self.arguments;
        call.input_responses = self.input_responses;
        call.request_state = self.request_state;
        Some(call)
    }
}

/// A request id read as rmcp reads one (an integer, also in float form such as `1.0`, or a
/// string), without going through a `serde_json::Value` first.
struct LaneId(RequestId);

impl<'de> serde::Deserialize<'de> for LaneId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = LaneId;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<LaneId, E> {
                Ok(LaneId(RequestId::Number(n)))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<LaneId, E> {
                i64::try_from(n)
                    .map(|n| LaneId(RequestId::Number(n)))
                    .map_err(|_| E::custom("Number too large for i64"))
            }
            fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<LaneId, E> {
                // rmcp's bound: integers that a double holds exactly.
                const MAX_EXACT: f64 = 9_007_199_254_740_992.0;
                if f.fract() == 0.0 && f.abs() < MAX_EXACT {
                    Ok(LaneId(RequestId::Number(f as i64)))
                } else {
                    Err(E::custom("Expected an integer"))
                }
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<LaneId, E> {
                Ok(LaneId(RequestId::String(s.into())))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// Whether a line may be a tool call or a cancel: a scan for the method's name, so the other
/// lines (the loop's) are not parsed twice.
fn might_concern_lane(line: &[u8]) -> bool {
    // Built once: `memmem::find` builds its searcher on every call.
    static CALL: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"tools/call"));
    static CANCEL: LazyLock<Finder<'static>> =
        LazyLock::new(|| Finder::new(b"notifications/cancelled"));
    CALL.find(line).is_some() || CANCEL.find(line).is_some()
}

/// One read of [`LineReader::next`].
enum Line {
    /// A line without its `\n` (and `\r`); empty lines are skipped.
    Whole(Vec<u8>),
    Oversized,
    End,
}

/// The client's lines, bounded as rmcp bounds them. `next` is cancel-safe: a partial line
/// stays in the buffer for the next call.
struct LineReader<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    discarding: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    fn new(reader: R) -> Self {
        LineReader {
            reader: BufReader::with_capacity(64 * 1024, reader),
            line: Vec::new(),
            discarding: false,
        }
    }

    async fn next(&mut self) -> Line {
        loop {
            let (taken, ended) = {
                let Ok(available) = self.reader.fill_buf().await else {
                    return Line::End;
                };
                if available.is_empty() {
                    return Line::End;
                }
                let newline = memchr::memchr(b'\n', available);
                let take = newline.map_or(available.len(), |i| i + 1);
                if !self.discarding {
                    if self.line.len() + take > MAX_LINE {
                        self.line.clear();
                        self.discarding = true;
                    } else {
                        self.line.extend_from_slice(&available[..take]);
                    }
                }
                (take, newline.is_some())
            };
            self.reader.consume(taken);
            if !ended {
                continue;
            }
            if std::mem::take(&mut self.discarding) {
                return Line::Oversized;
            }
            let mut line = std::mem::take(&mut self.line);
            while matches!(line.last(), Some(b'\n' | b'\r')) {
                line.pop();
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            line.push(b'\n');
            return Line::Whole(line);
        }
    }
}

/// The client's side of the stream: every message for it, from the loop or the lane, queued
/// in order and written by one task, which writes whatever has queued up in one go.
pub(in crate::serve) struct Output {
    state: Mutex<Queued>,
    /// Wakes the writer.
    queued: tokio::sync::Notify,
    /// How many bytes the writer has written so far; the loop's flush waits on it.
    written: tokio::sync::watch::Sender<u64>,
    /// Told when a lane call ends or a batch is written: the lane may be waiting for room.
    room: tokio::sync::Notify,
}

#[derive(Default)]
struct Queued {
    bytes: Vec<u8>,
    /// Bytes ever queued.
    total: u64,
    /// The writer stopped: the client's end is gone, or the session ended.
    closed: bool,
}

impl Output {
    /// An output writing to `writer` from a task of its own, until [`Output::close`].
    pub(in crate::serve) fn start<W>(writer: W) -> (Arc<Output>, tokio::task::JoinHandle<()>)
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let output = Arc::new(Output {
            state: Mutex::default(),
            queued: tokio::sync::Notify::new(),
            written: tokio::sync::watch::channel(0).0,
            room: tokio::sync::Notify::new(),
        });
        let task = tokio::spawn(output.clone().write_out(writer));
        (output, task)
    }

    /// Queues `message` as one line, written straight into the queue.
    fn send(&self, message: &ServerJsonRpcMessage) {
        let mut state = self.state.lock().unwrap();
        if state.closed {
            return;
        }
        let start = state.bytes.len();
        if let Err(e) = crate::wire::answer_line::write(message, &mut state.bytes) {
            state.bytes.truncate(start);
            drop(state);
            tracing::error!("a served call's answer could not be written: {e}");
            return;
        }
        state.bytes.push(b'\n');
        state.total += (state.bytes.len() - start) as u64;
        drop(state);
        self.queued.notify_one();
    }

    /// Queues whole lines; returns the count of bytes queued so far, or `None` once closed.
    fn queue(&self, lines: &[u8]) -> Option<u64> {
        let mut state = self.state.lock().unwrap();
        if state.closed {
            return None;
        }
        state.bytes.extend_from_slice(lines);
        state.total += lines.len() as u64;
        let total = state.total;
        drop(state);
        self.queued.notify_one();
        Some(total)
    }

    /// Bytes queued and not yet written to the client.
    fn backlog(&self) -> u64 {
        let total = self.state.lock().unwrap().total;
        total.saturating_sub(*self.written.borrow())
    }

    /// Writes what is queued, once the lane and the loop are done with the session.
    pub(in crate::serve) fn close(&self) {
        self.state.lock().unwrap().closed = true;
        self.queued.notify_one();
    }

    async fn write_out<W: AsyncWrite + Unpin>(self: Arc<Self>, mut writer: W) {
        let mut batch = Vec::new();
        let mut done = 0u64;
        loop {
            let closed = {
                let mut state = self.state.lock().unwrap();
                // The queue keeps the batch's allocation for what comes next.
                std::mem::swap(&mut batch, &mut state.bytes);
                state.closed
            };
            if batch.is_empty() {
                if closed {
                    break;
                }
                self.queued.notified().await;
                continue;
            }
            if writer.write_all(&batch).await.is_err() || writer.flush().await.is_err() {
                // The client is gone: nothing more can reach it.
                self.state.lock().unwrap().closed = true;
                break;
            }
            done += batch.len() as u64;
            self.written.send_replace(done);
            self.room.notify_one();
            batch.clear();
        }
        let _ = writer.shutdown().await;
        // Flushes waiting on bytes that will never be written end now (see `LoopWriter`), and
        // so does the lane's wait for room.
        self.written.send_replace(u64::MAX);
        self.room.notify_one();
    }
}

/// The loop's writer: what it writes joins the [`Output`] queue line by line, and its flush
/// returns once those lines are written, as the loop's writes to stdout did.
pub(in crate::serve) struct LoopWriter {
    output: Arc<Output>,
    partial: Vec<u8>,
    /// Bytes of the queue this writer's lines end at.
    mark: u64,
    flushing: Option<Pin<Box<dyn Future<Output = bool> + Send>>>,
}

impl LoopWriter {
    pub(in crate::serve) fn new(output: Arc<Output>) -> LoopWriter {
        LoopWriter {
            output,
            partial: Vec::new(),
            mark: 0,
            flushing: None,
        }
    }
}

fn gone() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the served client is gone")
}

impl AsyncWrite for LoopWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        this.partial.extend_from_slice(buf);
        if let Some(end) = memchr::memrchr(b'\n', &this.partial) {
            let lines: Vec<u8> = this.partial.drain(..=end).collect();
            match this.output.queue(&lines) {
                Some(total) => this.mark = total,
                None => return Poll::Ready(Err(gone())),
            }
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.flushing.is_none() {
            let mark = this.mark;
            let mut written = this.output.written.subscribe();
            if *written.borrow() >= mark {
                return Poll::Ready(Ok(()));
            }
            this.flushing = Some(Box::pin(async move {
                written
                    .wait_for(|w| *w >= mark)
                    .await
                    .is_ok_and(|w| *w != u64::MAX)
            }));
        }
        let flushing = this.flushing.as_mut().expect("set above");
        let written = std::task::ready!(flushing.as_mut().poll(cx));
        this.flushing = None;
        Poll::Ready(if written { Ok(()) } else { Err(gone()) })
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.poll_flush(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Once a client reads its `initialize` answer, the calls it sends next take the lane.
    #[tokio::test]
    async fn the_session_opens_before_the_initialize_answer_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::pool::empty_pool(dir.path()).await;
        let seal = Arc::new(crate::serve::relay::seal::Seal::new(None).unwrap());
        let opening = Opening {
            gateway: Gateway::new(pool.clone(), Default::default(), seal),
            session: Arc::new(OnceLock::new()),
            ended: CancellationToken::new(),
        };
        // `session_at` finds the session open as soon as it has read the answer.
        let (_, end) = session_at(opening, "2025-11-25").await;
        end().await.unwrap();
        pool.close().await;
    }

    /// A pool with one host tool, `shape`, whose result carries what rmcp shapes by the
    /// client's version: a `resultType` and structured content that is not an object.
    async fn pool_with_a_shaped_tool(dir: &std::path::Path) -> crate::pool::Pool {
        let pool = crate::pool::Pool::open(crate::pool::PoolOptions {
            config_path: Some(dir.join("servers.json")),
            ..Default::default()
        })
        .await
        .unwrap();
        pool.register_tool(crate::tools::host_tools::HostTool {
            name: "shape".into(),
            description: "A result rmcp shapes by version".into(),
            input_schema: serde_json::json!({"type": "object"}),
            handler: Arc::new(|_| {
                Box::pin(async {
                    let mut result = rmcp::model::CallToolResult::success(vec![
                        rmcp::model::ContentBlock::text("a list"),
                    ]);
                    result.structured_content = Some(serde_json::json!([1, 2]));
                    Ok(result)
                })
            }),
        })
        .unwrap();
        pool
    }

    /// A session of `opening`'s gateway over a pipe, opened by an `initialize` asking for
    /// `version`: open once the client has read the answer. Its peer, and what ends it.
    async fn session_at(
        opening: Opening,
        version: &str,
    ) -> (
        Peer<RoleServer>,
        impl FnOnce() -> tokio::task::JoinHandle<()>,
    ) {
        use rmcp::ServiceExt;
        let session = opening.session.clone();
        let (server_side, client_side) = tokio::io::duplex(64 * 1024);
        let serving = tokio::spawn(opening.serve(server_side));
        let (reading, mut writing) = tokio::io::split(client_side);
        let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {},
                "clientInfo": {"name": "dispatch-check", "version": "1"}}});
        writing
            .write_all(format!("{initialize}\n").as_bytes())
            .await
            .unwrap();
        let answer = BufReader::new(reading).lines().next_line().await.unwrap();
        assert!(
            answer.as_ref().is_some_and(|a| a.contains("serverInfo")),
            "{answer:?}"
        );
        let peer = session.get().expect("the session opened").peer.clone();
        let end = move || {
            drop(writing);
            tokio::spawn(async move {
                let _ = serving.await.unwrap().unwrap().waiting().await;
            })
        };
        (peer, end)
    }

    /// The lane answers a call as rmcp's dispatch of the same request does: the same result
    /// (shaped for the client's version) or the same error, for clients before and after
    /// 2026-07-28, whatever protocol version the request's `_meta` names or lacks.
    #[tokio::test]
    async fn the_lane_answers_a_call_as_rmcps_dispatch_does() {
        use rmcp::model::{CallToolRequest, Implementation, RequestMetaObject};
        let dir = tempfile::tempdir().unwrap();
        let pool = pool_with_a_shaped_tool(dir.path()).await;
        let seal = Arc::new(crate::serve::relay::seal::Seal::new(None).unwrap());
        let gateway = Gateway::new(pool.clone(), Default::default(), seal);
        let metas = {
            let version = |v: &str| {
                let mut meta = RequestMetaObject::default();
                meta.insert("io.modelcontextprotocol/protocolVersion".into(), v.into());
                meta
            };
            let mut whole = version("2026-07-28");
            whole.set_client_info(Implementation::new("dispatch-check", "1"));
            whole.set_client_capabilities(Default::default());
            [
                RequestMetaObject::default(),
                version("1999-01-01"),
                version("2025-11-25"),
                version("2026-07-28"),
                whole,
            ]
        };
        let mut compared = 0;
        // An `initialize` asking for 2026-07-28 opens a session of the latest version before it.
        for session_version in ["2025-06-18", "2025-11-25", "2026-07-28"] {
            let opening = Opening {
                gateway: gateway.clone(),
                session: Arc::new(OnceLock::new()),
                ended: CancellationToken::new(),
            };
            let (peer, end) = session_at(opening, session_version).await;
            let listed = ServerHandler::list_tools(
                &gateway,
                None,
                RequestContext::new(RequestId::Number(2), peer.clone()),
            )
            .await
            .unwrap();
            let shape = listed.tools.iter().find(|t| t.name.ends_with("shape"));
            let shape = shape.expect("the host tool is served").name.to_string();
            for name in [shape.as_str(), "no_such_tool"] {
                for meta in &metas {
                    let context = || {
                        let mut context = RequestContext::new(RequestId::Number(3), peer.clone());
                        context.meta = meta.clone();
                        context
                    };
                    let params = CallToolRequestParams::new(name.to_string());
                    let ours = handle_call(&gateway, params.clone(), context()).await;
                    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
                    let rmcps = Service::handle_request(&gateway, request, context()).await;
                    let as_json = |r: &Result<ServerResult, ErrorData>| match r {
                        Ok(result) => serde_json::to_value(result).unwrap(),
                        Err(error) => serde_json::json!({"error": error}),
                    };
                    assert_eq!(
                        as_json(&ours),
                        as_json(&rmcps),
                        "{session_version} session, {name}, _meta {meta:?}"
                    );
                    compared += usize::from(ours.is_ok());
                }
            }
            end().await.unwrap();
        }
        // The tool answered for each session (not only errors were compared).
        assert!(compared >= 4, "{compared}");
        pool.close().await;
    }

    /// The lane reads a call's id and params as rmcp's parse of the request would.
    #[test]
    fn a_call_is_read_as_rmcp_reads_it() {
        let line = br#"{"params":{"_meta":{"progressToken":7},"arguments":{"text":"hi"},"name":"a__echo","requestState":"s"},"method":"tools/call","id":1.0,"jsonrpc":"2.0"}"#;
        let head: Head = serde_json::from_slice(line).unwrap();
        assert_eq!(head.version, "2.0");
        assert_eq!(head.method.as_deref(), Some("tools/call"));
        assert!(matches!(head.id, Some(LaneId(RequestId::Number(1)))));
        let ours = head.params.unwrap().into_call().unwrap();
        let line: serde_json::Value = serde_json::from_slice(line).unwrap();
        let rmcps: CallToolRequestParams = serde_json::from_value(line["params"].clone()).unwrap();
        assert_eq!(ours, rmcps);

        for (id, read) in [
            (r#""x-1""#, Some(RequestId::String("x-1".into()))),
            ("42", Some(RequestId::Number(42))),
            ("-3", Some(RequestId::Number(-3))),
            ("1.5", None),
            ("18446744073709551615", None),
            ("{}", None),
        ] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call"}}"#);
            let head = serde_json::from_str::<Head>(&line).ok();
            let got = head.and_then(|h| h.id).map(|LaneId(id)| id);
            assert_eq!(got, read, "{line}");
        }
        // A call without a name is the loop's to refuse; so is another version.
        let nameless: Head =
            serde_json::from_str(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#)
                .unwrap();
        assert!(nameless.params.unwrap().into_call().is_none());
        let other: Head = serde_json::from_str(r#"{"jsonrpc":"1.0","id":1}"#).unwrap();
        assert_ne!(other.version, "2.0");
        let cancel: Head = serde_json::from_str(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r","reason":"x"}}"#,
        )
        .unwrap();
        let id = cancel.params.unwrap().request_id.map(|LaneId(id)| id);
        assert_eq!(id, Some(RequestId::String("r".into())));
    }

    async fn lines_of(input: &[u8]) -> Vec<String> {
        let mut reader = LineReader::new(input);
        let mut out = Vec::new();
        loop {
            match reader.next().await {
                Line::Whole(l) => out.push(String::from_utf8(l).unwrap()),
                Line::Oversized => out.push("<oversized>".into()),
                Line::End => return out,
            }
        }
    }

    #[tokio::test]
    async fn lines_are_split_trimmed_and_blank_ones_skipped() {
        let lines = lines_of(b"{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"unterminated\"").await;
        assert_eq!(lines, ["{\"a\":1}\n", "{\"b\":2}\n"]);
    }

    #[tokio::test]
    async fn an_oversized_line_is_dropped_and_the_next_one_read() {
        let mut input = vec![b'x'; MAX_LINE + 10];
        input.extend_from_slice(b"\n{\"after\":true}\n");
        assert_eq!(
            lines_of(&input).await,
            ["<oversized>", "{\"after\":true}\n"]
        );
    }

    #[tokio::test]
    async fn the_loop_writer_flushes_once_its_lines_are_written() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (output, task) = Output::start(server);
        let mut writer = LoopWriter::new(output.clone());
        writer.write_all(b"{\"first\":").await.unwrap();
        writer.write_all(b"1}\n{\"second\"").await.unwrap();
        writer.flush().await.unwrap();
        output.queue(b"{\"lane\":true}\n");
        writer.write_all(b":2}\n").await.unwrap();
        writer.flush().await.unwrap();
        output.close();
        task.await.unwrap();
        let mut read = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut { client }, &mut read)
            .await
            .unwrap();
        assert_eq!(read, "{\"first\":1}\n{\"lane\":true}\n{\"second\":2}\n");
    }

    #[tokio::test]
    async fn lines_longer_than_the_pipe_holds_are_written_whole_and_in_order() {
        let (client, server) = tokio::io::duplex(8);
        let (output, task) = Output::start(server);
        output.queue(b"{\"first\":\"longer than the pipe holds\"}\n");
        output.queue(b"{\"second\":2}\n");
        let reading = tokio::spawn(async move {
            let mut read = String::new();
            tokio::io::AsyncReadExt::read_to_string(&mut { client }, &mut read)
                .await
                .map(|_| read)
        });
        output.close();
        task.await.unwrap();
        assert_eq!(
            reading.await.unwrap().unwrap(),
            "{\"first\":\"longer than the pipe holds\"}\n{\"second\":2}\n"
        );
        assert_eq!(output.backlog(), 0);
    }

    #[tokio::test]
    async fn a_flush_after_the_client_left_fails_instead_of_hanging() {
        let (client, server) = tokio::io::duplex(16);
        drop(client);
        let (output, task) = Output::start(server);
        let mut writer = LoopWriter::new(output);
        writer.write_all(b"{\"to\":\"nobody\"}\n").await.unwrap();
        assert!(writer.flush().await.is_err());
        task.await.unwrap();
    }

    mod properties {
        use super::*;
        use crate::arbitrary;
        use proptest::prelude::*;
        use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
        use serde_json::{Value, json};

        /// A call as its handler gets it: the id, the params, and the request's `_meta`
        /// (which rmcp's parse moves out of the params, into the context).
        type Call = (
            RequestId,
            CallToolRequestParams,
            rmcp::model::RequestMetaObject,
        );

        /// What rmcp makes of a line: a `tools/call`, or nothing.
        fn rmcps(line: &str) -> Option<Call> {
            use rmcp::model::GetMeta;
            match serde_json::from_str::<ClientJsonRpcMessage>(line).ok()? {
                JsonRpcMessage::Request(request) => {
                    let meta = request.request.get_meta().clone();
                    match request.request {
                        ClientRequest::CallToolRequest(mut call) => {
                            let mut meta = meta;
                            meta.extend(call.params.meta.take().unwrap_or_default());
                            Some((request.id, call.params, meta))
                        }
                        _ => None,
                    }
                }
                _ => None,
            }
        }

        /// What the lane makes of it (as `Lane::call` hands it on): the same, or nothing
        /// (the loop then reads it).
        fn lanes(line: &str) -> Option<Call> {
            let head = serde_json::from_str::<Head>(line).ok()?;
            if head.version != "2.0" || head.method.as_deref() != Some("tools/call") {
                return None;
            }
            let LaneId(id) = head.id?;
            let mut params = head.params?.into_call()?;
            let meta = params.meta.take().unwrap_or_default();
            Some((id, params, meta))
        }

        /// Ids of every kind a client sends, and some no one should.
        fn id() -> impl Strategy<Value = Value> {
            prop_oneof![
                arbitrary::string(10).prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                any::<u64>().prop_map(Value::from),
                (-1000i64..1000).prop_map(|n| json!(n as f64)),
                Just(json!(1.5)),
                Just(json!(null)),
                Just(json!({"x": 1})),
            ]
        }

        /// A `tools/call` line, its members in any order, written any way.
        fn call() -> impl Strategy<Value = String> {
            let params = (
                prop::option::of(arbitrary::string(12)),
                prop::option::of(arbitrary::map()),
                prop::option::of(arbitrary::map()),
                prop::option::of(arbitrary::string(8)),
            )
                .prop_map(|(name, arguments, meta, state)| {
                    let mut params = serde_json::Map::new();
                    if let Some(name) = name {
                        params.insert("name".into(), name.into());
                    }
                    if let Some(arguments) = arguments {
                        params.insert("arguments".into(), Value::Object(arguments));
                    }
                    if let Some(meta) = meta {
                        params.insert("_meta".into(), Value::Object(meta));
                    }
                    if let Some(state) = state {
                        params.insert("requestState".into(), state.into());
                    }
                    Value::Object(params)
                });
            let version = prop_oneof![9 => Just("2.0"), 1 => Just("1.0")];
            (version, id(), params, any::<u8>(), arbitrary::style()).prop_map(
                |(version, id, params, order, style)| {
                    let mut members = vec![
                        ("jsonrpc", Value::from(version)),
                        ("id", id),
                        ("method", Value::from("tools/call")),
                        ("params", params),
                    ];
                    members.rotate_left(order as usize % 4);
                    if order & 0x10 != 0 {
                        members.reverse();
                    }
                    arbitrary::object(&members, style)
                },
            )
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            /// A call the lane takes is the call rmcp reads, id and params alike; one rmcp
            /// would not read as a call, the lane leaves to the loop.
            #[test]
            fn the_lane_reads_a_call_as_rmcp_does(line in call()) {
                match (lanes(&line), rmcps(&line)) {
                    (Some(ours), Some(theirs)) => prop_assert_eq!(ours, theirs, "{}", line),
                    (Some(ours), None) => prop_assert!(false, "taken, rmcp refuses it: {ours:?} {line}"),
                    // Left to the loop, which reads it as rmcp does.
                    (None, _) => {}
                }
            }

            /// A line broken anywhere: never taken as a call rmcp would not read.
            #[test]
            fn a_broken_line_is_never_taken_wrongly(
                line in call(),
                at in any::<usize>(),
                how in any::<u8>(),
            ) {
                let broken = arbitrary::mutated(line.as_bytes(), at, how);
                if let Ok(text) = std::str::from_utf8(&broken)
                    && let Some(ours) = lanes(text)
                {
                    prop_assert_eq!(Some(ours), rmcps(text), "{}", text);
                }
            }
        }
    }
}
