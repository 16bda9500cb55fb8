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

use serde::{Deserialize, Serialize};

use crate::host::BoxFuture;

pub(crate) use dpop::Dpop;
#[cfg(test)]
pub(crate) use dpop::DpopKey;
pub(crate) use flow::{authorize, stored_manager};
pub(crate) use session_client::{Grantor, SessionClient};
pub use store::{FileTokenStore, MemoryTokenStore, TokenStore};
pub(crate) use token_client::TokenClient;

/// How a client gets its tokens.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// A user signs in through the authorization server (with PKCE).
    #[default]
    AuthorizationCode,
    /// Machine to machine, with the client's own credentials (no user).
    ClientCredentials,
    /// Enterprise-managed authorization (cross-app access, SEP-990): the user's ID token
    /// from the enterprise identity provider ([`OAuthSettings::idp`]) is exchanged there for
    /// an ID-JAG, which `clientId` / `clientSecret` redeem at the server's authorization
    /// server for an access token. Config value `"enterprise_managed"` (or `"enterprise"`).
    #[serde(alias = "enterprise")]
    EnterpriseManaged,
    /// Workload identity (RFC 7523 JWT bearer grant): a JWT the workload's platform issued (a
    /// Kubernetes service account token, a cloud workload identity, a CI job's ID token),
    /// given as [`OAuthSettings::assertion`] or [`OAuthSettings::assertion_file`], is
    /// exchanged at the server's authorization server for an access token. No user, no
    /// client secret. Config value `"jwt_bearer"` (or `"workload_identity"`).
    #[serde(alias = "workload_identity")]
    JwtBearer,
}

/// A server's OAuth settings (`config.oauth` in its record). All optional: with none, a
/// server that answers 401 is authorized with dynamic client registration.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OAuthSettings {
    /// A client registered beforehand with the authorization server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// An HTTPS URL of this client's metadata document, used as its client id where the
    /// authorization server supports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for; without them the server's challenge or metadata decides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub grant: Grant,
    /// For `client_credentials` with `private_key_jwt`: the PEM key that signs assertions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key_pem: Option<String>,
    /// `RS256`, `ES256`, ... (default `RS256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_algorithm: Option<String>,
    /// For the `enterprise_managed` grant: the enterprise identity provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp: Option<IdpSettings>,
    /// DPoP (RFC 9449, tokens bound to a key this client holds): unset, it is used whenever
    /// the server's authorization server offers it (`dpop_signing_alg_values_supported` with
    /// ES256); `false` never asks for DPoP-bound tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop: Option<bool>,
    /// For the `jwt_bearer` grant: the workload's JWT itself (a secret). Tokens of this kind
    /// are short-lived: a file the platform keeps fresh ([`Self::assertion_file`]) is better.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assertion: Option<String>,
    /// For the `jwt_bearer` grant: a file holding the workload's JWT, read each time a token
    /// is needed (platforms rotate it), e.g. a Kubernetes projected service account token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assertion_file: Option<String>,
}

/// The enterprise identity provider of the `enterprise_managed` grant (`config.oauth.idp`):
/// where the user's ID token is exchanged for an identity assertion grant (ID-JAG).
#[derive(Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IdpSettings {
    /// The identity provider's issuer identifier (exactly as in its metadata and ID tokens).
    pub issuer: String,
    /// Its token endpoint; when absent, read from the issuer's OpenID Connect (or RFC 8414)
    /// metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// This client's registration at the identity provider (the audience of the ID token).
    pub client_id: String,
    /// Its secret, for a confidential client; without it the client is public.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How the client authenticates at the identity provider's token endpoint:
    /// `client_secret_basic` (the default with a secret), `client_secret_post` or `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// A user's ID token issued by the identity provider to `clientId`. ID tokens are
    /// short-lived: a host with single sign-on supplies fresh ones with
    /// `Pool::set_id_token_provider` instead. When both are set, this one is used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token: Option<String>,
}

impl fmt::Debug for IdpSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secret = |s: &Option<String>| s.as_ref().map(|_| "<redacted>");
        f.debug_struct("IdpSettings")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &secret(&self.client_secret))
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .field("id_token", &secret(&self.id_token))
            .finish()
    }
}

