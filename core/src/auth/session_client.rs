//! Authorization during a session, beyond rmcp's `AuthClient` (which adds the token and
//! refreshes it once when the server rejects it):
//! - scope step-up: a request answered with 403 `insufficient_scope` gets the user authorized
//!   again for the union of the granted and the required scopes;
//! - a token the server still rejects (401: revoked, or the server moved to another
//!   authorization server) gets the whole authorization again, as when connecting: discovery
//!   (so a new authorization server is found and registered with anew; the old client's
//!   credentials never go to it), then the grant.
//!
//! Either way the request is sent once more with the new token, and only once.

use std::sync::Arc;

use rmcp::transport::auth::{AuthClient, AuthorizationCallback, WWWAuthenticateParams};
use rmcp::transport::streamable_http_client::{
    InsufficientScopeError, StreamableHttpClient, StreamableHttpError,
};

use super::loopback::{AUTHORIZE_TIMEOUT, Loopback, open_browser};
use super::{AuthorizationPrompt, IdTokenFn, OAuthHandler, TokenStore};
use crate::config::record::ServerRecord;
use crate::http_layer::{Answer, Head, HttpLayer, Layered, Request};

type Inner = AuthClient<Layered<super::token_client::TokenClient>>;
type HttpError = StreamableHttpError<<Inner as StreamableHttpClient>::Error>;

/// What authorizing the server again takes: what the connection was authorized with.
pub(crate) struct Grantor {
    pub record: ServerRecord,
    pub store: Arc<dyn TokenStore>,
    pub handler: Option<OAuthHandler>,
    pub id_tokens: Option<IdTokenFn>,
    /// The redirect URI the client was registered with (a step-up must use it).
    pub redirect_uri: String,
    /// The server's DPoP state, which its MCP requests use too.
    pub dpop: Arc<super::Dpop>,
}

/// An authorized HTTP client that steps up its scopes when the server asks, and authorizes
/// again when the server rejects its token.
#[derive(Clone)]
pub(crate) struct SessionClient {
    pub inner: Inner,
    pub grantor: Arc<Grantor>,
    /// How many times the session authorized again: a request that was rejected authorizes
    /// only if no other did since it was sent (concurrent rejections share one prompt).
    authorizations: Arc<tokio::sync::Mutex<u64>>,
}

fn failed(message: String) -> HttpError {
    StreamableHttpError::Auth(rmcp::transport::auth::AuthError::AuthorizationFailed(
        message,
    ))
}

impl SessionClient {
    pub fn new(inner: Inner, grantor: Grantor) -> Self {
        SessionClient {
            inner,
            grantor: Arc::new(grantor),
            authorizations: Arc::default(),
        }
    }

    /// Sends a message with `send` (given the caller's authorization header first, then none:
    /// rmcp's client adds the current token), and once more after a step-up or a new
    /// authorization when the server asks for one.
    async fn authorized<F, Fut>(
        &self,
        auth_header: Option<String>,
        send: F,
    ) -> Result<Answer, HttpError>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<Answer, HttpError>>,
    {
        let seen = self.authorizations().await;
        match send(auth_header).await {
            Err(StreamableHttpError::InsufficientScope(e)) => {
                self.step_up(&e).await?;
                send(None).await
            }
            Err(StreamableHttpError::AuthRequired(e)) => {
                self.authorize_again(seen, &e.www_authenticate_header)
                    .await?;
                send(None).await
            }
            other => other,
        }
    }

    /// The count of authorizations, read before a request is sent.
    async fn authorizations(&self) -> u64 {
        *self.authorizations.lock().await
    }

    /// Authorizes again after the server rejected a token rmcp could not refresh
    /// (`challenge` is its `WWW-Authenticate`), unless another request did since `seen`.
    async fn authorize_again(&self, seen: u64, challenge: &str) -> Result<(), HttpError> {
        let mut count = self.authorizations.lock().await;
        if *count != seen {
            return Ok(());
        }
        let g = &self.grantor;
        let (manager, _) = super::flow::authorize(
            &g.record,
            Some(challenge.to_string()),
            g.store.clone(),
            g.handler.clone(),
            g.id_tokens.clone(),
            &g.dpop,
        )
        .await
        .map_err(|e| failed(format!("the server rejected the token, and {e}")))?;
        *self.inner.auth_manager.lock().await = manager;
        *count += 1;
        Ok(())
    }

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
        let g = &self.grantor;
        let prompt = AuthorizationPrompt {
            server_id: g.record.id.clone(),
            server_name: g.record.name.clone(),
            authorization_url: url,
            redirect_uri: g.redirect_uri.clone(),
        };
        let redirected = match &g.handler {
            Some(h) => (h.authorize)(prompt).await,
            None => {
                let lb = Loopback::bind_to(&g.redirect_uri)
                    .await
                    .map_err(|e| failed(format!("cannot listen for the OAuth redirect: {e}")))?;
                if let Err(e) = open_browser(&prompt.authorization_url) {
                    tracing::warn!(server = %g.record.name, "{e}");
                }
                lb.wait(AUTHORIZE_TIMEOUT, &prompt.authorization_url).await
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

impl HttpLayer for SessionClient {
    type Error = <Inner as StreamableHttpClient>::Error;

    async fn handle(&self, head: Head, request: Request) -> Result<Answer, HttpError> {
        if !matches!(request, Request::Post(..)) {
            return request.send(&self.inner, head).await;
        }
        self.authorized(head.auth_header.clone(), |auth_header| {
            let head = Head {
                auth_header,
                ..head.clone()
            };
            request.clone().send(&self.inner, head)
        })
        .await
    }
}
