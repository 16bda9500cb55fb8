//! The HTTP client of every OAuth request mcpmux makes for a server (discovery, registration,
//! token requests), given to rmcp's authorization manager. Two jobs:
//!
//! - Which addresses it may reach, as rmcp's own client decides (hosts named by discovered
//!   metadata come from the server, so they must not reach into the host's network): any
//!   public address; private addresses when the MCP server is on one or on this machine;
//!   loopback only when the MCP server is on this machine; never link-local (cloud instance
//!   metadata), unspecified, multicast, broadcast or reserved ones. Names are checked as
//!   resolved, so a name cannot be rebound to an internal address; proxies configured in the
//!   environment are not filtered.
//! - DPoP: token requests carry a proof when the server's authorization server asked for
//!   DPoP, and are sent again with the nonce the server demands (`use_dpop_nonce`).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};

use super::dpop::{Dpop, wants_nonce};

/// As rmcp's client: requests take at most this long, answers are at most this large, and
/// redirects are followed this many times.
const TIMEOUT: Duration = Duration::from_secs(30);
const MAX_BODY: usize = 1024 * 1024;
const MAX_REDIRECTS: usize = 10;
/// Names of cloud instance metadata services, refused whatever they resolve to.
const METADATA_HOSTS: &[&str] = &[
    "metadata",
    "metadata.google.internal",
    "metadata.azure.internal",
];
const PROXY_VARS: [&str; 6] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// What kind of address an IP is, for the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Public,
    Loopback,
    Private,
    Blocked,
}

fn class(ip: IpAddr) -> Class {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            if v4.is_loopback() {
                Class::Loopback
            } else if v4.is_private() || (a == 100 && (64..=127).contains(&b)) {
                Class::Private
            } else if v4.is_unspecified()
                || v4.is_link_local()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_documentation()
                || a == 0
                || a >= 240
                || (a == 198 && (18..=19).contains(&b))
                || (a == 192 && b == 0 && v4.octets()[2] == 0)
            {
                Class::Blocked
            } else {
                Class::Public
            }
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            if v6.is_loopback() {
                Class::Loopback
            } else if first & 0xfe00 == 0xfc00 {
                Class::Private
            } else if v6.is_unspecified()
                || v6.is_multicast()
                || first & 0xffc0 == 0xfe80
                || first == 0x2001 && v6.segments()[1] == 0x0db8
            {
                Class::Blocked
            } else {
                Class::Public
            }
        }
    }
}

/// Which addresses requests may reach.
#[derive(Debug, Clone)]
struct Policy {
    loopback: bool,
    private: bool,
    /// Hosts of the proxies in the environment (the proxy resolves the target).
    proxies: Arc<[String]>,
}

impl Policy {
    /// For the MCP server at `server_url`: on this machine (`local`, as the pool tells
    /// it apart), loopback and private addresses; on a private address, private ones.
    fn for_server(server_url: &str, local: bool, proxies: Arc<[String]>) -> Self {
        let on_private = reqwest::Url::parse(server_url)
            .ok()
            .is_some_and(|u| match u.host() {
                Some(url::Host::Ipv4(v4)) => class(IpAddr::V4(v4)) == Class::Private,
                Some(url::Host::Ipv6(v6)) => class(IpAddr::V6(v6)) == Class::Private,
                _ => false,
            });
        Policy {
            loopback: local,
            private: local || on_private,
            proxies,
        }
    }

    fn allows(&self, ip: IpAddr) -> bool {
        match class(ip) {
            Class::Public => true,
            Class::Loopback => self.loopback,
            Class::Private => self.private,
            Class::Blocked => false,
        }
    }

    /// A URL's host, when it is an IP literal (reqwest connects to it without resolving) or a
    /// metadata service's name.
    fn allows_url(&self, url: &reqwest::Url) -> bool {
        match url.host() {
            Some(url::Host::Ipv4(v4)) => self.allows(IpAddr::V4(v4)),
            Some(url::Host::Ipv6(v6)) => self.allows(IpAddr::V6(v6)),
            Some(url::Host::Domain(d)) => {
                !METADATA_HOSTS.contains(&d.trim_end_matches('.').to_ascii_lowercase().as_str())
            }
            None => false,
        }
    }
}

