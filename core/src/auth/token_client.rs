//! How an OAuth server's MCP requests present the access token rmcp's `AuthClient` hands
//! them: as a Bearer token, or, when the token is DPoP-bound, with the DPoP scheme and a fresh
//! proof naming the request's method and URL and the token's hash (RFC 9449 section 7).
//!
//! A resource server may demand a nonce in the proofs (401 `use_dpop_nonce`, the nonce in its
//! `DPoP-Nonce` header). rmcp's client keeps only the `WWW-Authenticate` of a 401, so the
//! nonce is learnt with a probe: the same URL and headers, carrying a JSON-RPC response to no
//! request (which a server ignores) instead of the refused message, whose 401 answer names the
//! nonce. The refused request is then sent once more with it; the nonce is kept for the next
//! ones. Such a 401 is never a reason to authorize again.

use std::sync::Arc;

use http::{HeaderName, HeaderValue};
use rmcp::transport::auth::AuthError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::dpop::{Dpop, wants_nonce};
use crate::http_layer::{Answer, Head, Headers, HttpLayer, Request};

type HttpError = StreamableHttpError<reqwest::Error>;

/// What the nonce probe carries: a JSON-RPC response to a request that was never made.
const PROBE: &str = r#"{"jsonrpc":"2.0","id":"mcpmux-dpop-nonce","result":{}}"#;

/// The HTTP client under rmcp's `AuthClient` for one server's MCP requests.
#[derive(Clone)]
pub(crate) struct TokenClient {
    pub http: reqwest::Client,
    pub dpop: Arc<Dpop>,
}

fn failed(message: String) -> HttpError {
    StreamableHttpError::Auth(AuthError::InternalError(message))
}

fn header(value: &str) -> Result<HeaderValue, HttpError> {
    HeaderValue::from_str(value).map_err(|_| failed("a DPoP header that HTTP cannot carry".into()))
}

impl TokenClient {
    /// The authorization for one request: the token as it is (rmcp sends it as Bearer), or,
    /// DPoP-bound, none for rmcp and the DPoP headers added to `headers`.
    fn present(
        &self,
        method: &str,
        uri: &str,
        token: Option<&String>,
        headers: &mut Headers,
    ) -> Result<Option<String>, HttpError> {
        let (Some(token), Some(key)) = (token, self.dpop.for_resource()) else {
            return Ok(token.cloned());
        };
        let proof = key
            .proof(method, uri, Some(token), self.dpop.rs_nonce().as_deref())
            .map_err(failed)?;
        headers.insert(
            http::header::AUTHORIZATION,
            header(&format!("DPoP {token}"))?,
        );
        headers.insert(HeaderName::from_static("dpop"), header(&proof)?);
        Ok(None)
    }

    /// Sends with `send` (given the request's head with the authorization for rmcp and the
    /// headers it presents), and once more when the server demanded a DPoP nonce it then
    /// told the probe.
    async fn presented<F, Fut>(
        &self,
        method: &str,
        head: Head,
        send: F,
    ) -> Result<Answer, HttpError>
    where
        F: Fn(Head) -> Fut,
        Fut: Future<Output = Result<Answer, HttpError>>,
    {
        let token = head.auth_header.as_ref();
        match send(self.head_for(method, &head)?).await {
            Err(StreamableHttpError::AuthRequired(challenge))
                if wants_nonce(&challenge.www_authenticate_header)
                    && self.dpop.for_resource().is_some() =>
            {
                let session = head.session_id.as_deref();
                if !self
                    .learn_nonce(&head.uri, session, token, &head.custom_headers)
                    .await
                {
                    return Err(StreamableHttpError::AuthRequired(challenge));
                }
                send(self.head_for(method, &head)?).await
            }
            other => other,
        }
    }

    /// `head` as sent: the token presented by [`TokenClient::present`].
    fn head_for(&self, method: &str, head: &Head) -> Result<Head, HttpError> {
        let mut headers = head.custom_headers.clone();
        let auth = self.present(method, &head.uri, head.auth_header.as_ref(), &mut headers)?;
        Ok(Head {
            auth_header: auth,
            custom_headers: headers,
            ..head.clone()
        })
    }

    /// Asks the server for its nonce with the probe; whether it named one.
    async fn learn_nonce(
        &self,
        uri: &str,
        session_id: Option<&str>,
        token: Option<&String>,
        headers: &Headers,
    ) -> bool {
        let mut probe_headers = headers.clone();
        if self
            .present("POST", uri, token, &mut probe_headers)
            .is_err()
        {
            return false;
        }
        let mut request = self
            .http
            .post(uri)
            .header(http::header::ACCEPT, "application/json, text/event-stream")
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(PROBE);
        for (name, value) in probe_headers {
            request = request.header(name, value);
        }
        if let Some(id) = session_id {
            request = request.header("mcp-session-id", id);
        }
        let Ok(response) = request.send().await else {
            return false;
        };
        let nonce = response
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        match nonce {
            Some(nonce) => {
                self.dpop.set_rs_nonce(nonce);
                true
            }
            None => false,
        }
    }
}

impl HttpLayer for TokenClient {
    type Error = reqwest::Error;

    async fn handle(&self, head: Head, request: Request) -> Result<Answer, HttpError> {
        self.presented(request.method(), head, |head| {
            request.clone().send(&self.http, head)
        })
        .await
    }
}
