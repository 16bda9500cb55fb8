//! Streamable HTTP's share of the message limit: rmcp's client enforces the sizes itself, and
//! this wrapper around it notes when it refused a message, so the caller cut off learns that
//! the reply was too large (rmcp reports a JSON body as a send error and an event as a
//! stream that closed early) and the connection is opened anew.

use std::sync::Arc;

use futures::StreamExt;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};

use super::limit::MessageLimit;
use super::related_call;
use crate::http_layer::{Answer, Head, HttpLayer, Request, SseStream};

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

    /// `answer`, watched for refused messages, a POST's server requests marked with `call`
    /// (see `related_call`) when the POST was a marked call. (Only a POST's JSON body can be
    /// too large: a stream's events are refused inside it.)
    fn note(
        &self,
        answer: Result<Answer, StreamableHttpError<C::Error>>,
        call: Option<u64>,
    ) -> Result<Answer, StreamableHttpError<C::Error>> {
        match answer {
            Err(e @ StreamableHttpError::ResponseBodyTooLarge { .. }) => {
                self.limit.exceeded(None);
                Err(e)
            }
            Ok(Answer::Posted(StreamableHttpPostResponse::Sse(stream, id))) => {
                let stream = self.watch(stream);
                let stream = match call {
                    Some(call) => related_call::mark(stream, call),
                    None => stream,
                };
                Ok(Answer::Posted(StreamableHttpPostResponse::Sse(stream, id)))
            }
            Ok(Answer::Stream(stream)) => Ok(Answer::Stream(self.watch(stream))),
            other => other,
        }
    }
}

impl<C: StreamableHttpClient + Sync> HttpLayer for Limited<C> {
    type Error = C::Error;

    async fn handle(
        &self,
        head: Head,
        mut request: Request,
    ) -> Result<Answer, StreamableHttpError<C::Error>> {
        let call = match &mut request {
            Request::Post(message, _) => related_call::take(message),
            _ => None,
        };
        let answer = request.send(&self.inner, head).await;
        self.note(answer, call)
    }
}
