//! OAuth 2.1 for remote servers, on rmcp's authorization support: metadata discovery,
//! dynamic registration, client ID metadata documents, pre-registered clients, PKCE,
//! resource indicators, scopes, refresh tokens and client credentials. The host decides how a
//! user authorizes ([`OAuthHandler`]) and where tokens live ([`TokenStore`]); by default a
//! browser opens on a loopback listener and tokens go to a 0600 file next to the config.
//! Tokens never appear in events, logs or `Debug` output.
//!
//! Enterprise-managed authorization ("cross-app access", [`Grant::EnterpriseManaged`]): the
//! user's ID token from the enterprise identity provider (the host's single sign-on) is
//! exchanged there for an identity assertion grant (ID-JAG, RFC 8693 token exchange), which the
//! MCP server's authorization server takes for an access token (RFC 7523 JWT bearer grant).
//! No browser is involved; the ID token comes from the config or from the host
//! ([`IdTokenFn`], set with `Pool::set_id_token_provider`).

mod dpop;
mod enterprise;
mod flow;
mod loopback;
mod oauth_http;
mod session_client;
mod store;
mod token_client;
mod workload;

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::boxed_future::BoxFuture;

pub(crate) use dpop::Dpop;
#[cfg(test)]
pub(crate) use dpop::DpopKey;
pub(crate) use flow::{authorize, stored_manager};
pub(crate) use session_client::{Grantor, SessionClient};
pub use store::{FileTokenStore, MemoryTokenStore, TokenStore};
pub(crate) use token_client::TokenClient;

pub use crate::config::oauth::{Grant, IdpSettings, OAuthSettings};

/// What the host is asked to do: send the user to `authorization_url`, and answer the URL the
/// authorization server redirected to (it carries the code and state).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationPrompt {
    pub server_id: String,
    pub server_name: String,
    pub authorization_url: String,
    pub redirect_uri: String,
}

/// Takes the user through authorization; answers the redirect URL, or why it failed.
pub type AuthorizeFn =
    Arc<dyn Fn(AuthorizationPrompt) -> BoxFuture<Result<String, String>> + Send + Sync>;

/// How users authorize, set on the pool.
#[derive(Clone)]
pub struct OAuthHandler {
    /// Registered with the authorization server; where it sends the user back.
    pub redirect_uri: String,
    pub authorize: AuthorizeFn,
}

impl fmt::Debug for OAuthHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthHandler")
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

/// What the host is asked for under the `enterprise_managed` grant: a current ID token for the
/// signed-in user, issued by `idp_issuer` to `idp_client_id` (typically from the host's single
/// sign-on session, renewed as needed).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IdTokenRequest {
    pub server_id: String,
    pub server_name: String,
    pub idp_issuer: String,
    pub idp_client_id: String,
    /// The identity provider refused the token given before (expired, revoked, or it wants the
    /// user to sign in again): answer a new one, not a cached one. Asked at most once per
    /// authorization.
    pub rejected: bool,
}

