//! The enterprise-managed grant (cross-app access, SEP-990): the user's ID token is exchanged
//! at the enterprise identity provider for an identity assertion grant (ID-JAG, RFC 8693 token
//! exchange), which the MCP server's authorization server takes for an access token (RFC 7523
//! JWT bearer grant). rmcp's `enterprise` module makes both requests and checks the
//! assertion's bindings (issuer, audience, client, resource, scopes); this module finds the
//! servers, gets the ID token, and stores the access token where rmcp's `AuthClient` reads it.
//! There is no refresh token: an expired access token is obtained again the same way.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use oauth2::ClientSecret;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaError, EmaExchangeRequest, EmaExchangeStage,
};
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, StoredCredentials, default_oauth_http_client,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::flow::{auth_error, discover, manager};
use super::{IdTokenFn, IdTokenRequest, IdpSettings, OAuthSettings, TokenStore};
use crate::error::{Error, Result};
use crate::record::ServerRecord;

fn invalid(record: &ServerRecord, message: impl std::fmt::Display) -> Error {
    Error::InvalidConfig {
        path: Default::default(),
        message: format!("server '{}': config.oauth: {message}", record.name),
    }
}

fn failed(record: &ServerRecord, message: impl std::fmt::Display) -> Error {
    Error::connection(
        &record.name,
        format!("enterprise authorization failed: {message}"),
    )
}

/// Gets an access token with the enterprise grant and answers a manager that uses it.
pub(super) async fn authorize(
    record: &ServerRecord,
    settings: &OAuthSettings,
    store: Arc<dyn TokenStore>,
    challenge: Option<String>,
    id_tokens: Option<IdTokenFn>,
) -> Result<AuthorizationManager> {
    settings.validate().map_err(|m| invalid(record, m))?;
    let (Some(idp), Some(client_id)) = (&settings.idp, &settings.client_id) else {
        unreachable!("validate() checks the enterprise grant's idp and clientId");
    };
    // The server's authorization server, found as for the other grants.
    let mut discovery = manager(record, store.clone()).await?;
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

    // Into the token store, in the form rmcp's authorization manager reads.
    let mut scopes: Vec<String> = token.scopes.iter().cloned().collect();
    scopes.sort();
    let mut response = json!({
        "access_token": token.access_token.secret(),
        "token_type": "Bearer",
    });
    if let Some(lifetime) = token.expires_in {
        response["expires_in"] = lifetime.as_secs().into();
    }
    if !scopes.is_empty() {
        response["scope"] = scopes.join(" ").into();
    }
    let response = serde_json::from_value(response)
        .map_err(|e| failed(record, format!("unusable token response: {e}")))?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    let credentials = StoredCredentials::new(client_id.clone(), Some(response), scopes, Some(now))
        .with_issuer(Some(issuer));
    let credentials =
        serde_json::to_value(&credentials).map_err(|e| failed(record, e.to_string()))?;
    store
        .save(&record.id, credentials)
        .await
        .map_err(|e| failed(record, format!("cannot save the tokens: {e}")))?;
    let mut manager = manager(record, store).await?;
    manager.set_metadata(metadata);
    match manager.initialize_from_store().await {
        Ok(true) => Ok(manager),
        Ok(false) => Err(failed(record, "the token store did not keep the tokens")),
        Err(e) => Err(auth_error(record, "setup", e)),
    }
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
