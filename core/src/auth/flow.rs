//! Getting an authorized rmcp `AuthorizationManager` for a server: from stored credentials,
//! with client credentials, or by taking a user through the authorization code flow.

use std::sync::Arc;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, JwtSigningAlgorithm,
};

use super::dpop::{Dpop, DpopKey};
use super::loopback::{AUTHORIZE_TIMEOUT, Loopback, open_browser};
use super::oauth_http::OAuthHttp;
use super::store::ServerCredentials;
use super::{AuthorizationPrompt, Grant, IdTokenFn, OAuthHandler, OAuthSettings, TokenStore};
use crate::config::record::ServerRecord;
use crate::error::{Error, Result};

/// The name this client registers under.
const CLIENT_NAME: &str = "mcpmux";

pub(super) fn auth_error(record: &ServerRecord, what: &str, e: AuthError) -> Error {
    Error::Connection {
        server: record.name.clone(),
        message: format!("OAuth {what} failed: {e}"),
    }
}

/// OAuth settings of `record` that cannot work: the error names the server and the key.
pub(super) fn invalid_oauth(record: &ServerRecord, message: impl std::fmt::Display) -> Error {
    Error::InvalidConfig {
        path: Default::default(),
        message: format!("server '{}': config.oauth: {message}", record.name),
    }
}

/// A grant that failed for `record`; `grant` names it ("enterprise", "workload identity").
pub(super) fn grant_failed(
    record: &ServerRecord,
    grant: &str,
    message: impl std::fmt::Display,
) -> Error {
    Error::connection(
        &record.name,
        format!("{grant} authorization failed: {message}"),
    )
}

pub(super) fn is_local(url: &str) -> bool {
    let host = url
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split(['/', '?']).next())
        .unwrap_or_default();
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let name = if host.starts_with('[') {
        host.split(']')
            .next()
            .unwrap_or_default()
            .trim_start_matches('[')
    } else {
        host.split(':').next().unwrap_or_default()
    };
    name == "localhost"
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// A manager for the server's URL with its slot of the token store, whose OAuth requests go
/// through mcpmux's client ([`OAuthHttp`]: which addresses they may reach, DPoP proofs on
/// token requests) with the server's DPoP state (`dpop`, its key read from the store).
pub(super) async fn manager(
    record: &ServerRecord,
    store: Arc<dyn TokenStore>,
    dpop: &Arc<Dpop>,
) -> Result<AuthorizationManager> {
    let url = record.config.url.clone().unwrap_or_default();
    let credentials = ServerCredentials {
        store,
        server_id: record.id.clone(),
        dpop: dpop.clone(),
    };
    credentials
        .load_dpop_key()
        .await
        .map_err(|e| auth_error(record, "setup", e))?;
    let http = OAuthHttp::new(&url, is_local(&url), dpop.clone())
        .map_err(|e| Error::connection(&record.name, e))?;
    let mut manager =
        AuthorizationManager::new_with_oauth_http_client(url.as_str(), Arc::new(http))
            .await
            .map_err(|e| auth_error(record, "setup", e))?;
    manager.set_credential_store(credentials);
    Ok(manager)
}

/// Turns DPoP on for the token requests to come when the server's authorization server
/// offers it (and the config does not turn it off): with the key kept for the server, or a
/// new one.
fn use_dpop(
    record: &ServerRecord,
    settings: &OAuthSettings,
    metadata: &AuthorizationMetadata,
    dpop: &Dpop,
) -> Result<()> {
    if settings.dpop == Some(false) || !super::dpop::offered(metadata) {
        return Ok(());
    }
    let key = match dpop.key() {
        Some(key) => key,
        None => {
            let key = DpopKey::generate().map_err(|e| Error::connection(&record.name, e))?;
            let key = Arc::new(key);
            dpop.set_key(key.clone());
            key
        }
    };
    tracing::debug!(server = %record.name, jkt = %key.thumbprint(), "asking for DPoP-bound tokens");
    dpop.enable(&metadata.token_endpoint);
    Ok(())
}