impl Resolve for Policy {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.clone();
        Box::pin(async move {
            let host = name.as_str().trim_end_matches('.').to_ascii_lowercase();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if policy.proxies.contains(&host) {
                return Ok(Box::new(found.into_iter()) as Addrs);
            }
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| policy.allows(a.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(format!(
                    "OAuth request to {host} refused: it resolves only to addresses a remote \
                     server's authorization may not reach"
                )
                .into());
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// The OAuth HTTP client of one server.
pub(crate) struct OAuthHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
    policy: Policy,
    pub dpop: Arc<Dpop>,
}

fn boxed(e: impl std::error::Error + Send + Sync + 'static) -> OAuthHttpClientError {
    Box::new(e)
}

impl OAuthHttp {
    /// For the MCP server at `server_url`, on this machine (`local`) or not.
    pub fn new(server_url: &str, local: bool, dpop: Arc<Dpop>) -> Result<Self, String> {
        let proxies: Vec<String> = PROXY_VARS
            .iter()
            .filter_map(|v| std::env::var(v).ok())
            .filter_map(|p| {
                let p = if p.contains("://") {
                    p
                } else {
                    format!("http://{p}")
                };
                Some(
                    reqwest::Url::parse(&p)
                        .ok()?
                        .host_str()?
                        .to_ascii_lowercase(),
                )
            })
            .collect();
        let policy = Policy::for_server(server_url, local, proxies.into());
        let build = |redirect| {
            reqwest::Client::builder()
                .timeout(TIMEOUT)
                .redirect(redirect)
                .dns_resolver(Arc::new(policy.clone()))
                .build()
                .map_err(|e| format!("cannot build the OAuth HTTP client: {e}"))
        };
        let checked = policy.clone();
        let follow = reqwest::redirect::Policy::custom(move |attempt| {
            if !checked.allows_url(attempt.url()) {
                attempt.error("OAuth redirect to an address that may not be reached")
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error("too many OAuth redirects")
            } else {
                attempt.follow()
            }
        });
        Ok(OAuthHttp {
            follow: build(follow)?,
            stop: build(reqwest::redirect::Policy::none())?,
            policy,
            dpop,
        })
    }

    /// Sends one request and reads its answer (at most [`MAX_BODY`]).
    async fn send(
        &self,
        request: &reqwest::Request,
        redirects: OAuthHttpRedirectPolicy,
        proof: Option<String>,
    ) -> Result<oauth2::HttpResponse, OAuthHttpClientError> {
        let mut request = request
            .try_clone()
            .ok_or("an OAuth request body that cannot be sent twice")?;
        if let Some(proof) = proof {
            let value = http::HeaderValue::from_str(&proof).map_err(boxed)?;
            request.headers_mut().insert("dpop", value);
        }
        let client = match redirects {
            OAuthHttpRedirectPolicy::Stop => &self.stop,
            _ => &self.follow,
        };
        let response = client.execute(request).await.map_err(boxed)?;
        let mut answer = oauth2::http::Response::builder()
            .status(response.status())
            .version(response.version());
        for (name, value) in response.headers() {
            answer = answer.header(name, value);
        }
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(boxed)?;
            if chunk.len() > MAX_BODY - body.len() {
                return Err("an OAuth answer larger than 1 MiB".into());
            }
            body.extend_from_slice(&chunk);
        }
        answer.body(body).map_err(boxed)
    }
}

impl OAuthHttp {
    /// A token request of mcpmux's own (a grant rmcp does not make): a form POST to `url`,
    /// under the same address policy, with HTTP Basic client authentication when given.
    /// Answers the status and the body.
    pub async fn post_form(
        &self,
        url: &str,
        form: &[(&str, String)],
        basic: Option<(&str, &str)>,
    ) -> Result<(http::StatusCode, Vec<u8>), String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
        if !self.policy.allows_url(&parsed) {
            return Err(format!(
                "{url} is an address a remote server's authorization may not reach"
            ));
        }
        let mut request = self
            .stop
            .post(parsed)
            .header(http::header::ACCEPT, "application/json")
            .form(form);
        if let Some((id, secret)) = basic {
            request = request.basic_auth(id, Some(secret));
        }
        let request = request.build().map_err(|e| e.to_string())?;
        let answer = self
            .send(&request, OAuthHttpRedirectPolicy::Stop, None)
            .await
            .map_err(|e| e.to_string())?;
        Ok((answer.status(), answer.into_body()))
    }
}

/// The nonce a token endpoint demands in a 400 `use_dpop_nonce` answer, if it is one.
fn demanded_nonce(answer: &oauth2::HttpResponse) -> Option<String> {
    if answer.status() != http::StatusCode::BAD_REQUEST
        || !wants_nonce(&String::from_utf8_lossy(answer.body()))
    {
        return None;
    }
    answer
        .headers()
        .get("dpop-nonce")?
        .to_str()
        .ok()
        .map(str::to_string)
}

impl OAuthHttpClient for OAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let redirects = request.redirect_policy;
            let request = reqwest::Request::try_from(request.request).map_err(boxed)?;
            if !self.policy.allows_url(request.url()) {
                return Err(format!(
                    "OAuth request to {} refused: an address a remote server's authorization \
                     may not reach",
                    request.url()
                )
                .into());
            }
            let method = request.method().as_str().to_string();
            let url = request.url().to_string();
            let Some(key) = self.dpop.for_token_request(&method, &url) else {
                return self.send(&request, redirects, None).await;
            };
            let proof = |nonce: Option<String>| key.proof(&method, &url, None, nonce.as_deref());
            let answer = self
                .send(&request, redirects, Some(proof(self.dpop.as_nonce())?))
                .await?;
            // The server wants a nonce of its own in the proof: once more, with it.
            match demanded_nonce(&answer) {
                Some(nonce) => {
                    self.dpop.set_as_nonce(nonce.clone());
                    self.send(&request, redirects, Some(proof(Some(nonce))?))
                        .await
                }
                None => Ok(answer),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn addresses_are_classed_as_rmcp_does() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        for (addr, expected) in [
            ("93.184.216.34", Class::Public),
            ("2606:2800:220:1::1", Class::Public),
            ("127.0.0.1", Class::Loopback),
            ("::1", Class::Loopback),
            ("::ffff:127.0.0.1", Class::Loopback),
            ("10.0.0.9", Class::Private),
            ("172.16.1.1", Class::Private),
            ("192.168.1.1", Class::Private),
            ("100.64.0.1", Class::Private),
            ("fd00::1", Class::Private),
            ("169.254.169.254", Class::Blocked),
            ("::ffff:169.254.169.254", Class::Blocked),
            ("fe80::1", Class::Blocked),
            ("0.0.0.0", Class::Blocked),
            ("::", Class::Blocked),
            ("224.0.0.1", Class::Blocked),
            ("255.255.255.255", Class::Blocked),
            ("240.0.0.1", Class::Blocked),
        ] {
            assert_eq!(class(ip(addr)), expected, "{addr}");
        }
        let remote = Policy::for_server("https://mcp.example.com/mcp", false, Arc::new([]));
        let local = Policy::for_server("http://localhost:3000/mcp", true, Arc::new([]));
        let on_private = Policy::for_server("http://10.0.0.5/mcp", false, Arc::new([]));
        assert!(!remote.allows(ip("10.0.0.9")) && local.allows(ip("10.0.0.9")));
        assert!(!remote.allows(ip("127.0.0.1")) && local.allows(ip("127.0.0.1")));
        assert!(on_private.allows(ip("10.0.0.9")) && !on_private.allows(ip("127.0.0.1")));
        assert!(!local.allows(ip("169.254.169.254")));
        let url = |s: &str| reqwest::Url::parse(s).unwrap();
        assert!(!remote.allows_url(&url("http://127.0.0.1:9/token")));
        assert!(!local.allows_url(&url("http://metadata.google.internal/token")));
        assert!(!local.allows_url(&url("http://[fe80::1]/token")));
        assert!(remote.allows_url(&url("https://auth.example.com/token")));
    }

