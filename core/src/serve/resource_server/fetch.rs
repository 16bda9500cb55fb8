//! Reading the issuer's documents (its metadata and key set): HTTPS, or HTTP to this machine
//! only, no redirects (an issuer names its documents' final URLs), at most 1 MiB each.

use std::time::Duration;

use futures::StreamExt;
use serde::de::DeserializeOwned;

const TIMEOUT: Duration = Duration::from_secs(10);
const MAX_BODY: usize = 1024 * 1024;

/// The HTTP client the issuer's documents are read with.
#[derive(Clone)]
pub(super) struct Fetcher {
    client: reqwest::Client,
}

impl Fetcher {
    pub fn new() -> Result<Fetcher, String> {
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
        Ok(Fetcher { client })
    }

    /// The JSON document at `uri`.
    pub async fn json<T: DeserializeOwned>(&self, uri: &str) -> Result<T, String> {
        check_url(uri)?;
        let response = self
            .client
            .get(uri)
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("{uri}: {e}"))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("{uri} answered {status}"));
        }
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|e| format!("{uri}: {e}"))?;
            if chunk.len() > MAX_BODY - body.len() {
                return Err(format!("{uri} answered more than 1 MiB"));
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|e| format!("{uri} is not the JSON expected: {e}"))
    }
}

/// An issuer's URLs are HTTPS, or HTTP on this machine (a development issuer).
pub(super) fn check_url(uri: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(uri).map_err(|e| format!("{uri:?} is not a URL: {e}"))?;
    let local = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => return Err(format!("{uri} names no host")),
    };
    match url.scheme() {
        "https" => Ok(url),
        "http" if local => Ok(url),
        _ => Err(format!(
            "{uri} is not HTTPS (plain HTTP is accepted only on this machine)"
        )),
    }
}