/// The client authentication methods the enterprise grant supports.
pub(crate) const AUTH_METHODS: [&str; 3] = ["client_secret_basic", "client_secret_post", "none"];

impl OAuthSettings {
    /// Checks what can be checked without a network: the enterprise grant's identity
    /// provider and client. Other grants are checked when they are used.
    pub fn validate(&self) -> Result<(), String> {
        self.validate_assertion()?;
        if self.grant != Grant::EnterpriseManaged {
            if self.idp.is_some() {
                return Err("`idp` is only used by the enterprise_managed grant".into());
            }
            return Ok(());
        }
        let Some(idp) = &self.idp else {
            return Err(
                "the enterprise_managed grant needs `idp` (issuer, clientId and an ID token)"
                    .into(),
            );
        };
        if self
            .client_id
            .as_deref()
            .is_none_or(|c| c.trim().is_empty())
        {
            return Err(
                "the enterprise_managed grant needs a `clientId` registered with the server's \
                 authorization server"
                    .into(),
            );
        }
        if self.private_key_pem.is_some() {
            return Err(
                "the enterprise_managed grant authenticates with a clientSecret (or none); \
                 privateKeyPem is not supported for it"
                    .into(),
            );
        }
        let url = |what: &str, value: &str| {
            let ok = reqwest::Url::parse(value)
                .is_ok_and(|u| matches!(u.scheme(), "https" | "http") && u.has_host());
            if ok {
                Ok(())
            } else {
                Err(format!(
                    "`idp.{what}` must be an http(s) URL, not '{value}'"
                ))
            }
        };
        url("issuer", &idp.issuer)?;
        if let Some(endpoint) = &idp.token_endpoint {
            url("tokenEndpoint", endpoint)?;
        }
        if idp.client_id.trim().is_empty() {
            return Err("`idp.clientId` must not be empty".into());
        }
        if let Some(method) = &idp.token_endpoint_auth_method {
            if !AUTH_METHODS.contains(&method.as_str()) {
                return Err(format!(
                    "`idp.tokenEndpointAuthMethod` must be one of {}, not '{method}'",
                    AUTH_METHODS.join(", ")
                ));
            }
            if method != "none" && idp.client_secret.is_none() {
                return Err(format!(
                    "`idp.tokenEndpointAuthMethod` {method} needs `idp.clientSecret`"
                ));
            }
        }
        if idp.id_token.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err("`idp.idToken` must not be empty (leave it out to ask the host)".into());
        }
        Ok(())
    }
}

impl OAuthSettings {
    /// The `jwt_bearer` grant takes exactly one of `assertion` and `assertionFile`; other
    /// grants take neither.
    fn validate_assertion(&self) -> Result<(), String> {
        let given = self.assertion.is_some() as u8 + self.assertion_file.is_some() as u8;
        if self.grant != Grant::JwtBearer {
            return if given == 0 {
                Ok(())
            } else {
                Err("`assertion` and `assertionFile` are only used by the jwt_bearer grant".into())
            };
        }
        match given {
            0 => Err(
                "the jwt_bearer grant needs the workload's JWT: `assertionFile` (a file the \
                 platform keeps fresh) or `assertion`"
                    .into(),
            ),
            2 => Err("give either `assertion` or `assertionFile`, not both".into()),
            _ if self
                .assertion
                .as_deref()
                .is_some_and(|a| a.trim().is_empty()) =>
            {
                Err("`assertion` must not be empty".into())
            }
            _ if self
                .assertion_file
                .as_deref()
                .is_some_and(|f| f.trim().is_empty()) =>
            {
                Err("`assertionFile` must not be empty".into())
            }
            _ => Ok(()),
        }
    }
}

fn is_default(g: &Grant) -> bool {
    *g == Grant::default()
}

impl fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secret = |s: &Option<String>| s.as_ref().map(|_| "<redacted>");
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field("client_secret", &secret(&self.client_secret))
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("grant", &self.grant)
            .field("private_key_pem", &secret(&self.private_key_pem))
            .field("signing_algorithm", &self.signing_algorithm)
            .field("idp", &self.idp)
            .field("dpop", &self.dpop)
            .field("assertion", &secret(&self.assertion))
            .field("assertion_file", &self.assertion_file)
            .finish()
    }
}

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
        let input: crate::ServerInput = serde_json::from_value(json!({
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