/// Finds the authorization server's metadata. A 2025-03-26 server publishes no
/// protected-resource metadata and serves the authorization server's at its own origin, where
/// some name another issuer: that spec version did not require them to match, so there (and
/// only where the expected issuer is the server's own origin) the metadata is taken as served.
/// Answers the metadata, also set on the manager.
pub(super) async fn discover(
    manager: &mut AuthorizationManager,
    record: &ServerRecord,
    challenge: Option<&str>,
) -> Result<AuthorizationMetadata> {
    match manager.resolve_metadata_from_challenge(challenge).await {
        Ok(resolution) => {
            manager.set_metadata(resolution.metadata.clone());
            Ok(resolution.metadata)
        }
        Err(AuthError::AuthorizationServerMismatch {
            expected_issuer, ..
        }) if origin_of(record).is_some_and(|o| o == expected_issuer.trim_end_matches('/')) => {
            let url = format!("{expected_issuer}/.well-known/oauth-authorization-server")
                .replace("//.well-known", "/.well-known");
            let metadata = reqwest::Client::new()
                .get(&url)
                .send()
                .await
                .and_then(reqwest::Response::error_for_status)
                .map_err(|e| {
                    Error::connection(&record.name, format!("OAuth discovery failed: {e}"))
                })?
                .json::<AuthorizationMetadata>()
                .await
                .map_err(|e| {
                    Error::connection(&record.name, format!("OAuth metadata is not valid: {e}"))
                })?;
            manager.set_metadata(metadata.clone());
            Ok(metadata)
        }
        Err(e) => Err(auth_error(record, "discovery", e)),
    }
}

/// `scheme://host[:port]` of the server's URL.
fn origin_of(record: &ServerRecord) -> Option<String> {
    let url = reqwest::Url::parse(record.config.url.as_deref()?).ok()?;
    Some(url.origin().ascii_serialization())
}

/// Credentials that need no user: tokens saved earlier (refreshed as they expire), or a
/// client-credentials grant. `None` when the user has to authorize.
pub(crate) async fn stored_manager(
    record: &ServerRecord,
    store: Arc<dyn TokenStore>,
    dpop: &Arc<Dpop>,
) -> Result<Option<AuthorizationManager>> {
    let settings = record.config.oauth.clone().unwrap_or_default();
    if settings.grant == Grant::ClientCredentials {
        return client_credentials(record, &settings, store, None, dpop)
            .await
            .map(Some);
    }
    let mut manager = manager(record, store, dpop).await?;
    match manager.initialize_from_store().await {
        Ok(true) => Ok(Some(manager)),
        Ok(false) => Ok(None),
        // Metadata that cannot be fetched now: the connection attempt will say why.
        Err(AuthError::CredentialStoreError(e)) => Err(Error::Connection {
            server: record.name.clone(),
            message: format!("cannot read the OAuth token store: {e}"),
        }),
        Err(_) => Ok(None),
    }
}

