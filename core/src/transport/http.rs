//! Streamable HTTP, through rmcp's reqwest-based client.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::{AuthClient, AuthorizationManager};
use rmcp::transport::common::client_side_sse::SseRetryPolicy;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::http_limit::Limited;
use super::limit::MessageLimit;
use crate::config::record::ServerRecord;
use crate::error::{Error, Result};
use crate::http_layer::Layered;

/// Headers that the transport itself manages; a user value would break the session.
const MANAGED_HEADERS: &[&str] = &["accept", "mcp-session-id", "last-event-id", "content-type"];

pub(crate) type HttpTransport = StreamableHttpClientTransport<Layered<Limited<reqwest::Client>>>;

/// Streamable HTTP with OAuth: tokens are added, refreshed once on a rejection, stepped up on a
/// 403 `insufficient_scope`, and obtained anew when the server still rejects them.
pub(crate) type AuthorizedTransport =
    StreamableHttpClientTransport<Layered<Limited<Layered<crate::auth::SessionClient>>>>;

fn config(
    record: &ServerRecord,
    max_message: usize,
) -> Result<StreamableHttpClientTransportConfig> {
    let url = record.config.url.clone().unwrap_or_default();
    let headers = custom_headers(record)?;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url)
        .custom_headers(headers)
        .reinit_on_expired_session(true)
        .max_json_response_size(max_message)
        .max_sse_event_size(max_message);
    config.retry_config = Arc::new(BriefResume);
    Ok(config)
}

/// Builds the transport; nothing goes on the wire until the handshake.
pub(crate) fn open(record: &ServerRecord, limit: &Arc<MessageLimit>) -> Result<HttpTransport> {
    let client = Layered(Limited {
        inner: default_client()?,
        limit: limit.clone(),
    });
    Ok(StreamableHttpClientTransport::with_client(
        client,
        config(record, limit.max())?,
    ))
}

/// Like [`open`], authorized by `manager`; `grantor` says how to authorize again during the
/// session.
pub(crate) fn open_authorized(
    record: &ServerRecord,
    limit: &Arc<MessageLimit>,
    manager: AuthorizationManager,
    grantor: crate::auth::Grantor,
) -> Result<AuthorizedTransport> {
    // Presents the token as Bearer, or with DPoP when it is bound to the server's key.
    let http = crate::auth::TokenClient {
        http: reqwest::Client::new(),
        dpop: grantor.dpop.clone(),
    };
    let client = crate::auth::SessionClient::new(AuthClient::new(Layered(http), manager), grantor);
    let client = Layered(Limited {
        inner: Layered(client),
        limit: limit.clone(),
    });
    Ok(StreamableHttpClientTransport::with_client(
        client,
        config(record, limit.max())?,
    ))
}

/// The client rmcp would build for itself: no idle connection pooling (reusing a connection
/// whose last body was not read to the end stalls ~40 ms on delayed ACKs), and redirects
/// followed only when they keep the method, the body and the origin (307/308, same origin, at
/// most 10), since others would drop the message or replay its headers to another host.
fn default_client() -> Result<reqwest::Client> {
    let redirects = reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            let refused = refused_redirect(attempt.status(), attempt.url(), keeps_body);
            attempt.error(refused)
        } else if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(redirects)
        .build()
        .map_err(|e| Error::invalid(format!("cannot build the HTTP client: {e}")))
}

/// Why a redirect is not followed, naming where the server went so that the user can point
/// the config there if they trust it.
fn refused_redirect(status: reqwest::StatusCode, to: &reqwest::Url, keeps_body: bool) -> String {
    let why = if keeps_body {
        "another origin would be sent this request's headers"
    } else {
        "only 307 and 308 keep the message"
    };
    format!(
        "the server answered {status} to {to}, not followed ({why}); if that is the server, set its url to it"
    )
}

/// Resumes a broken event stream a few times within about a second, then gives up. rmcp's
/// default retries forever, which leaves a call on a dead server waiting for its timeout;
/// the pool's own reconnect with backoff takes over instead.
#[derive(Debug)]
struct BriefResume;

impl SseRetryPolicy for BriefResume {
    fn retry(&self, attempt: usize) -> Option<Duration> {
        (attempt < 3).then(|| Duration::from_millis(100 << attempt))
    }
}

pub(crate) fn custom_headers(
    record: &ServerRecord,
) -> Result<HashMap<http::HeaderName, http::HeaderValue>> {
    let mut out = HashMap::new();
    for (name, value) in &record.config.headers {
        let lower = name.to_ascii_lowercase();
        if MANAGED_HEADERS.contains(&lower.as_str()) {
            return Err(Error::invalid(format!(
                "server '{}': header '{name}' is managed by the transport and cannot be set",
                record.name
            )));
        }
        let n = http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            Error::invalid(format!(
                "server '{}': invalid header name '{name}'",
                record.name
            ))
        })?;
        // The value is a secret more often than not: the error names the header only.
        let v = http::HeaderValue::from_str(value).map_err(|_| {
            Error::invalid(format!(
                "server '{}': header '{name}' has a value that is not valid in HTTP",
                record.name
            ))
        })?;
        out.insert(n, v);
    }
    Ok(out)
}
