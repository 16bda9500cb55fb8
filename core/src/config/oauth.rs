//! A server's OAuth settings, as its record holds them (`config.oauth`): which grant, which
//! client, which identity provider, and the checks that need no network. The flows that use
//! them are `auth`'s.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How a client gets its tokens.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
// Its name in the bindings, beside OAuthSettings.
#[schemars(rename = "OAuthGrant")]
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
    #[schemars(extend("enum" = ["client_secret_basic", "client_secret_post", "none", null]))]
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
const AUTH_METHODS: [&str; 3] = ["client_secret_basic", "client_secret_post", "none"];

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

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema the bindings' types are generated from names the methods `validate` takes.
    #[test]
    fn the_schema_of_the_idp_auth_method_is_the_methods_validate_takes() {
        let schema = serde_json::to_value(schemars::schema_for!(IdpSettings)).unwrap();
        let listed = &schema["properties"]["tokenEndpointAuthMethod"]["enum"];
        let mut expected: Vec<serde_json::Value> = AUTH_METHODS.map(Into::into).to_vec();
        expected.push(serde_json::Value::Null);
        assert_eq!(listed, &serde_json::Value::Array(expected));
    }
}