/// Authorizes after the server answered 401 (`challenge` is its `WWW-Authenticate`).
/// Answers the manager and the redirect URI the grant used. `id_tokens` is the host's source
/// of ID tokens for the enterprise grant; `dpop` the server's DPoP state.
pub(crate) async fn authorize(
    record: &ServerRecord,
    challenge: Option<String>,
    store: Arc<dyn TokenStore>,
    handler: Option<OAuthHandler>,
    id_tokens: Option<IdTokenFn>,
    dpop: &Arc<Dpop>,
) -> Result<(AuthorizationManager, String)> {
    let settings = record.config.oauth.clone().unwrap_or_default();
    match settings.grant {
        Grant::ClientCredentials => {
            let manager = client_credentials(record, &settings, store, challenge, dpop).await?;
            return Ok((manager, String::new()));
        }
        Grant::EnterpriseManaged => {
            let manager =
                super::enterprise::authorize(record, &settings, store, challenge, id_tokens, dpop)
                    .await?;
            return Ok((manager, String::new()));
        }
        Grant::JwtBearer => {
            let manager =
                super::workload::authorize(record, &settings, store, challenge, dpop).await?;
            return Ok((manager, String::new()));
        }
        Grant::AuthorizationCode => {}
    }
    // Without a host handler: the browser and a loopback listener.
    let (redirect_uri, loopback) = match &handler {
        Some(h) => (h.redirect_uri.clone(), None),
        None => {
            let lb = Loopback::bind()
                .await
                .map_err(|e| Error::io("cannot listen for the OAuth redirect", e))?;
            (lb.redirect_uri.clone(), Some(lb))
        }
    };
    let mut manager = manager(record, store, dpop).await?;
    let metadata = discover(&mut manager, record, challenge.as_deref()).await?;
    use_dpop(record, &settings, &metadata, dpop)?;
    let mut request = AuthorizationRequest::new(redirect_uri.clone()).with_client_name(CLIENT_NAME);
    if let Some(c) = &challenge {
        request = request.with_challenge(c.clone());
    }
    if !settings.scopes.is_empty() {
        request = request.with_scopes(settings.scopes.iter().cloned());
    }
    if let Some(id) = &settings.client_id {
        request = request.with_preregistered_client(id.clone());
        if let Some(secret) = &settings.client_secret {
            request = request.with_client_secret(secret.clone());
        }
    }
    if let Some(url) = &settings.client_metadata_url {
        request = request.with_client_metadata_url(url.clone());
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| auth_error(record, "registration", e))?;
    let prompt = AuthorizationPrompt {
        server_id: record.id.clone(),
        server_name: record.name.clone(),
        authorization_url: session.auth_url.clone(),
        redirect_uri: redirect_uri.clone(),
    };
    let redirected = match (handler, loopback) {
        (Some(h), _) => (h.authorize)(prompt).await,
        (None, Some(lb)) => {
            if let Err(e) = open_browser(&prompt.authorization_url) {
                tracing::warn!(server = %record.name, "{e}; open the authorization URL yourself");
                eprintln!(
                    "mcpmux: to authorize '{}', open {}",
                    record.name, prompt.authorization_url
                );
            }
            lb.wait(AUTHORIZE_TIMEOUT, &prompt.authorization_url).await
        }
        (None, None) => unreachable!("a loopback listener is bound when there is no handler"),
    }
    .map_err(|message| Error::Connection {
        server: record.name.clone(),
        message: format!("authorization was not completed: {message}"),
    })?;
    session
        .handle_callback_url(&redirected)
        .await
        .map_err(|e| auth_error(record, "token exchange", e))?;
    Ok((session.auth_manager, redirect_uri))
}

async fn client_credentials(
    record: &ServerRecord,
    settings: &OAuthSettings,
    store: Arc<dyn TokenStore>,
    challenge: Option<String>,
    dpop: &Arc<Dpop>,
) -> Result<AuthorizationManager> {
    let missing = |what: &str| Error::InvalidConfig {
        path: Default::default(),
        message: format!(
            "server '{}': the client_credentials grant needs {what}",
            record.name
        ),
    };
    let client_id = settings
        .client_id
        .clone()
        .ok_or_else(|| missing("a clientId"))?;
    let mut manager = manager(record, store, dpop).await?;
    let metadata = discover(&mut manager, record, challenge.as_deref()).await?;
    use_dpop(record, settings, &metadata, dpop)?;
    let resource = Some(record.config.url.clone().unwrap_or_default());
    let scopes = settings.scopes.clone();
    let config = match (&settings.private_key_pem, &settings.client_secret) {
        (Some(pem), _) => ClientCredentialsConfig::PrivateKeyJwt {
            client_id,
            signing_key: pem.as_bytes().to_vec(),
            signing_algorithm: algorithm(settings.signing_algorithm.as_deref()).ok_or_else(
                || missing("a signingAlgorithm among RS256, RS384, RS512, ES256, ES384"),
            )?,
            token_endpoint_audience: None,
            scopes,
            resource,
        },
        (None, Some(secret)) => ClientCredentialsConfig::ClientSecret {
            client_id,
            client_secret: secret.clone(),
            scopes,
            resource,
        },
        (None, None) => return Err(missing("a clientSecret or a privateKeyPem")),
    };
    manager
        .configure_client_credentials(&config)
        .map_err(|e| auth_error(record, "client setup", e))?;
    // rmcp's private_key_jwt exchange keeps a non-Send form serializer across an await, so
    // its future cannot go to `tokio::spawn`: it runs to completion on a blocking thread.
    let handle = tokio::runtime::Handle::current();
    let (manager, result) = tokio::task::spawn_blocking(move || {
        let result = handle.block_on(manager.exchange_client_credentials(&config));
        (manager, result)
    })
    .await
    .map_err(|e| Error::Connection {
        server: record.name.clone(),
        message: format!("the client credentials exchange stopped: {e}"),
    })?;
    result.map_err(|e| auth_error(record, "client credentials", e))?;
    Ok(manager)
}

