//! Requests the pool writes itself on a stdio session, past rmcp's service loop.
//!
//! Through rmcp a request crosses to the session's task, out to the writer, back from the reader
//! to the session task, is parsed into an untagged enum of every result type, and only then
//! reaches the caller: on a fast local server that costs more than the round trip itself. A
//! direct request is written from the caller's task and its reply handed straight from the
//! reader to the caller, still as bytes, to be parsed into the one type expected. Everything
//! else on the session (the handshake, server requests, notifications) stays with rmcp; direct
//! ids are strings of their own (`"mcpmux-N"`) so they never collide with rmcp's numbers.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::{Mutex, oneshot};

const ID_PREFIX: &str = "\"mcpmux-";

/// Ids are a counter: hashing them with SipHash would cost more than the lookup.
#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) | u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type Pending = HashMap<u64, oneshot::Sender<Vec<u8>>, std::hash::BuildHasherDefault<IdHasher>>;

/// The direct side of one stdio session: the shared stdin and the replies awaited.
pub(crate) struct Direct {
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    pending: std::sync::Mutex<Pending>,
    /// Lets the reader skip the id probe while nothing direct is in flight.
    waiting: AtomicUsize,
    next_id: AtomicU64,
    closed: AtomicBool,
}

/// Why a direct request got no reply.
#[derive(Debug)]
pub(crate) enum DirectError {
    /// The session ended (or stdin was closed) before the reply came.
    Closed(String),
}

impl std::fmt::Display for DirectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DirectError::Closed(m) => f.write_str(m),
        }
    }
}

/// A request on the wire. Dropping it before the reply arrives (a timeout, a cancelled
/// caller) tells the server with `notifications/cancelled`.
pub(crate) struct DirectCall {
    direct: Arc<Direct>,
    id: u64,
    rx: Option<oneshot::Receiver<Vec<u8>>>,
}

#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

/// A JSON-RPC reply whose result is parsed as `T` in the same pass.
#[derive(Deserialize)]
pub(crate) struct TypedReply<T> {
    #[serde(default = "Option::default")]
    pub result: Option<T>,
    #[serde(default)]
    pub error: Option<rmcp::model::ErrorData>,
}

/// A JSON-RPC reply, its result left unparsed for the caller's type.
#[derive(Deserialize)]
pub(crate) struct Reply<'a> {
    #[serde(borrow, default)]
    pub result: Option<&'a RawValue>,
    #[serde(default)]
    pub error: Option<rmcp::model::ErrorData>,
}

impl Direct {
    pub(crate) fn new(stdin: Arc<Mutex<Option<ChildStdin>>>) -> Arc<Direct> {
        Arc::new(Direct {
            stdin,
            pending: std::sync::Mutex::new(Pending::default()),
            waiting: AtomicUsize::new(0),
            next_id: AtomicU64::new(1),
            closed: AtomicBool::new(false),
        })
    }

    /// Writes `method` with `params` and returns the call whose reply to await.
    pub(crate) async fn request(
        self: &Arc<Self>,
        method: &str,
        params: &impl serde::Serialize,
    ) -> Result<DirectCall, DirectError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut line = Vec::with_capacity(128);
        line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        line.extend_from_slice(ID_PREFIX.as_bytes());
        let _ = write!(line, "{id}");
        line.extend_from_slice(b"\",\"method\":");
        serde_json::to_writer(&mut line, method).map_err(closed)?;
        line.extend_from_slice(b",\"params\":");
        serde_json::to_writer(&mut line, params).map_err(closed)?;
        line.extend_from_slice(b"}\n");
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.pending.lock().unwrap();
            // Checked under the lock `close` takes, so no sender is left behind by a close.
            if self.closed.load(Ordering::Acquire) {
                return Err(DirectError::Closed("the connection is closed".into()));
            }
            pending.insert(id, tx);
            self.waiting.fetch_add(1, Ordering::AcqRel);
        }
        let call = DirectCall {
            direct: self.clone(),
            id,
            rx: Some(rx),
        };
        let mut stdin = self.stdin.lock().await;
        let Some(w) = stdin.as_mut() else {
            return Err(DirectError::Closed("stdin of the server is closed".into()));
        };
        if let Err(e) = async {
            w.write_all(&line).await?;
            w.flush().await
        }
        .await
        {
            return Err(DirectError::Closed(format!(
                "writing to the server failed: {e}"
            )));
        }
        Ok(call)
    }

    fn forget(&self, id: u64) -> bool {
        let removed = self.pending.lock().unwrap().remove(&id).is_some();
        if removed {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
        }
        removed
    }

    /// Takes `line` if it answers a direct request; otherwise leaves it for rmcp.
    pub(crate) fn deliver(&self, line: &mut Vec<u8>) -> bool {
        if self.waiting.load(Ordering::Acquire) == 0 {
            return false;
        }
        let Some(id) = reply_id(line) else {
            return false;
        };
        let tx = self.pending.lock().unwrap().remove(&id);
        match tx {
            Some(tx) => {
                self.waiting.fetch_sub(1, Ordering::AcqRel);
                let _ = tx.send(std::mem::take(line));
            }
            // A reply to a call given up on (timed out, cancelled): nobody waits for it.
            None => line.clear(),
        }
        true
    }

    /// Whether the session has ended (the reader saw the end before rmcp's session task did).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The session ended: every waiting caller gets an error now.
    pub(crate) fn close(&self) {
        let mut pending = self.pending.lock().unwrap();
        self.closed.store(true, Ordering::Release);
        pending.clear();
        self.waiting.store(0, Ordering::Release);
    }
}

