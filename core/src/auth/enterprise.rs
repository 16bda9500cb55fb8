//! The enterprise-managed grant (cross-app access, SEP-990): the user's ID token is exchanged
//! at the enterprise identity provider for an identity assertion grant (ID-JAG, RFC 8693 token
//! exchange), which the MCP server's authorization server takes for an access token (RFC 7523
//! JWT bearer grant). rmcp's `enterprise` module makes both requests and checks the
//! assertion's bindings (issuer, audience, client, resource, scopes); this module finds the
//! servers, gets the ID token, and stores the access token where rmcp's `AuthClient` reads it.
//! There is no refresh token: an expired access token is obtained again the same way.

use std::sync::Arc;
use std::time::Duration;

use oauth2::ClientSecret;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaError, EmaExchangeRequest, EmaExchangeStage,
};
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, default_oauth_http_client,
};
use serde::Deserialize;
use serde_json::Value;

use super::flow::invalid_oauth as invalid;
use super::flow::{GrantedToken, auth_error, discover, grant_failed, manager};
use super::{IdTokenFn, IdTokenRequest, IdpSettings, OAuthSettings, TokenStore};
use crate::config::record::ServerRecord;
use crate::error::{Error, Result};

fn failed(record: &ServerRecord, message: impl std::fmt::Display) -> Error {
    grant_failed(record, "enterprise", message)
}

/// Gets an access token with the enterprise grant and answers a manager that uses it.
pub(super) async fn authorize(
    record: &ServerRecord,
    settings: &OAuthSettings,
    store: Arc<dyn TokenStore>,
    challenge: Option<String>,
    id_tokens: Option<IdTokenFn>,
    dpop: &Arc<super::dpop::Dpop>,
) -> Result<AuthorizationManager> {
    settings.validate().map_err(|m| invalid(record, m))?;
    let (Some(idp), Some(client_id)) = (&settings.idp, &settings.client_id) else {
        unreachable!("validate() checks the enterprise grant's idp and clientId");
    };
    // The server's authorization server, found as for the other grants.
    let mut discovery = manager(record, store.clone(), dpop).await?;
    let metadata = discover(&mut discovery, record, challenge.as_deref()).await?;
    drop(discovery);
    let Some(issuer) = metadata.issuer.clone() else {
        return Err(failed(
            record,
            "the server's authorization server names no issuer (the audience of the grant)",
        ));
    };
    let resource_as =
        EmaAuthorizationServer::new(issuer.clone(), &metadata.token_endpoint, client_id)
            .with_client_authentication(server_authentication(
                settings.client_secret.as_deref(),
                &metadata,
            ));
    let idp_server = EmaAuthorizationServer::new(
        &idp.issuer,
        idp_token_endpoint(record, idp).await?,
        &idp.client_id,
    )
    .with_client_authentication(idp_authentication(idp));
    let resource = record.config.url.clone().unwrap_or_default();
    let http = default_oauth_http_client().map_err(|e| auth_error(record, "setup", e))?;

    // A token from the host that the identity provider refuses (expired, or it wants a new
    // sign-in) is asked for once more, as a fresh one.
    let mut rejected = false;
    let token = loop {
        let (id_token, from_host) = id_token(record, idp, id_tokens.as_ref(), rejected).await?;
        let result = EmaExchangeRequest::new_with_id_token(
            idp_server.clone(),
            resource_as.clone(),
            &resource,
            &id_token,
        )
        .with_scopes(settings.scopes.iter().cloned())
        .exchange(&http, &http)
        .await;
        match result {
            Err(
                EmaError::InvalidGrant(EmaExchangeStage::IdentityProvider)
                | EmaError::InsufficientUserAuthentication(EmaExchangeStage::IdentityProvider),
            ) if from_host && !rejected => rejected = true,
            Err(e @ EmaError::InvalidGrant(EmaExchangeStage::IdentityProvider)) => {
                return Err(failed(
                    record,
                    format!("{e} (the identity provider refused the ID token: expired?)"),
                ));
            }
            Err(e) => return Err(failed(record, e)),
            Ok(token) => break token,
        }
    };

    let mut scopes: Vec<String> = token.scopes.iter().cloned().collect();
    scopes.sort();
    let granted = GrantedToken {
        client_id: client_id.clone(),
        issuer,
        access_token: token.access_token.secret().to_string(),
        token_type: "Bearer".into(),
        expires_in: token.expires_in,
        scopes,
    };
    granted
        .into_manager(record, store, metadata, dpop)
        .await
        .map_err(|e| failed(record, e))
}