/// An access token a grant without a browser obtained (enterprise-managed, workload
/// identity), before it goes into the token store in the form rmcp's manager reads.
pub(super) struct GrantedToken {
    pub client_id: String,
    pub issuer: String,
    pub access_token: String,
    pub token_type: String,
    pub expires_in: Option<std::time::Duration>,
    pub scopes: Vec<String>,
}

impl GrantedToken {
    /// Saves the token for the server and answers a manager that uses it (the store is where
    /// rmcp's `AuthClient` reads tokens). There is no refresh token: an expired one is
    /// obtained again the same way. Errors are messages without the token.
    pub(super) async fn into_manager(
        self,
        record: &ServerRecord,
        store: Arc<dyn TokenStore>,
        metadata: AuthorizationMetadata,
        dpop: &Arc<Dpop>,
    ) -> std::result::Result<AuthorizationManager, String> {
        let mut response = serde_json::json!({
            "access_token": self.access_token,
            "token_type": self.token_type,
        });
        if let Some(lifetime) = self.expires_in {
            response["expires_in"] = lifetime.as_secs().into();
        }
        if !self.scopes.is_empty() {
            response["scope"] = self.scopes.join(" ").into();
        }
        let response = serde_json::from_value(response)
            .map_err(|e| format!("unusable token response: {e}"))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let credentials = rmcp::transport::auth::StoredCredentials::new(
            self.client_id,
            Some(response),
            self.scopes,
            Some(now),
        )
        .with_issuer(Some(self.issuer));
        let credentials = serde_json::to_value(&credentials).map_err(|e| e.to_string())?;
        store
            .save(&record.id, credentials)
            .await
            .map_err(|e| format!("cannot save the tokens: {e}"))?;
        let mut manager = manager(record, store, dpop)
            .await
            .map_err(|e| e.to_string())?;
        manager.set_metadata(metadata);
        match manager.initialize_from_store().await {
            Ok(true) => Ok(manager),
            Ok(false) => Err("the token store did not keep the tokens".into()),
            Err(e) => Err(format!("OAuth setup failed: {e}")),
        }
    }
}

fn algorithm(name: Option<&str>) -> Option<JwtSigningAlgorithm> {
    Some(match name.unwrap_or("RS256") {
        "RS256" => JwtSigningAlgorithm::RS256,
        "RS384" => JwtSigningAlgorithm::RS384,
        "RS512" => JwtSigningAlgorithm::RS512,
        "ES256" => JwtSigningAlgorithm::ES256,
        "ES384" => JwtSigningAlgorithm::ES384,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_urls_are_told_apart() {
        for u in [
            "http://localhost:3000/mcp",
            "http://127.0.0.1/mcp",
            "http://[::1]:8080/",
            "http://user@localhost/x",
        ] {
            assert!(is_local(u), "{u}");
        }
        for u in [
            "https://example.com/mcp",
            "http://10.0.0.1/",
            "http://localhost.evil.com/",
        ] {
            assert!(!is_local(u), "{u}");
        }
    }
}
