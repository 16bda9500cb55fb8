//! Streamable HTTP's share of the message limit: rmcp's client enforces the sizes itself, and
//! this wrapper around it notes when it refused a message, so the caller cut off learns that
//! the reply was too large (rmcp reports a JSON body as a send error and an event as a
//! stream that closed early) and the connection is opened anew.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::limit::MessageLimit;
use super::related_call;

type SseStream = BoxStream<'static, Result<sse_stream::Sse, SseError>>;

/// An HTTP client for rmcp's transport that notes refused messages in `limit`.
#[derive(Clone)]
pub(crate) struct Limited<C> {
    pub inner: C,
    pub limit: Arc<MessageLimit>,
}

/// rmcp's error for an oversized event is private to it: its message is what tells.
fn is_event_too_large(e: &SseError) -> bool {
    matches!(e, SseError::Body(inner) if inner.to_string().contains("exceeded the maximum size"))
}

impl<C: StreamableHttpClient> Limited<C> {
    fn watch(&self, stream: SseStream) -> SseStream {
        let limit = self.limit.clone();
        stream
            .inspect(move |item| {
                if let Err(e) = item
                    && is_event_too_large(e)
                {
                    limit.exceeded(None);
                }
            })
            .boxed()
    }

    /// `response`, watched for refused messages, its server requests marked with `call` (see
    /// `related_call`) when the POST was a marked call.
    fn note(
        &self,
        response: Result<StreamableHttpPostResponse, StreamableHttpError<C::Error>>,
        call: Option<u64>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<C::Error>> {
        match response {
            Err(e @ StreamableHttpError::ResponseBodyTooLarge { .. }) => {
                self.limit.exceeded(None);
                Err(e)
            }
            Ok(StreamableHttpPostResponse::Sse(stream, id)) => {
                let stream = self.watch(stream);
                let stream = match call {
                    Some(call) => related_call::mark(stream, call),
                    None => stream,
                };
                Ok(StreamableHttpPostResponse::Sse(stream, id))
            }
            other => other,
        }
    }
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for Limited<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        mut message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let call = related_call::take(&mut message);
        let response = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.note(response, call)
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        mut message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let call = related_call::take(&mut message);
        let response = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.note(response, call)
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        mut message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let call = related_call::take(&mut message);
        let response = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        self.note(response, call)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await?;
        Ok(self.watch(stream))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.watch(stream))
    }
}