/// The ID token: from the config, else from the host. Answers whether the host gave it.
async fn id_token(
    record: &ServerRecord,
    idp: &IdpSettings,
    provider: Option<&IdTokenFn>,
    rejected: bool,
) -> Result<(String, bool)> {
    if let Some(token) = &idp.id_token {
        return Ok((token.clone(), false));
    }
    let Some(provider) = provider else {
        return Err(invalid(
            record,
            "the enterprise_managed grant needs an ID token: set `idp.idToken`, or give the \
             pool an ID-token provider (Pool::set_id_token_provider)",
        ));
    };
    let token = provider(IdTokenRequest {
        server_id: record.id.clone(),
        server_name: record.name.clone(),
        idp_issuer: idp.issuer.clone(),
        idp_client_id: idp.client_id.clone(),
        rejected,
    })
    .await
    .map_err(|m| failed(record, format!("no ID token from the host: {m}")))?;
    if token.trim().is_empty() {
        return Err(failed(record, "the host answered an empty ID token"));
    }
    Ok((token, true))
}

/// The client's authentication at the server's authorization server: with a secret, HTTP
/// Basic unless the server lists only `client_secret_post`; without one, a public client.
fn server_authentication(
    secret: Option<&str>,
    metadata: &AuthorizationMetadata,
) -> EmaClientAuthentication {
    let Some(secret) = secret else {
        return EmaClientAuthentication::None;
    };
    let secret = ClientSecret::new(secret.to_string());
    let methods = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(Value::as_array);
    let lists = |m: &str| methods.is_some_and(|all| all.iter().any(|v| v == m));
    if lists("client_secret_post") && !lists("client_secret_basic") {
        EmaClientAuthentication::ClientSecretPost(secret)
    } else {
        EmaClientAuthentication::ClientSecretBasic(secret)
    }
}

fn idp_authentication(idp: &IdpSettings) -> EmaClientAuthentication {
    let secret = || ClientSecret::new(idp.client_secret.clone().unwrap_or_default());
    match (
        idp.token_endpoint_auth_method.as_deref(),
        &idp.client_secret,
    ) {
        (Some("none"), _) | (_, None) => EmaClientAuthentication::None,
        (Some("client_secret_post"), Some(_)) => {
            EmaClientAuthentication::ClientSecretPost(secret())
        }
        (_, Some(_)) => EmaClientAuthentication::ClientSecretBasic(secret()),
    }
}

