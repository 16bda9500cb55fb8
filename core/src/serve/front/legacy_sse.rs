//! The HTTP+SSE transport of protocol 2024-11-05, for clients that predate Streamable HTTP
//! (`mcpmux serve --http ADDR --sse`): `GET /sse` opens an event stream whose first event
//! names the endpoint to post to (`/messages?sessionId=ID`); each message the client posts
//! there is answered `202 Accepted`, and the server's messages (answers, notifications, its
//! own requests) come on the event stream. Each stream is one session of the gateway, served
//! by rmcp over a pair of channels; it ends when the client closes the stream.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::Frame;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleServer, ServiceExt};
use tokio::sync::mpsc;

use crate::serve::Gateway;

/// Where a legacy client opens its event stream.
pub const SSE_PATH: &str = "/sse";
/// Where it posts its messages.
pub const MESSAGES_PATH: &str = "/messages";

/// The largest message a client may post.
const MAX_POST_BYTES: usize = 4 * 1024 * 1024;

/// How many messages wait for a slow reader before the sender waits.
const QUEUE: usize = 64;

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// The open legacy sessions, by id.
#[derive(Default)]
pub(in crate::serve) struct LegacySessions {
    open: Mutex<HashMap<String, Open>>,
}

/// One open session: where its client's messages go, and (behind OAuth) whose token opened
/// it, so that no other user's token posts to it.
struct Open {
    to_server: mpsc::Sender<RxJsonRpcMessage<RoleServer>>,
    owner: Option<String>,
}

impl LegacySessions {
    /// `GET /sse`: a new session of `gateway` for `owner`, as an event stream.
    pub(in crate::serve) fn open(
        self: &Arc<Self>,
        gateway: Gateway,
        owner: Option<String>,
    ) -> hyper::Response<Body> {
        let id = session_id();
        let (to_server, from_client) = mpsc::channel(QUEUE);
        let (to_client, from_server) = mpsc::channel(QUEUE);
        self.open
            .lock()
            .unwrap()
            .insert(id.clone(), Open { to_server, owner });
        let channels = Channels {
            to_client,
            from_client,
        };
        tokio::spawn(async move {
            if let Ok(running) = gateway.serve(channels).await {
                let _ = running.waiting().await;
            }
        });
        let endpoint = format!("event: endpoint\ndata: {MESSAGES_PATH}?sessionId={id}\n\n");
        let held = Held {
            sessions: self.clone(),
            id,
        };
        let events = futures::stream::unfold(
            (Some(endpoint), from_server, held),
            |(first, mut from_server, held)| async move {
                let text = match first {
                    Some(endpoint) => endpoint,
                    None => event(&from_server.recv().await?),
                };
                let frame = Ok::<_, Infallible>(Frame::data(Bytes::from(text)));
                Some((frame, (None, from_server, held)))
            },
        );
        let mut response = hyper::Response::new(StreamBody::new(events).boxed());
        let headers = response.headers_mut();
        headers.insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("text/event-stream"),
        );
        headers.insert(
            hyper::header::CACHE_CONTROL,
            hyper::header::HeaderValue::from_static("no-cache"),
        );
        response
    }

    /// `POST /messages?sessionId=ID`: one message of the session's client, `owner`.
    pub(in crate::serve) async fn post(
        &self,
        request: hyper::Request<hyper::body::Incoming>,
        owner: Option<String>,
    ) -> hyper::Response<Body> {
        let id = request.uri().query().and_then(|q| {
            q.split('&')
                .find_map(|pair| pair.strip_prefix("sessionId="))
                .map(str::to_string)
        });
        let to_server = id.and_then(|id| {
            let open = self.open.lock().unwrap();
            let session = open.get(&id).filter(|s| s.owner == owner)?;
            Some(session.to_server.clone())
        });
        let Some(to_server) = to_server else {
            return text(
                hyper::StatusCode::NOT_FOUND,
                "no such session: open one with GET /sse and post to the endpoint it names\n",
            );
        };
        let body = match Limited::new(request.into_body(), MAX_POST_BYTES)
            .collect()
            .await
        {
            Ok(body) => body.to_bytes(),
            Err(_) => {
                return text(
                    hyper::StatusCode::PAYLOAD_TOO_LARGE,
                    "the message is larger than 4 MiB, or was cut off\n",
                );
            }
        };
        let message: RxJsonRpcMessage<RoleServer> = match serde_json::from_slice(&body) {
            Ok(message) => message,
            Err(e) => {
                return text(
                    hyper::StatusCode::BAD_REQUEST,
                    format!("not a JSON-RPC message of an MCP client: {e}\n"),
                );
            }
        };
        match to_server.send(message).await {
            Ok(()) => text(hyper::StatusCode::ACCEPTED, "Accepted\n"),
            Err(_) => text(
                hyper::StatusCode::NOT_FOUND,
                "the session has ended: open a new one with GET /sse\n",
            ),
        }
    }
}

/// A session's hold on its entry: when the event stream is dropped (the client went away),
/// the entry goes, the server's side of the session reads the end of its input and stops.
struct Held {
    sessions: Arc<LegacySessions>,
    id: String,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.sessions.open.lock().unwrap().remove(&self.id);
    }
}

/// One server message as an SSE event.
fn event(message: &TxJsonRpcMessage<RoleServer>) -> String {
    let data = serde_json::to_string(message).unwrap_or_default();
    format!("event: message\ndata: {data}\n\n")
}

/// 16 random bytes, hex: a session id no one can guess.
fn session_id() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn text(status: hyper::StatusCode, text: impl Into<String>) -> hyper::Response<Body> {
    let mut response = hyper::Response::new(Full::new(Bytes::from(text.into())).boxed());
    *response.status_mut() = status;
    response
}

/// The session as rmcp sees it: messages in from the posts, out to the event stream.
struct Channels {
    to_client: mpsc::Sender<TxJsonRpcMessage<RoleServer>>,
    from_client: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
}

impl Transport<RoleServer> for Channels {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let to_client = self.to_client.clone();
        async move {
            to_client.send(item).await.map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the event stream closed")
            })
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        self.from_client.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.from_client.close();
        Ok(())
    }
}
