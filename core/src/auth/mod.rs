//! OAuth 2.1 for remote servers, on rmcp's authorization support: metadata discovery,
//! dynamic registration, client ID metadata documents, pre-registered clients, PKCE,
//! resource indicators, scopes, refresh tokens and client credentials. The host decides how a
//! user authorizes ([`OAuthHandler`]) and where tokens live ([`TokenStore`]); by default a
//! browser opens on a loopback listener and tokens go to a 0600 file next to the config.
//! Tokens never appear in events, logs or `Debug` output.

mod flow;
mod loopback;
mod step_up;
mod store;

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::host::BoxFuture;

pub(crate) use flow::{authorize, stored_manager};
pub(crate) use step_up::StepUpClient;
pub use store::{FileTokenStore, MemoryTokenStore, TokenStore};

/// How a client gets its tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// A user signs in through the authorization server (with PKCE).
    #[default]
    AuthorizationCode,
    /// Machine to machine, with the client's own credentials (no user).
    ClientCredentials,
}

/// A server's OAuth settings (`config.oauth` in its record). All optional: with none, a
/// server that answers 401 is authorized with dynamic client registration.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
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