/// The identity provider's token endpoint: configured, else from its metadata (OpenID
/// Connect discovery, then RFC 8414), whose issuer must be the configured one exactly.
async fn idp_token_endpoint(record: &ServerRecord, idp: &IdpSettings) -> Result<String> {
    if let Some(endpoint) = &idp.token_endpoint {
        return Ok(endpoint.clone());
    }
    #[derive(Deserialize)]
    struct Metadata {
        issuer: Option<String>,
        token_endpoint: Option<String>,
    }
    let issuer = reqwest::Url::parse(&idp.issuer).map_err(|e| invalid(record, e))?;
    let candidates = [
        format!(
            "{}/.well-known/openid-configuration",
            idp.issuer.trim_end_matches('/')
        ),
        // RFC 8414 puts the well-known segment between the host and the issuer's path.
        format!(
            "{}/.well-known/oauth-authorization-server{}",
            issuer.origin().ascii_serialization(),
            issuer.path().trim_end_matches('/')
        ),
    ];
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| failed(record, e))?;
    for url in candidates {
        let Ok(response) = client
            .get(&url)
            .header("accept", "application/json")
            .send()
            .await
        else {
            continue;
        };
        if !response.status().is_success() {
            continue;
        }
        let Ok(metadata) = response.json::<Metadata>().await else {
            continue;
        };
        if metadata.issuer.as_deref() != Some(idp.issuer.as_str()) {
            return Err(failed(
                record,
                format!(
                    "the identity provider's metadata at {url} names another issuer ({})",
                    metadata.issuer.as_deref().unwrap_or("none")
                ),
            ));
        }
        return metadata.token_endpoint.ok_or_else(|| {
            failed(
                record,
                format!("the identity provider's metadata at {url} has no token_endpoint"),
            )
        });
    }
    Err(failed(
        record,
        format!(
            "cannot read the metadata of identity provider {}: set `idp.tokenEndpoint`",
            idp.issuer
        ),
    ))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    /// No DPoP key: the tokens are Bearer tokens.
    fn no_dpop() -> Arc<crate::auth::dpop::Dpop> {
        Default::default()
    }

    /// Authorizes with `provider` giving the ID tokens.
    async fn with_id_tokens(
        record: &ServerRecord,
        settings: &OAuthSettings,
        store: &Arc<MemoryTokenStore>,
        provider: IdTokenFn,
    ) -> Result<AuthorizationManager> {
        authorize(
            record,
            settings,
            store.clone(),
            None,
            Some(provider),
            &no_dpop(),
        )
        .await
    }

    use base64::Engine;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::auth::MemoryTokenStore;
    use serde_json::json;
    use std::time::{SystemTime, UNIX_EPOCH};

    /// One request the fake servers got: method, path, `Authorization`, form body.
    #[derive(Debug, Clone)]
    struct Seen {
        method: String,
        path: String,
        authorization: String,
        form: Vec<(String, String)>,
    }

    impl Seen {
        fn param(&self, name: &str) -> Option<&str> {
            self.form
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        }
    }

    fn b64(v: &Value) -> String {
        URL_SAFE_NO_PAD.encode(v.to_string())
    }

    /// An MCP server's metadata, its authorization server (`/as`) and an enterprise identity
    /// provider (`/idp`) on one loopback port. The identity provider takes the ID token
    /// "fresh" and refuses any other with `invalid_grant`.
    async fn fake_servers() -> (String, Arc<Mutex<Vec<Seen>>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (b, log) = (base.clone(), seen.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                let (base, log) = (b.clone(), log.clone());
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    let head_end = loop {
                        let n = socket.read(&mut chunk).await.unwrap_or(0);
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            break i + 4;
                        }
                    };
                    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                    let header = |name: &str| {
                        head.lines()
                            .find_map(|l| {
                                let (k, v) = l.split_once(':')?;
                                k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
                            })
                            .unwrap_or_default()
                    };
                    let length: usize = header("content-length").parse().unwrap_or(0);
                    while buf.len() < head_end + length {
                        let n = socket.read(&mut chunk).await.unwrap_or(0);
                        if n == 0 {
                            break;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                    }
                    let body = String::from_utf8_lossy(&buf[head_end..]).to_string();
                    let mut first = head.split_whitespace();
                    let method = first.next().unwrap_or_default().to_string();
                    let path = first.next().unwrap_or_default().to_string();
                    let form: Vec<(String, String)> =
                        reqwest::Url::parse(&format!("http://x/?{body}"))
                            .unwrap()
                            .query_pairs()
                            .map(|(k, v)| (k.into_owned(), v.into_owned()))
                            .collect();
                    let seen = Seen {
                        method,
                        path: path.clone(),
                        authorization: header("authorization"),
                        form,
                    };
                    log.lock().unwrap().push(seen.clone());
                    let (status, reply) = respond(&base, &seen);
                    let text = reply.to_string();
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n\
                         content-length: {}\r\nconnection: close\r\n\r\n{text}",
                        text.len()
                    );
                    let _ = socket.write_all(response.as_bytes()).await;
                });
            }
        });
        (base, seen)
    }

    fn respond(base: &str, req: &Seen) -> (u16, Value) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        match (req.method.as_str(), req.path.as_str()) {
            ("GET", p) if p.starts_with("/.well-known/oauth-protected-resource") => (
                200,
                json!({"resource": format!("{base}/mcp"), "authorization_servers": [format!("{base}/as")]}),
            ),
            ("GET", "/.well-known/oauth-authorization-server/as") => (
                200,
                json!({
                    "issuer": format!("{base}/as"),
                    "authorization_endpoint": format!("{base}/as/authorize"),
                    "token_endpoint": format!("{base}/as/token"),
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["urn:ietf:params:oauth:grant-type:jwt-bearer"],
                    "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                }),
            ),
            ("GET", "/idp/.well-known/openid-configuration") => (
                200,
                json!({"issuer": format!("{base}/idp"), "token_endpoint": format!("{base}/idp/token")}),
            ),
            ("POST", "/idp/token") if req.param("subject_token") == Some("fresh") => {
                let jag = [
                    b64(&json!({"alg": "ES256", "typ": "oauth-id-jag+jwt"})),
                    b64(&json!({
                        "iss": format!("{base}/idp"), "sub": "user", "aud": format!("{base}/as"),
                        "client_id": "mcp-client", "jti": "1", "iat": now, "exp": now + 300,
                        "resource": format!("{base}/mcp"), "scope": "files.read",
                    })),
                    URL_SAFE_NO_PAD.encode("signature"),
                ]
                .join(".");
                (
                    200,
                    json!({"access_token": jag, "token_type": "N_A", "scope": "files.read",
                           "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag"}),
                )
            }
            ("POST", "/idp/token") => (400, json!({"error": "invalid_grant"})),
            ("POST", "/as/token") => (
                200,
                json!({"access_token": "mcp-access-token", "token_type": "Bearer",
                       "expires_in": 3600, "scope": "files.read"}),
            ),
            _ => (404, json!({"error": "not_found"})),
        }
    }

    fn record(base: &str, id_token: Option<&str>) -> ServerRecord {
        let input: crate::config::record::ServerInput = serde_json::from_value(json!({
            "name": "files",
            "config": {
                "url": format!("{base}/mcp"),
                "oauth": {
                    "grant": "enterprise_managed",
                    "clientId": "mcp-client",
                    "clientSecret": "mcp-secret",
                    "scopes": ["files.read"],
                    "idp": {"issuer": format!("{base}/idp"), "clientId": "idp-client", "idToken": id_token},
                },
            },
        }))
        .unwrap();
        input.into_record().unwrap()
    }

    #[tokio::test]
    async fn an_id_token_from_the_host_becomes_a_stored_access_token() {
        let (base, seen) = fake_servers().await;
        let record = record(&base, None);
        let store = Arc::new(MemoryTokenStore::default());
        // The host's sign-on: a cached token first, a new one once it is refused.
        let asked = Arc::new(Mutex::new(Vec::new()));
        let log = asked.clone();
        let provider: IdTokenFn = Arc::new(move |req: IdTokenRequest| {
            log.lock()
                .unwrap()
                .push(serde_json::to_value(&req).unwrap());
            let token = if req.rejected { "fresh" } else { "stale" };
            Box::pin(async move { Ok(token.to_string()) })
        });
        let settings = record.config.oauth.clone().unwrap();
        let manager = with_id_tokens(&record, &settings, &store, provider)
            .await
            .unwrap();
        assert_eq!(
            manager.get_access_token().await.unwrap(),
            "mcp-access-token"
        );

        let asked = asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 2);
        assert_eq!(
            asked[0],
            json!({"serverId": record.id, "serverName": "files", "idpIssuer": format!("{base}/idp"),
                   "idpClientId": "idp-client", "rejected": false})
        );
        assert_eq!(asked[1]["rejected"], true);

        let stored = store.load(&record.id).await.unwrap().unwrap();
        assert_eq!(stored["client_id"], "mcp-client");
        assert_eq!(stored["issuer"], format!("{base}/as"));
        assert_eq!(stored["token_response"]["access_token"], "mcp-access-token");
        assert_eq!(stored["granted_scopes"], json!(["files.read"]));

        let seen = seen.lock().unwrap().clone();
        // The identity provider's token endpoint came from its OpenID Connect metadata.
        assert!(
            seen.iter()
                .any(|s| s.path == "/idp/.well-known/openid-configuration")
        );
        let exchanges: Vec<_> = seen.iter().filter(|s| s.path == "/idp/token").collect();
        assert_eq!(exchanges.len(), 2);
        let exchange = exchanges[1];
        for (k, v) in [
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange",
            ),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:id_token",
            ),
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:id-jag",
            ),
            ("subject_token", "fresh"),
            ("audience", &format!("{base}/as")),
            ("resource", &format!("{base}/mcp")),
            ("scope", "files.read"),
            ("client_id", "idp-client"),
        ] {
            assert_eq!(exchange.param(k), Some(v), "{k}");
        }
        let redeem = seen.iter().find(|s| s.path == "/as/token").unwrap();
        assert_eq!(
            redeem.param("grant_type"),
            Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
        );
        assert!(redeem.param("assertion").is_some());
        assert_eq!(
            redeem.authorization,
            format!("Basic {}", STANDARD.encode("mcp-client:mcp-secret"))
        );
    }

    #[tokio::test]
    async fn a_refused_id_token_from_the_config_is_an_error_without_the_token() {
        let (base, seen) = fake_servers().await;
        let record = record(&base, Some("expired-id-token"));
        let settings = record.config.oauth.clone().unwrap();
        let asked = Arc::new(Mutex::new(0));
        let count = asked.clone();
        let provider: IdTokenFn = Arc::new(move |_| {
            *count.lock().unwrap() += 1;
            Box::pin(async { Ok("fresh".to_string()) })
        });
        let store = Arc::new(MemoryTokenStore::default());
        let Err(e) = with_id_tokens(&record, &settings, &store, provider).await else {
            panic!("a refused ID token authorized");
        };
        let e = e.to_string();
        assert!(e.contains("refused the ID token"), "{e}");
        assert!(!e.contains("expired-id-token"), "{e}");
        // The config's token is used as given: the host is not asked, nothing is stored.
        assert_eq!(*asked.lock().unwrap(), 0);
        assert_eq!(store.load(&record.id).await.unwrap(), None);
        assert_eq!(
            seen.lock()
                .unwrap()
                .iter()
                .filter(|s| s.path == "/idp/token")
                .count(),
            1
        );
    }

    #[tokio::test]
    async fn without_an_id_token_the_error_says_where_to_give_one() {
        let (base, _) = fake_servers().await;
        let record = record(&base, None);
        let settings = record.config.oauth.clone().unwrap();
        let store = Arc::new(MemoryTokenStore::default());
        let Err(e) = authorize(&record, &settings, store, None, None, &no_dpop()).await else {
            panic!("authorized without an ID token");
        };
        assert_eq!(e.kind(), crate::error::ErrorKind::InvalidConfig);
        assert!(e.to_string().contains("set `idp.idToken`"), "{e}");
    }
}
