//! Wrappers of rmcp's Streamable HTTP client each change a request or its answer in one way
//! (the OAuth token's presentation, authorizing again during a session, the message limit).
//! rmcp's `StreamableHttpClient` has six methods, one per kind of request and limit; this
//! forwards them once, so that a wrapper is one [`HttpLayer::handle`] that says only what it
//! changes, and every method reaches the wrapped client as the one it came through.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

/// The headers rmcp's client adds to a request of its own.
pub(crate) type Headers = HashMap<HeaderName, HeaderValue>;
/// A server's stream of events, as rmcp's client reads it.
pub(crate) type SseStream = BoxStream<'static, Result<sse_stream::Sse, SseError>>;

/// Where a request goes and what it carries beside its body: the parts a wrapper may change.
#[derive(Clone)]
pub(crate) struct Head {
    pub uri: Arc<str>,
    /// The session the request belongs to (always there for a `DELETE`).
    pub session_id: Option<Arc<str>>,
    /// The `Authorization` value rmcp asks for (sent as a Bearer token).
    pub auth_header: Option<String>,
    pub custom_headers: Headers,
}

/// One request of rmcp's client, by the method of `StreamableHttpClient` it came through.
// Moved once through the wrappers and never stored: boxing the large variant would only add
// an allocation to each request.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
pub(crate) enum Request {
    /// A JSON-RPC message, POSTed.
    Post(ClientJsonRpcMessage, PostLimits),
    /// The end of the session.
    Delete(Arc<str>),
    /// The stream a server sends on unasked (or the resumption of one).
    Get {
        last_event_id: Option<String>,
        max_sse_event_size: Option<usize>,
    },
}

/// The limits rmcp passed with a POST: which of its three methods it came through.
#[derive(Clone, Copy)]
pub(crate) enum PostLimits {
    None,
    MaxSseEvent(usize),
    Response(StreamableHttpResponseLimits),
}

/// What a request got back, by its kind.
#[allow(clippy::large_enum_variant)] // as `Request`
pub(crate) enum Answer {
    Posted(StreamableHttpPostResponse),
    Deleted,
    Stream(SseStream),
}

impl Request {
    /// The HTTP method it is sent with.
    pub fn method(&self) -> &'static str {
        match self {
            Request::Post(..) => "POST",
            Request::Delete(_) => "DELETE",
            Request::Get { .. } => "GET",
        }
    }

    /// Sends it with `client`, through the method it came through.
    pub async fn send<C: StreamableHttpClient + Sync>(
        self,
        client: &C,
        head: Head,
    ) -> Result<Answer, StreamableHttpError<C::Error>> {
        let Head {
            uri,
            session_id,
            auth_header,
            custom_headers: headers,
        } = head;
        let answer = match self {
            Request::Post(message, limits) => Answer::Posted(match limits {
                PostLimits::None => {
                    client
                        .post_message(uri, message, session_id, auth_header, headers)
                        .await?
                }
                PostLimits::MaxSseEvent(max) => {
                    client
                        .post_message_with_max_sse_event_size(
                            uri,
                            message,
                            session_id,
                            auth_header,
                            headers,
                            max,
                        )
                        .await?
                }
                PostLimits::Response(limits) => {
                    client
                        .post_message_with_response_limits(
                            uri,
                            message,
                            session_id,
                            auth_header,
                            headers,
                            limits,
                        )
                        .await?
                }
            }),
            Request::Delete(session_id) => {
                client
                    .delete_session(uri, session_id, auth_header, headers)
                    .await?;
                Answer::Deleted
            }
            Request::Get {
                last_event_id,
                max_sse_event_size,
            } => Answer::Stream(match max_sse_event_size {
                None => {
                    client
                        .get_stream(uri, session_id, last_event_id, auth_header, headers)
                        .await?
                }
                Some(max) => {
                    client
                        .get_stream_with_max_sse_event_size(
                            uri,
                            session_id,
                            last_event_id,
                            auth_header,
                            headers,
                            max,
                        )
                        .await?
                }
            }),
        };
        Ok(answer)
    }
}

/// What a wrapper does with each request: it sends it on (with [`Request::send`], to the
/// client it wraps), changing what it is for, and answers with what that gave.
pub(crate) trait HttpLayer: Clone + Send + Sync + 'static {
    /// The wrapped client's error.
    type Error: std::error::Error + Send + Sync + 'static;

    fn handle(
        &self,
        head: Head,
        request: Request,
    ) -> impl Future<Output = Result<Answer, StreamableHttpError<Self::Error>>> + Send;
}

/// A wrapper, as the HTTP client rmcp's transport takes.
#[derive(Clone)]
pub(crate) struct Layered<L>(pub L);

impl<L: HttpLayer> Layered<L> {
    async fn handled(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        request: Request,
    ) -> Result<Answer, StreamableHttpError<L::Error>> {
        let head = Head {
            uri,
            session_id,
            auth_header,
            custom_headers,
        };
        self.0.handle(head, request).await
    }
}

/// A wrapper answered with another kind than it was asked for; none does, as each answers
/// with what [`Request::send`] gave it.
fn mismatched<E: std::error::Error + Send + Sync + 'static>(
    asked: &'static str,
) -> StreamableHttpError<E> {
    StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
        "an HTTP client wrapper answered a {asked} with another kind of answer"
    )))
}

fn posted<E: std::error::Error + Send + Sync + 'static>(
    answer: Result<Answer, StreamableHttpError<E>>,
) -> Result<StreamableHttpPostResponse, StreamableHttpError<E>> {
    match answer? {
        Answer::Posted(response) => Ok(response),
        _ => Err(mismatched("POST")),
    }
}

fn streamed<E: std::error::Error + Send + Sync + 'static>(
    answer: Result<Answer, StreamableHttpError<E>>,
) -> Result<SseStream, StreamableHttpError<E>> {
    match answer? {
        Answer::Stream(stream) => Ok(stream),
        _ => Err(mismatched("GET")),
    }
}

impl<L: HttpLayer> StreamableHttpClient for Layered<L> {
    type Error = L::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<L::Error>> {
        let request = Request::Post(message, PostLimits::None);
        posted(
            self.handled(uri, session_id, auth_header, custom_headers, request)
                .await,
        )
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<L::Error>> {
        let request = Request::Post(message, PostLimits::MaxSseEvent(max_sse_event_size));
        posted(
            self.handled(uri, session_id, auth_header, custom_headers, request)
                .await,
        )
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<L::Error>> {
        let request = Request::Post(message, PostLimits::Response(limits));
        posted(
            self.handled(uri, session_id, auth_header, custom_headers, request)
                .await,
        )
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), StreamableHttpError<L::Error>> {
        let request = Request::Delete(session_id.clone());
        let answer = self
            .handled(uri, Some(session_id), auth_header, custom_headers, request)
            .await?;
        match answer {
            Answer::Deleted => Ok(()),
            _ => Err(mismatched("DELETE")),
        }
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<SseStream, StreamableHttpError<L::Error>> {
        let request = Request::Get {
            last_event_id,
            max_sse_event_size: None,
        };
        streamed(
            self.handled(uri, session_id, auth_header, custom_headers, request)
                .await,
        )
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<SseStream, StreamableHttpError<L::Error>> {
        let request = Request::Get {
            last_event_id,
            max_sse_event_size: Some(max_sse_event_size),
        };
        streamed(
            self.handled(uri, session_id, auth_header, custom_headers, request)
                .await,
        )
    }
}
