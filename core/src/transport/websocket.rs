//! WebSocket: one JSON-RPC message per text frame, subprotocol `mcp`, custom headers, ping
//! keep-alive and a clean close. rmcp has no WebSocket client.

use std::sync::Arc;
use std::time::Duration;

use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt, StreamExt};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::net::TcpStream;
use tokio::sync::Mutex;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Message, http::HeaderValue};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::config::record::ServerRecord;
use crate::error::{Error, Result};
use crate::events::{Event, EventBus};
use crate::transport::http::custom_headers;
use crate::transport::limit::MessageLimit;

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How often an idle socket is pinged, so dead peers and NAT timeouts are noticed.
const PING_EVERY: Duration = Duration::from_secs(20);

/// The rmcp transport over a WebSocket.
pub(crate) struct WsTransport {
    sink: Arc<Mutex<SplitSink<Socket, Message>>>,
    stream: SplitStream<Socket>,
    keepalive: tokio::task::JoinHandle<()>,
    server_id: String,
    events: EventBus,
    limit: Arc<MessageLimit>,
}

impl Drop for WsTransport {
    fn drop(&mut self) {
        self.keepalive.abort();
    }
}

/// Connects and agrees on the `mcp` subprotocol.
pub(crate) async fn open(
    record: &ServerRecord,
    events: EventBus,
    limit: Arc<MessageLimit>,
) -> Result<WsTransport> {
    let name = record.name.as_str();
    let url = record.config.url.clone().unwrap_or_default();
    let mut request = url
        .as_str()
        .into_client_request()
        .map_err(|e| Error::invalid(format!("server '{name}': bad WebSocket URL: {e}")))?;
    for (k, v) in custom_headers(record)? {
        request.headers_mut().insert(k, v);
    }
    request
        .headers_mut()
        .insert("Sec-WebSocket-Protocol", HeaderValue::from_static("mcp"));
    let config = WebSocketConfig::default()
        .max_message_size(Some(limit.max()))
        .max_frame_size(Some(limit.max()));
    let (socket, response) =
        tokio_tungstenite::connect_async_with_config(request, Some(config), false)
            .await
            .map_err(|e| {
                Error::connection(
                    name,
                    format!("WebSocket {}: {e}", crate::redact::redact_url(&url)),
                )
            })?;
    let agreed = response
        .headers()
        .get("Sec-WebSocket-Protocol")
        .and_then(|v| v.to_str().ok());
    if agreed.is_some_and(|p| p != "mcp") {
        return Err(Error::connection(
            name,
            format!("the server chose subprotocol {agreed:?} instead of mcp"),
        ));
    }
    let (sink, stream) = socket.split();
    let sink = Arc::new(Mutex::new(sink));
    let keepalive = {
        let sink = sink.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(PING_EVERY);
            tick.tick().await;
            loop {
                tick.tick().await;
                if sink
                    .lock()
                    .await
                    .send(Message::Ping(Default::default()))
                    .await
                    .is_err()
                {
                    return;
                }
            }
        })
    };
    Ok(WsTransport {
        sink,
        stream,
        keepalive,
        server_id: record.id.clone(),
        events,
        limit,
    })
}

impl WsTransport {
    fn report(&self, message: String) {
        self.events.emit(Event::Log {
            server_id: self.server_id.clone(),
            level: "error".into(),
            source: "transport".into(),
            message,
        });
    }
}

impl Transport<RoleClient> for WsTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = std::result::Result<(), Self::Error>> + Send + 'static {
        let sink = self.sink.clone();
        async move {
            let text = serde_json::to_string(&item).map_err(std::io::Error::other)?;
            sink.lock()
                .await
                .send(Message::text(text))
                .await
                .map_err(std::io::Error::other)
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let frame = match self.stream.next().await? {
                Ok(f) => f,
                Err(e) => {
                    // tungstenite refuses a frame or message over the limit whole.
                    if let WsError::Capacity(c) = &e {
                        let size = match c {
                            CapacityError::MessageTooLong { size, .. } => Some(*size as u64),
                            _ => None,
                        };
                        self.limit.exceeded(size);
                        self.report(format!(
                            "server sent a message larger than {} bytes (the pool option \
                             maxMessageBytes): {e}; closing the connection",
                            self.limit.max()
                        ));
                    } else {
                        self.report(format!("WebSocket error: {e}"));
                    }
                    return None;
                }
            };
            let text = match frame {
                Message::Text(t) => t,
                Message::Binary(b) => match String::from_utf8(b.to_vec()) {
                    Ok(t) => t.into(),
                    Err(_) => {
                        self.report("server sent a binary frame that is not UTF-8".into());
                        continue;
                    }
                },
                Message::Close(_) => return None,
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
            };
            match serde_json::from_str(&text) {
                Ok(msg) => return Some(msg),
                Err(e) => self.report(format!("server sent a frame that is not JSON-RPC ({e})")),
            }
        }
    }

    async fn close(&mut self) -> std::result::Result<(), Self::Error> {
        self.keepalive.abort();
        let mut sink = self.sink.lock().await;
        let _ = sink.send(Message::Close(None)).await;
        let _ = sink.close().await;
        Ok(())
    }
}
