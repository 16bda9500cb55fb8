//! Legacy HTTP+SSE (MCP 2024-11-05): a GET opens an event stream whose first `endpoint`
//! event says where to POST; every server message then arrives as a `message` event.
//! rmcp dropped this client, and servers that only speak it are still common.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::{mpsc, oneshot};

use crate::config::record::ServerRecord;
use crate::error::{Error, Result};
use crate::events::{Event, EventBus};
use crate::transport::http::custom_headers;
use crate::transport::limit::MessageLimit;

/// The rmcp transport over an SSE stream plus POSTs.
pub(crate) struct SseTransport {
    client: reqwest::Client,
    endpoint: Arc<str>,
    headers: HeaderMap,
    rx: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// One parsed server-sent event.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// Incremental parser of `text/event-stream` (the WHATWG rules MCP servers rely on).
#[derive(Default)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    event: SseEvent,
    has_data: bool,
    max: usize,
    oversized: bool,
    /// Bytes of the event so far (every line), for what an oversized one is reported as.
    event_bytes: u64,
}

/// An event over the size limit, dropped; `size` is how many bytes it had.
#[derive(Debug, PartialEq)]
pub(crate) struct Oversized {
    pub size: u64,
}

impl std::fmt::Display for Oversized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "an event of {} bytes was larger than the limit and was dropped",
            self.size
        )
    }
}

impl SseParser {
    pub fn new(max: usize) -> Self {
        SseParser {
            max,
            ..Default::default()
        }
    }

    /// Feeds bytes; returns complete events, and `Err` for an event over the size limit
    /// (which is dropped).
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<std::result::Result<SseEvent, Oversized>> {
        let mut out = Vec::new();
        for &b in bytes {
            self.event_bytes += 1;
            if b != b'\n' {
                if self.line.len() <= self.max {
                    self.line.push(b);
                } else {
                    self.oversized = true;
                }
                continue;
            }
            let mut line = std::mem::take(&mut self.line);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.is_empty() {
                let event = std::mem::take(&mut self.event);
                let size = std::mem::take(&mut self.event_bytes);
                if std::mem::take(&mut self.oversized) {
                    out.push(Err(Oversized { size }));
                } else if std::mem::take(&mut self.has_data) {
                    out.push(Ok(event));
                }
                self.has_data = false;
                continue;
            }
            let line = String::from_utf8_lossy(&line);
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line.as_ref(), ""),
            };
            match field {
                "event" => self.event.event = Some(value.to_string()),
                "data" => {
                    if self.has_data {
                        self.event.data.push('\n');
                    }
                    self.event.data.push_str(value);
                    self.has_data = true;
                    if self.event.data.len() > self.max {
                        self.oversized = true;
                        self.event.data.clear();
                    }
                }
                _ => {}
            }
        }
        out
    }
}

/// Opens the event stream and waits for the `endpoint` event.
pub(crate) async fn open(
    record: &ServerRecord,
    events: EventBus,
    limit: Arc<MessageLimit>,
) -> Result<SseTransport> {
    let url = record.config.url.clone().unwrap_or_default();
    let name = record.name.clone();
    let mut headers = HeaderMap::new();
    for (k, v) in custom_headers(record)? {
        headers.insert(k, v);
    }
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| Error::connection(&name, format!("cannot build the HTTP client: {e}")))?;
    let response = client
        .get(&url)
        .headers(headers.clone())
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| {
            Error::connection(
                &name,
                format!(
                    "GET {}: {}",
                    crate::config::record::redact_url(&url),
                    crate::error::with_causes(&e)
                ),
            )
        })?;
    let status = response.status();
    let is_sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !status.is_success() || !is_sse {
        return Err(Error::connection(
            &name,
            format!("the SSE endpoint answered HTTP {status} without an event stream"),
        ));
    }
    let base = response.url().clone();
    let (tx, rx) = mpsc::channel(256);
    let (endpoint_tx, endpoint_rx) = oneshot::channel();
    let server_id = record.id.clone();
    let stream_base = base.clone();
    let reader = tokio::spawn(async move {
        let base = stream_base;
        let report = |message: String| {
            events.emit(Event::Log {
                server_id: server_id.clone(),
                level: "error".into(),
                source: "transport".into(),
                message,
            })
        };
        let mut endpoint_tx = Some(endpoint_tx);
        let mut parser = SseParser::new(limit.max());
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let Ok(chunk) = chunk else { break };
            for event in parser.feed(&chunk) {
                let event = match event {
                    Ok(e) => e,
                    Err(Oversized { size }) => {
                        // The request it answered would wait forever: end the session, and
                        // tell its caller why.
                        limit.exceeded(Some(size));
                        report(format!(
                            "server sent an event of {size} bytes, larger than {} bytes (the \
                             pool option maxMessageBytes); closing the connection",
                            limit.max()
                        ));
                        return;
                    }
                };
                match event.event.as_deref() {
                    Some("endpoint") => {
                        if let Some(t) = endpoint_tx.take() {
                            let _ = t.send(base.join(event.data.trim()).map_err(|e| e.to_string()));
                        }
                    }
                    None | Some("message") => match serde_json::from_str(&event.data) {
                        Ok(msg) => {
                            if tx.send(msg).await.is_err() {
                                return;
                            }
                        }
                        Err(e) => {
                            report(format!("server sent an event that is not JSON-RPC ({e})"))
                        }
                    },
                    Some(_) => {}
                }
            }
        }
    });
    let endpoint = match endpoint_rx.await {
        Ok(Ok(url)) => url,
        Ok(Err(e)) => {
            return Err(Error::connection(&name, format!("bad endpoint event: {e}")));
        }
        Err(_) => {
            return Err(Error::connection(
                &name,
                "the SSE stream ended before its endpoint event",
            ));
        }
    };
    if endpoint.origin() != base.origin() {
        // The spec pins the endpoint to the stream's origin; anything else is a redirect of
        // our messages (and headers) elsewhere.
        return Err(Error::connection(
            &name,
            "the endpoint event points to another origin",
        ));
    }
    Ok(SseTransport {
        client,
        endpoint: endpoint.as_str().into(),
        headers,
        rx,
        reader,
    })
}