    #[tokio::test]
    async fn a_name_that_resolves_inside_is_refused_for_a_remote_server() {
        let remote = Policy::for_server("https://mcp.example.com/mcp", false, Arc::new([]));
        let refused = remote.resolve(Name::from_str("localhost").unwrap()).await;
        assert!(refused.is_err());
        let local = Policy::for_server("http://127.0.0.1:3000/mcp", true, Arc::new([]));
        let found: Vec<SocketAddr> = local
            .resolve(Name::from_str("localhost").unwrap())
            .await
            .unwrap()
            .collect();
        assert!(found.iter().all(|a| a.ip().is_loopback()) && !found.is_empty());
    }

    #[tokio::test]
    async fn an_answer_over_1_mib_is_refused() {
        use crate::test_site::{Answer, Site};
        let site = Site::start(|asked| match asked.target.as_str() {
            "/huge" => Answer::json(serde_json::json!({"access_token": "x".repeat(1 << 20)})),
            _ => Answer::json(serde_json::json!({"access_token": "t", "token_type": "Bearer"})),
        })
        .await;
        let http = OAuthHttp::new(&site.url("/mcp"), true, Arc::default()).unwrap();
        let form = [("grant_type", "client_credentials".to_string())];
        let e = http
            .post_form(&site.url("/huge"), &form, None)
            .await
            .unwrap_err();
        assert!(e.contains("larger than 1 MiB"), "{e}");
        let (status, body) = http
            .post_form(&site.url("/token"), &form, None)
            .await
            .unwrap();
        assert_eq!(status, 200);
        assert!(String::from_utf8_lossy(&body).contains("\"t\""));
        let asked = site.asked("/token");
        assert_eq!(asked[0].method, "POST");
        assert_eq!(asked[0].body, b"grant_type=client_credentials");
    }
}