/// Supplies ID tokens for the enterprise grant; answers the token (a secret: never log it)
/// or why there is none.
pub type IdTokenFn = Arc<dyn Fn(IdTokenRequest) -> BoxFuture<Result<String, String>> + Send + Sync>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn enterprise(idp: serde_json::Value) -> serde_json::Value {
        json!({
            "grant": "enterprise_managed",
            "clientId": "mcp-client",
            "clientSecret": "mcp-secret",
            "scopes": ["files.read"],
            "idp": idp,
        })
    }

    #[test]
    fn the_enterprise_grant_reads_from_camel_case_json() {
        let settings: OAuthSettings = serde_json::from_value(enterprise(json!({
            "issuer": "https://idp.example",
            "tokenEndpoint": "https://idp.example/oauth2/token",
            "clientId": "idp-client",
            "clientSecret": "idp-secret",
            "tokenEndpointAuthMethod": "client_secret_post",
            "idToken": "eyJ.id.token",
        })))
        .unwrap();
        assert_eq!(settings.grant, Grant::EnterpriseManaged);
        let idp = settings.idp.as_ref().unwrap();
        assert_eq!(idp.issuer, "https://idp.example");
        assert_eq!(
            idp.token_endpoint.as_deref(),
            Some("https://idp.example/oauth2/token")
        );
        assert_eq!(idp.client_id, "idp-client");
        assert_eq!(idp.client_secret.as_deref(), Some("idp-secret"));
        assert_eq!(
            idp.token_endpoint_auth_method.as_deref(),
            Some("client_secret_post")
        );
        assert_eq!(idp.id_token.as_deref(), Some("eyJ.id.token"));
        settings.validate().unwrap();
        // Written back the same way, under the canonical grant name.
        let back = serde_json::to_value(&settings).unwrap();
        assert_eq!(back["grant"], "enterprise_managed");
        assert_eq!(back["idp"]["tokenEndpointAuthMethod"], "client_secret_post");
        assert_eq!(
            serde_json::from_value::<OAuthSettings>(back).unwrap(),
            settings
        );

        // The short name, and the least an identity provider needs (the ID token can come
        // from the host, the token endpoint from the issuer's metadata).
        let short: OAuthSettings = serde_json::from_value(json!({
            "grant": "enterprise",
            "clientId": "mcp-client",
            "idp": {"issuer": "https://idp.example", "clientId": "idp-client"},
        }))
        .unwrap();
        assert_eq!(short.grant, Grant::EnterpriseManaged);
        short.validate().unwrap();
    }

    #[test]
    fn enterprise_settings_reject_unknown_and_missing_fields() {
        let typo = serde_json::from_value::<OAuthSettings>(enterprise(json!({
            "issuer": "https://idp.example", "clientId": "c", "id_token": "t",
        })));
        assert!(
            typo.unwrap_err()
                .to_string()
                .contains("unknown field `id_token`")
        );
        let missing = serde_json::from_value::<OAuthSettings>(enterprise(json!({
            "issuer": "https://idp.example",
        })));
        assert!(
            missing
                .unwrap_err()
                .to_string()
                .contains("missing field `clientId`")
        );
    }

    #[test]
    fn enterprise_settings_are_checked() {
        let idp = || IdpSettings {
            issuer: "https://idp.example".into(),
            client_id: "idp-client".into(),
            ..Default::default()
        };
        let good = OAuthSettings {
            grant: Grant::EnterpriseManaged,
            client_id: Some("mcp-client".into()),
            idp: Some(idp()),
            ..Default::default()
        };
        good.validate().unwrap();
        let check = |f: &dyn Fn(&mut OAuthSettings), expected: &str| {
            let mut s = good.clone();
            f(&mut s);
            let e = s.validate().unwrap_err();
            assert!(e.contains(expected), "{e:?} should say {expected:?}");
        };
        check(&|s| s.idp = None, "needs `idp`");
        check(&|s| s.client_id = None, "needs a `clientId`");
        check(&|s| s.client_id = Some(" ".into()), "needs a `clientId`");
        check(&|s| s.private_key_pem = Some("pem".into()), "privateKeyPem");
        check(
            &|s| s.idp.as_mut().unwrap().issuer = "idp.example".into(),
            "`idp.issuer` must be an http(s) URL",
        );
        check(
            &|s| s.idp.as_mut().unwrap().token_endpoint = Some("ftp://idp/token".into()),
            "`idp.tokenEndpoint` must be an http(s) URL",
        );
        check(
            &|s| s.idp.as_mut().unwrap().client_id = String::new(),
            "`idp.clientId` must not be empty",
        );
        check(
            &|s| s.idp.as_mut().unwrap().token_endpoint_auth_method = Some("jwt".into()),
            "must be one of client_secret_basic, client_secret_post, none",
        );
        check(
            &|s| {
                s.idp.as_mut().unwrap().token_endpoint_auth_method =
                    Some("client_secret_basic".into())
            },
            "needs `idp.clientSecret`",
        );
        check(
            &|s| s.idp.as_mut().unwrap().id_token = Some("".into()),
            "`idp.idToken` must not be empty",
        );
        check(
            &|s| s.grant = Grant::AuthorizationCode,
            "only used by the enterprise_managed grant",
        );
        // Other grants are not checked here (as before).
        OAuthSettings {
            grant: Grant::ClientCredentials,
            ..Default::default()
        }
        .validate()
        .unwrap();
    }

    #[test]
    fn the_jwt_bearer_grant_takes_one_assertion() {
        let read = |v: serde_json::Value| serde_json::from_value::<OAuthSettings>(v).unwrap();
        let file = read(json!({"grant": "workload_identity", "assertionFile": "/var/run/token"}));
        assert_eq!(file.grant, Grant::JwtBearer);
        file.validate().unwrap();
        assert_eq!(serde_json::to_value(&file).unwrap()["grant"], "jwt_bearer");
        let literal = read(json!({"grant": "jwt_bearer", "assertion": "eyJ.a.b"}));
        literal.validate().unwrap();
        assert!(!format!("{literal:?}").contains("eyJ.a.b"));
        for (settings, expected) in [
            (json!({"grant": "jwt_bearer"}), "needs the workload's JWT"),
            (
                json!({"grant": "jwt_bearer", "assertion": "a", "assertionFile": "f"}),
                "not both",
            ),
            (
                json!({"grant": "jwt_bearer", "assertion": " "}),
                "must not be empty",
            ),
            (
                json!({"assertionFile": "/var/run/token"}),
                "only used by the jwt_bearer grant",
            ),
        ] {
            let e = read(settings.clone()).validate().unwrap_err();
            assert!(e.contains(expected), "{settings}: {e}");
        }
    }

    #[test]
    fn debug_output_hides_the_id_token_and_secrets() {
        let settings: OAuthSettings = serde_json::from_value(enterprise(json!({
            "issuer": "https://idp.example",
            "clientId": "idp-client",
            "clientSecret": "idp-secret-value",
            "idToken": "id-token-value",
        })))
        .unwrap();
        let shown = format!("{settings:?}");
        assert!(shown.contains("idp-client") && shown.contains("https://idp.example"));
        for secret in ["idp-secret-value", "id-token-value", "mcp-secret"] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }

    #[test]
    fn a_server_with_an_unusable_enterprise_grant_is_refused() {
        let input: crate::config::record::ServerInput = serde_json::from_value(json!({
            "name": "files",
            "config": {
                "url": "https://mcp.example/mcp",
                "oauth": {"grant": "enterprise_managed", "clientId": "mcp-client"},
            },
        }))
        .unwrap();
        let e = input.into_record().unwrap_err().to_string();
        assert!(
            e.contains("server 'files': config.oauth: the enterprise_managed grant needs `idp`"),
            "{e}"
        );
    }
}