impl Transport<RoleClient> for SseTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = std::result::Result<(), Self::Error>> + Send + 'static {
        let request = self
            .client
            .post(&*self.endpoint)
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .json(&item);
        async move {
            let response = request.send().await.map_err(std::io::Error::other)?;
            let status = response.status();
            if status.is_success() {
                Ok(())
            } else {
                Err(std::io::Error::other(format!(
                    "POST answered HTTP {status}"
                )))
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        self.rx.recv().await
    }

    async fn close(&mut self) -> std::result::Result<(), Self::Error> {
        self.reader.abort();
        self.rx.close();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_events_across_chunks_and_line_endings() {
        let mut p = SseParser::new(1024);
        let mut got = p.feed(b"event: endpoint\r\ndata: /messages?session=1\r\n\r\n: comment\n");
        got.extend(p.feed(b"data: {\"a\":\n"));
        got.extend(p.feed(b"data: 1}\n\nevent: message\ndata:x\n\n"));
        let got: Vec<_> = got.into_iter().map(Result::unwrap).collect();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].event.as_deref(), Some("endpoint"));
        assert_eq!(got[0].data, "/messages?session=1");
        assert_eq!(got[1].data, "{\"a\":\n1}");
        assert_eq!(got[2].data, "x");
    }

    #[test]
    fn oversized_events_are_dropped_with_an_error() {
        let mut p = SseParser::new(16);
        let got = p.feed(b"data: 0123456789abcdefghij\n\ndata: ok\n\n");
        assert_eq!(got[0], Err(Oversized { size: 28 }));
        assert_eq!(got[1].as_ref().unwrap().data, "ok");
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// A field's text: anything but the line breaks that end it.
        fn text() -> impl Strategy<Value = String> {
            crate::arbitrary::string(16).prop_map(|s| s.replace(['\n', '\r'], " "))
        }

        /// An event as a server sends it: its name, if any, and the lines of its data.
        fn event() -> impl Strategy<Value = (Option<String>, Vec<String>)> {
            let name = prop::option::of(text().prop_filter("named", |n| !n.is_empty()));
            (name, prop::collection::vec(text(), 1..4))
        }

        /// `events` on the wire: each line ended with LF or CRLF, comments and fields the
        /// client ignores between them, a space after the colon or not.
        fn encode(events: &[(Option<String>, Vec<String>)], seed: u64) -> Vec<u8> {
            let mut out = Vec::new();
            let mut bits = seed;
            let mut line = |out: &mut Vec<u8>, text: &str| {
                bits = bits.rotate_left(7) ^ 0x9e37_79b9_7f4a_7c15;
                out.extend_from_slice(text.as_bytes());
                out.extend_from_slice(if bits & 1 == 0 { b"\n" } else { b"\r\n" });
                bits
            };
            for (name, data) in events {
                if line(&mut out, ": a comment") & 2 == 0 {
                    line(&mut out, "id: 7");
                }
                if let Some(name) = name {
                    line(&mut out, &format!("event: {name}"));
                }
                for d in data {
                    let spaced = format!("data: {d}");
                    let tight = format!("data:{d}");
                    // Without the space, a value that starts with one keeps it.
                    let tight_ok = !d.starts_with(' ');
                    let choice = line(&mut Vec::new(), "") & 4 == 0;
                    line(&mut out, if choice && tight_ok { &tight } else { &spaced });
                }
                line(&mut out, "");
            }
            out
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            /// Whatever the chunks a stream arrives in, the events are the ones sent.
            #[test]
            fn events_are_read_as_sent_however_the_stream_is_cut(
                events in prop::collection::vec(event(), 0..6),
                seed in any::<u64>(),
                cuts in prop::collection::vec(any::<usize>(), 0..8),
            ) {
                let wire = encode(&events, seed);
                let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (wire.len() + 1)).collect();
                cuts.push(wire.len());
                cuts.sort_unstable();
                let mut parser = SseParser::new(1 << 20);
                let mut got = Vec::new();
                let mut from = 0;
                for cut in cuts {
                    got.extend(parser.feed(&wire[from..cut]));
                    from = cut;
                }
                let got: Vec<SseEvent> = got.into_iter().map(Result::unwrap).collect();
                let want: Vec<SseEvent> = events
                    .into_iter()
                    .map(|(event, data)| SseEvent { event, data: data.join("\n") })
                    .collect();
                prop_assert_eq!(got, want);
            }

            /// Bytes of no shape: no panic, and no event larger than the limit.
            #[test]
            fn noise_never_gives_an_event_past_the_limit(
                bytes in prop::collection::vec(any::<u8>(), 0..400),
            ) {
                let mut parser = SseParser::new(32);
                for event in parser.feed(&bytes).into_iter().flatten() {
                    prop_assert!(event.data.len() <= 32);
                }
            }
        }
    }
}