/// The direct id `line` answers, if it is a reply to a direct request.
fn reply_id(line: &[u8]) -> Option<u64> {
    // Most servers write `jsonrpc` then `id` first: then the id is read without scanning a
    // possibly large result.
    if let Some(rest) = line.strip_prefix(b"{\"jsonrpc\":\"2.0\",\"id\":\"mcpmux-") {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let after = &rest[digits..];
        if digits > 0
            && (after.starts_with(b"\",\"result\":") || after.starts_with(b"\",\"error\":"))
        {
            return std::str::from_utf8(&rest[..digits]).ok()?.parse().ok();
        }
    }
    let probe = serde_json::from_slice::<Probe>(line).ok()?;
    if probe.method.is_some() {
        return None;
    }
    probe
        .id
        .map(RawValue::get)
        .and_then(|raw| raw.strip_prefix(ID_PREFIX)?.strip_suffix('"'))
        .and_then(|n| n.parse::<u64>().ok())
}

fn closed(e: impl std::fmt::Display) -> DirectError {
    DirectError::Closed(e.to_string())
}

impl DirectCall {
    /// The reply's bytes (a whole JSON-RPC message).
    pub(crate) async fn reply(mut self) -> Result<Vec<u8>, DirectError> {
        let rx = self.rx.as_mut().expect("reply is awaited once");
        let line = rx
            .await
            .map_err(|_| DirectError::Closed("the connection closed before the reply".into()));
        self.rx = None;
        line
    }
}

impl Drop for DirectCall {
    fn drop(&mut self) {
        if self.rx.is_none() || !self.direct.forget(self.id) {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let direct = self.direct.clone();
        let id = self.id;
        rt.spawn(async move {
            let line = format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":\"mcpmux-{id}\",\"reason\":\"cancelled by the client\"}}}}\n"
            );
            if let Some(w) = direct.stdin.lock().await.as_mut() {
                let _ = w.write_all(line.as_bytes()).await;
                let _ = w.flush().await;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::reply_id;

    #[test]
    fn replies_to_direct_requests_are_recognised_in_any_field_order() {
        let cases: &[(&str, Option<u64>)] = &[
            (
                r#"{"jsonrpc":"2.0","id":"mcpmux-7","result":{"content":[]}}"#,
                Some(7),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"mcpmux-12","error":{"code":1,"message":"x"}}"#,
                Some(12),
            ),
            (r#"{"result":{},"id":"mcpmux-3","jsonrpc":"2.0"}"#, Some(3)),
            (
                r#"{ "jsonrpc": "2.0", "id": "mcpmux-4", "result": {} }"#,
                Some(4),
            ),
            // rmcp's own requests and the server's requests stay with rmcp.
            (r#"{"jsonrpc":"2.0","id":5,"result":{}}"#, None),
            (r#"{"jsonrpc":"2.0","id":"mcpmux-9","method":"ping"}"#, None),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
                None,
            ),
            (r#"{"jsonrpc":"2.0","id":"mcpmux-","result":{}}"#, None),
            (r#"{"jsonrpc":"2.0","id":"other-1","result":{}}"#, None),
            ("not json", None),
        ];
        for (line, want) in cases {
            assert_eq!(reply_id(line.as_bytes()), *want, "{line}");
        }
    }
}
