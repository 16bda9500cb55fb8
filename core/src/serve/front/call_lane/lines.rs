//! The client's lines as the lane reads them: each line's head, read only as far as it takes
//! to tell a `tools/call` the lane answers from every other line, which goes to rmcp's loop
//! unchanged.

use std::sync::LazyLock;

use memchr::memmem::Finder;
use rmcp::model::{CallToolRequestParams, RequestId};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// rmcp's own bound on a client's line (`async_rw::DEFAULT_MAX_LINE_LENGTH`): longer lines are
/// dropped, as the loop drops them.
pub(super) const MAX_LINE: usize = 16 * 1024 * 1024;

/// A client's JSON-RPC message, read only as far as the lane needs, in one pass: rmcp's own
/// parse of a whole message buffers it through serde's untagged machinery, and reading the
/// params apart (as a raw value, then as a call's) scanned them twice.
#[derive(serde::Deserialize)]
pub(super) struct Head<'a> {
    /// "2.0", else the line is the loop's to refuse.
    #[serde(rename = "jsonrpc", borrow)]
    pub(super) version: std::borrow::Cow<'a, str>,
    pub(super) id: Option<LaneId>,
    #[serde(borrow)]
    pub(super) method: Option<std::borrow::Cow<'a, str>>,
    pub(super) params: Option<LaneParams>,
}

/// The params of the two messages the lane reads: a `tools/call` (rmcp's
/// `CallToolRequestParams`, field for field) and a `notifications/cancelled` (its
/// `requestId`). A line whose params do not fit goes to the loop.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct LaneParams {
    #[serde(rename = "_meta")]
    pub(super) meta: Option<rmcp::model::RequestMetaObject>,
    pub(super) name: Option<std::borrow::Cow<'static, str>>,
    pub(super) arguments: Option<rmcp::model::JsonObject>,
    pub(super) input_responses: Option<rmcp::model::InputResponses>,
    pub(super) request_state: Option<String>,
    pub(super) request_id: Option<LaneId>,
}

impl LaneParams {
    /// A call's params as rmcp's parse of the request would make them; `None` without a name.
    pub(super) fn into_call(self) -> Option<CallToolRequestParams> {
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
pub(super) struct LaneId(pub(super) RequestId);

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
pub(super) fn might_concern_lane(line: &[u8]) -> bool {
    // Built once: `memmem::find` builds its searcher on every call.
    static CALL: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"tools/call"));
    static CANCEL: LazyLock<Finder<'static>> =
        LazyLock::new(|| Finder::new(b"notifications/cancelled"));
    CALL.find(line).is_some() || CANCEL.find(line).is_some()
}

/// One read of [`LineReader::next`].
pub(super) enum Line {
    /// A line without its `\n` (and `\r`); empty lines are skipped.
    Whole(Vec<u8>),
    Oversized,
    End,
}

/// The client's lines, bounded as rmcp bounds them. `next` is cancel-safe: a partial line
/// stays in the buffer for the next call.
pub(super) struct LineReader<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    discarding: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(super) fn new(reader: R) -> Self {
        LineReader {
            reader: BufReader::with_capacity(64 * 1024, reader),
            line: Vec::new(),
            discarding: false,
        }
    }

    pub(super) async fn next(&mut self) -> Line {
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
