//! Streamable HTTP, through rmcp's reqwest-based client.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::auth::{AuthClient, AuthorizationManager};
use rmcp::transport::common::client_side_sse::SseRetryPolicy;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use crate::error::{Error, Result};
use crate::record::ServerRecord;

/// Headers that the transport itself manages; a user value would break the session.
const MANAGED_HEADERS: &[&str] = &["accept", "mcp-session-id", "last-event-id", "content-type"];

pub(crate) type HttpTransport = StreamableHttpClientTransport<reqwest::Client>;

/// Streamable HTTP with OAuth: tokens are added, refreshed once on a rejection, and a 401
/// surfaces as an authorization-required error.
pub(crate) type AuthorizedTransport = StreamableHttpClientTransport<crate::auth::StepUpClient>;

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
pub(crate) fn open(record: &ServerRecord, max_message: usize) -> Result<HttpTransport> {
    Ok(StreamableHttpClientTransport::from_config(config(
        record,
        max_message,
    )?))
}

/// Like [`open`], authorized by `manager`; `redirect_uri` is where the client's grants come
/// back, for a scope step-up.
pub(crate) fn open_authorized(
    record: &ServerRecord,
    max_message: usize,
    manager: AuthorizationManager,
    redirect_uri: String,
    handler: Option<crate::auth::OAuthHandler>,
) -> Result<AuthorizedTransport> {
    let client = crate::auth::StepUpClient {
        inner: AuthClient::new(reqwest::Client::new(), manager),
        server_id: record.id.clone(),
        server_name: record.name.clone(),
        redirect_uri,
        handler,
    };
    Ok(StreamableHttpClientTransport::with_client(
        client,
        config(record, max_message)?,
    ))
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
