//! Scope step-up: a server that answers a request with 403 `insufficient_scope` gets the user
//! authorized again for the union of the granted and the required scopes, and the request is
//! sent once more with the new token (rmcp's `AuthClient` refreshes, but does not step up).

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{AuthClient, AuthorizationCallback, WWWAuthenticateParams};
use rmcp::transport::streamable_http_client::{
    InsufficientScopeError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};

use super::loopback::{AUTHORIZE_TIMEOUT, Loopback, open_browser};
use super::{AuthorizationPrompt, OAuthHandler};

type Inner = AuthClient<reqwest::Client>;
type HttpError = StreamableHttpError<<Inner as StreamableHttpClient>::Error>;

/// An authorized HTTP client that steps up its scopes when the server asks.
#[derive(Clone)]
pub(crate) struct StepUpClient {
    pub inner: Inner,
    pub server_id: String,
    pub server_name: String,
    /// The redirect URI the client was registered with (a new grant must use it).
    pub redirect_uri: String,
    pub handler: Option<OAuthHandler>,
}

fn failed(message: String) -> HttpError {
    StreamableHttpError::Auth(rmcp::transport::auth::AuthError::AuthorizationFailed(
        message,
    ))
}

impl StepUpClient {
    /// Authorizes again for the scopes the server asked for; errors when the user declines or
    /// the attempts are used up (rmcp counts them), so a request is never retried forever.
    async fn step_up(&self, error: &InsufficientScopeError) -> Result<(), HttpError> {
        let manager = self.inner.auth_manager.lock().await;
        let required = match &error.required_scope {
            Some(s) => s.clone(),
            None => {
                let base = reqwest::Url::parse("http://localhost/").expect("a valid URL");
                WWWAuthenticateParams::parse(&error.www_authenticate_header, &base)
                    .scope
                    .unwrap_or_default()
            }
        };
        let url = manager
            .request_scope_upgrade(&required)
            .await
            .map_err(|e| failed(format!("cannot step up to scope '{required}': {e}")))?;
        let prompt = AuthorizationPrompt {
            server_id: self.server_id.clone(),
            server_name: self.server_name.clone(),
            authorization_url: url,
            redirect_uri: self.redirect_uri.clone(),
        };
        let redirected = match &self.handler {
            Some(h) => (h.authorize)(prompt).await,
            None => {
                let lb = Loopback::bind_to(&self.redirect_uri)
                    .await
                    .map_err(|e| failed(format!("cannot listen for the OAuth redirect: {e}")))?;
                if let Err(e) = open_browser(&prompt.authorization_url) {
                    tracing::warn!(server = %self.server_name, "{e}");
                }
                lb.wait(AUTHORIZE_TIMEOUT).await
            }
        }
        .map_err(|m| failed(format!("authorization was not completed: {m}")))?;
        let callback = AuthorizationCallback::from_redirect_url(&redirected)?;
        manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await?;
        Ok(())
    }
}

impl StreamableHttpClient for StepUpClient {
    type Error = <Inner as StreamableHttpClient>::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let first = self
            .inner
            .post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header,
                custom_headers.clone(),
            )
            .await;
        match first {
            Err(StreamableHttpError::InsufficientScope(e)) => {
                self.step_up(&e).await?;
                self.inner
                    .post_message(uri, message, session_id, None, custom_headers)
                    .await
            }
            other => other,
        }
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let first = self
            .inner
            .post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header,
                custom_headers.clone(),
                limits,
            )
            .await;
        match first {
            Err(StreamableHttpError::InsufficientScope(e)) => {
                self.step_up(&e).await?;
                self.inner
                    .post_message_with_response_limits(
                        uri,
                        message,
                        session_id,
                        None,
                        custom_headers,
                        limits,
                    )
                    .await
            }
            other => other,
        }
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let first = self
            .inner
            .post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header,
                custom_headers.clone(),
                max_sse_event_size,
            )
            .await;
        match first {
            Err(StreamableHttpError::InsufficientScope(e)) => {
                self.step_up(&e).await?;
                self.inner
                    .post_message_with_max_sse_event_size(
                        uri,
                        message,
                        session_id,
                        None,
                        custom_headers,
                        max_sse_event_size,
                    )
                    .await
            }
            other => other,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
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
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, SseError>>, HttpError> {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, SseError>>, HttpError> {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}
