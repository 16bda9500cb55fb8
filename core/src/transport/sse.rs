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
use crate::wire::sse::{Oversized, SseParser};

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
    let response = event_stream(&client, &url, &headers, &name).await?;
    let base = response.url().clone();
    let (tx, rx) = mpsc::channel(256);
    let (endpoint_tx, endpoint_rx) = oneshot::channel();
    let reader = tokio::spawn(read_events(
        response,
        tx,
        endpoint_tx,
        base.clone(),
        record.id.clone(),
        events,
        limit,
    ));
    let endpoint = endpoint(endpoint_rx, &base, &name).await?;
    Ok(SseTransport {
        client,
        endpoint: endpoint.as_str().into(),
        headers,
        rx,
        reader,
    })
}

/// The answer to the GET that opens the stream, if it is an event stream.
async fn event_stream(
    client: &reqwest::Client,
    url: &str,
    headers: &HeaderMap,
    name: &str,
) -> Result<reqwest::Response> {
    let response = client
        .get(url)
        .headers(headers.clone())
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| {
            Error::connection(
                name,
                format!(
                    "GET {}: {}",
                    crate::redact::redact_url(url),
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
            name,
            format!("the SSE endpoint answered HTTP {status} without an event stream"),
        ));
    }
    Ok(response)
}

/// Reads the stream until it ends: the first `endpoint` event to `endpoint_tx`, every
/// `message` event to `tx`. An event over the limit ends the session.
async fn read_events(
    response: reqwest::Response,
    tx: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
    endpoint_tx: oneshot::Sender<std::result::Result<reqwest::Url, String>>,
    base: reqwest::Url,
    server_id: String,
    events: EventBus,
    limit: Arc<MessageLimit>,
) {
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
                    Err(e) => report(format!("server sent an event that is not JSON-RPC ({e})")),
                },
                Some(_) => {}
            }
        }
    }
}

/// Where to POST, from the stream's `endpoint` event: only on the stream's own origin.
async fn endpoint(
    endpoint_rx: oneshot::Receiver<std::result::Result<reqwest::Url, String>>,
    base: &reqwest::Url,
    name: &str,
) -> Result<reqwest::Url> {
    let endpoint = match endpoint_rx.await {
        Ok(Ok(url)) => url,
        Ok(Err(e)) => {
            return Err(Error::connection(name, format!("bad endpoint event: {e}")));
        }
        Err(_) => {
            return Err(Error::connection(
                name,
                "the SSE stream ended before its endpoint event",
            ));
        }
    };
    if endpoint.origin() != base.origin() {
        // The spec pins the endpoint to the stream's origin; anything else is a redirect of
        // our messages (and headers) elsewhere.
        return Err(Error::connection(
            name,
            "the endpoint event points to another origin",
        ));
    }
    Ok(endpoint)
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
