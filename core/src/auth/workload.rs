//! Workload identity federation: the RFC 7523 JWT bearer grant. A JWT the workload's platform
//! issued (a Kubernetes projected service account token, a cloud workload identity, a CI
//! job's ID token) is the grant: the server's authorization server checks its signature,
//! issuer and audience and answers an access token. No user and no client secret are
//! involved; the JWT is read again (from its file) each time a token is needed, since
//! platforms rotate it, and the server's authorization server is found as for every grant.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{AuthorizationManager, AuthorizationMetadata};
use serde::Deserialize;

use super::flow::invalid_oauth as invalid;
use super::flow::{GrantedToken, discover, grant_failed, is_local, manager};
use super::oauth_http::OAuthHttp;
use super::{OAuthSettings, TokenStore};
use crate::config::record::ServerRecord;
use crate::error::{Error, Result};

/// The grant type of RFC 7523 section 2.1.
pub(super) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

fn failed(record: &ServerRecord, message: impl std::fmt::Display) -> Error {
    grant_failed(record, "workload identity", message)
}

/// Gets an access token with the workload's JWT and answers a manager that uses it.
pub(super) async fn authorize(
    record: &ServerRecord,
    settings: &OAuthSettings,
    store: Arc<dyn TokenStore>,
    challenge: Option<String>,
    dpop: &Arc<super::dpop::Dpop>,
) -> Result<AuthorizationManager> {
    settings.validate().map_err(|m| invalid(record, m))?;
    let assertion = assertion(record, settings).await?;
    let mut discovery = manager(record, store.clone(), dpop).await?;
    let metadata = discover(&mut discovery, record, challenge.as_deref()).await?;
    drop(discovery);
    let granted = request_token(record, settings, &metadata, &assertion, dpop).await?;
    granted
        .into_manager(record, store, metadata, dpop)
        .await
        .map_err(|e| failed(record, e))
}

/// The workload's JWT: from its file (read now: it may have been rotated), or the config.
async fn assertion(record: &ServerRecord, settings: &OAuthSettings) -> Result<String> {
    let jwt = match (&settings.assertion_file, &settings.assertion) {
        (Some(path), _) => tokio::fs::read_to_string(path).await.map_err(|e| {
            failed(
                record,
                format!("cannot read the workload's JWT from {path}: {e}"),
            )
        })?,
        (None, Some(jwt)) => jwt.clone(),
        (None, None) => unreachable!("validate() checks that one is given"),
    };
    let jwt = jwt.trim().to_string();
    // A JWT is three base64url parts; anything else would only be refused by the server.
    if jwt.split('.').count() != 3 {
        return Err(failed(
            record,
            "the workload's credential is not a JWT (three dot-separated parts)",
        ));
    }
    Ok(jwt)
}

/// The token endpoint's answer, success or error (RFC 6749 sections 5.1 and 5.2).
#[derive(Deserialize)]
struct TokenAnswer {
    access_token: Option<String>,
    token_type: Option<String>,
    expires_in: Option<u64>,
    scope: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// Asks the authorization server's token endpoint for an access token in exchange for the
/// JWT: `grant_type`, `assertion`, the server as `resource` (RFC 8707), the configured scopes,
/// and the client: `clientId` in the form, or with `clientSecret` by HTTP Basic.
async fn request_token(
    record: &ServerRecord,
    settings: &OAuthSettings,
    metadata: &AuthorizationMetadata,
    assertion: &str,
    dpop: &Arc<super::dpop::Dpop>,
) -> Result<GrantedToken> {
    let resource = record.config.url.clone().unwrap_or_default();
    let mut form = vec![
        ("grant_type", JWT_BEARER.to_string()),
        ("assertion", assertion.to_string()),
        ("resource", resource),
    ];
    if !settings.scopes.is_empty() {
        form.push(("scope", settings.scopes.join(" ")));
    }
    let server = record.config.url.clone().unwrap_or_default();
    let http =
        OAuthHttp::new(&server, is_local(&server), dpop.clone()).map_err(|e| failed(record, e))?;
    let mut basic = None;
    match (&settings.client_id, &settings.client_secret) {
        (Some(id), Some(secret)) => basic = Some((id.as_str(), secret.as_str())),
        (Some(id), None) => form.push(("client_id", id.clone())),
        _ => {}
    }
    let (status, body) = http
        .post_form(&metadata.token_endpoint, &form, basic)
        .await
        .map_err(|e| failed(record, format!("the token request failed: {e}")))?;
    let answer: TokenAnswer = serde_json::from_slice(&body).map_err(|e| {
        failed(
            record,
            format!("the token endpoint answered {status} with no token response: {e}"),
        )
    })?;
    let access_token = match (answer.access_token, &answer.error) {
        (Some(token), None) if status.is_success() => token,
        _ => {
            let why = answer.error.as_deref().unwrap_or("no access_token");
            let detail = answer
                .error_description
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            return Err(failed(
                record,
                format!(
                    "the authorization server refused the workload's JWT ({status} {why}{detail})"
                ),
            ));
        }
    };
    Ok(GrantedToken {
        client_id: settings.client_id.clone().unwrap_or_default(),
        issuer: metadata.issuer.clone().unwrap_or_default(),
        access_token,
        token_type: answer.token_type.unwrap_or_else(|| "Bearer".into()),
        expires_in: answer.expires_in.map(Duration::from_secs),
        scopes: answer
            .scope
            .map(|s| s.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> ServerRecord {
        let input: crate::config::record::ServerInput = serde_json::from_value(serde_json::json!({
            "name": "files",
            "config": {"url": "https://mcp.example/mcp"},
        }))
        .unwrap();
        input.into_record().unwrap()
    }

    #[tokio::test]
    async fn the_jwt_is_read_from_its_file_each_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        let settings = OAuthSettings {
            grant: super::super::Grant::JwtBearer,
            assertion_file: Some(path.display().to_string()),
            ..Default::default()
        };
        let missing = assertion(&record(), &settings).await.unwrap_err();
        assert!(
            missing
                .to_string()
                .contains("cannot read the workload's JWT"),
            "{missing}"
        );
        std::fs::write(&path, "eyJh.first.sig\n").unwrap();
        assert_eq!(
            assertion(&record(), &settings).await.unwrap(),
            "eyJh.first.sig"
        );
        // The platform rotated it.
        std::fs::write(&path, "eyJh.second.sig").unwrap();
        assert_eq!(
            assertion(&record(), &settings).await.unwrap(),
            "eyJh.second.sig"
        );
        std::fs::write(&path, "not a jwt").unwrap();
        let bad = assertion(&record(), &settings)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            bad.contains("not a JWT") && !bad.contains("not a jwt"),
            "{bad}"
        );
    }
}
