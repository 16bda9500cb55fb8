//! How a caller asks for a pool to be served over HTTP, as data: what `mcpmux serve --http`
//! reads from its flags and what the C, Python and Node bindings take as JSON. Checked here
//! once, so every language refuses the same mistakes with the same words.

use std::net::SocketAddr;

use serde::Deserialize;

use super::ServeOptions;
use super::front::connections::{DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_PEER};
use super::front::http::{HttpAuth, HttpOptions};
use super::view::exposure::{AUTO_LIMIT, Exposure};
use crate::error::{Error, Result};

/// `{"addr": "127.0.0.1:0", "token": null, "noAuth": false, "allowedOrigins": [],
/// "allowedHosts": [], "mode": "auto", "autoLimit": 40, "nameBudget": 0, "serverName":
/// "mcpmux", "sessionKey": null, "auditLog": null, "legacySse": false, "oauth": null,
/// "maxConnections": 512, "maxConnectionsPerPeer": 256}`, every field optional; an unknown
/// one is refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpServeSettings {
    /// Where to listen (default `127.0.0.1:0`: loopback, any free port).
    #[serde(default)]
    pub addr: Option<String>,
    /// The bearer token clients send (default: a new random one).
    #[serde(default)]
    pub token: Option<String>,
    /// No token at all; refused off loopback.
    #[serde(default)]
    pub no_auth: bool,
    /// Browser origins allowed to call (e.g. `http://localhost:5173`).
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// Host names to answer to besides the loopback names.
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// `direct`, `search` or `auto` (default).
    #[serde(default)]
    #[schemars(with = "Option<crate::serve::view::exposure::Exposure>")]
    pub mode: Option<String>,
    /// The most tools `auto` lists before it shows the search tools (default 40).
    #[serde(default)]
    pub auto_limit: Option<usize>,
    /// Characters the client puts before each tool name.
    #[serde(default)]
    pub name_budget: Option<usize>,
    /// The `serverInfo.name` clients see (default `mcpmux`).
    #[serde(default)]
    pub server_name: Option<String>,
    /// A secret (16 characters or more) shared by replicas behind one load balancer, so that
    /// any of them can serve any session (default: sessions stay with this server).
    #[serde(default)]
    pub session_key: Option<String>,
    /// A file to append one JSON line to per tool call (client, profile, server, tool,
    /// duration, outcome).
    #[serde(default)]
    pub audit_log: Option<String>,
    /// Also serve the HTTP+SSE transport of protocol 2024-11-05 (`GET /sse`, `POST
    /// /messages`), for clients that predate Streamable HTTP.
    #[serde(default)]
    pub legacy_sse: bool,
    /// Accept access tokens an OAuth authorization server issued, instead of one shared
    /// token: `{"issuer": URL, "resource": URL, "audience": ..., "scopes": [...], "jwksUri":
    /// URL}` (only `issuer` is required).
    #[serde(default)]
    pub oauth: Option<super::OAuthResourceSettings>,
    /// The most connections served at once (default 512); past it, 503.
    #[serde(default)]
    pub max_connections: Option<usize>,
    /// The most connections served at once from one address (default 256; on loopback every
    /// local client has the same address).
    #[serde(default)]
    pub max_connections_per_peer: Option<usize>,
}

impl HttpServeSettings {
    /// Reads settings from JSON; an empty text is the defaults.
    pub fn from_json(text: &str) -> Result<HttpServeSettings> {
        if text.trim().is_empty() {
            return Ok(HttpServeSettings::default());
        }
        serde_json::from_str(text)
            .map_err(|e| Error::invalid(format!("the serve settings are not valid: {e}")))
    }

    /// The options these settings stand for, or what to change.
    pub fn into_options(self) -> Result<(ServeOptions, HttpOptions)> {
        let addr: SocketAddr = match &self.addr {
            None => SocketAddr::from(([127, 0, 0, 1], 0)),
            Some(text) => text.parse().map_err(|_| {
                Error::invalid(format!(
                    "addr {text:?} is not an IP address and port (e.g. 127.0.0.1:8808)"
                ))
            })?,
        };
        let auth = match (self.token.clone(), self.no_auth) {
            _ if self.oauth.is_some() => self.oauth_auth()?,
            (Some(_), true) => {
                return Err(Error::invalid(
                    "give a token or noAuth, not both".to_string(),
                ));
            }
            (Some(token), false) if token.trim().is_empty() => {
                return Err(Error::invalid("the token is empty"));
            }
            (Some(token), false) => {
                super::front::http::check_token(&token)?;
                HttpAuth::Bearer(token)
            }
            (None, true) if !addr.ip().is_loopback() => {
                return Err(Error::invalid(format!(
                    "serving without a token on {addr} would let anyone on the network use \
                     every server: listen on 127.0.0.1, or keep the token"
                )));
            }
            (None, true) => HttpAuth::None,
            (None, false) => HttpAuth::generate(),
        };
        if let Some(key) = &self.session_key {
            super::relay::seal::check_key(key)?;
        }
        for (name, cap) in [
            ("maxConnections", self.max_connections),
            ("maxConnectionsPerPeer", self.max_connections_per_peer),
        ] {
            if cap == Some(0) {
                return Err(Error::invalid(format!(
                    "{name} is 0: no client could connect; give 1 or more"
                )));
            }
        }
        // Last, once everything else is known good: it may create the audit log's file.
        let serve = self.serve_options()?;
        let http = HttpOptions {
            addr,
            auth,
            allowed_origins: self.allowed_origins,
            allowed_hosts: self.allowed_hosts,
            session_key: self.session_key,
            legacy_sse: self.legacy_sse,
            max_connections: self.max_connections.unwrap_or(DEFAULT_MAX_CONNECTIONS),
            max_connections_per_peer: (self.max_connections_per_peer)
                .unwrap_or(DEFAULT_MAX_CONNECTIONS_PER_PEER),
        };
        Ok((serve, http))
    }

    /// Resource-server mode, alone: a shared token beside it would be a second way in.
    fn oauth_auth(&self) -> Result<HttpAuth> {
        if self.token.is_some() || self.no_auth {
            return Err(Error::invalid(
                "give oauth, or a token or noAuth, not both: behind OAuth every client brings \
                 its own access token",
            ));
        }
        let settings = self.oauth.clone().unwrap_or_default();
        settings.validate()?;
        Ok(HttpAuth::OAuth(settings))
    }

    fn serve_options(&self) -> Result<ServeOptions> {
        let defaults = ServeOptions::default();
        let exposure = match &self.mode {
            None => Exposure::default(),
            Some(mode) => mode.parse::<Exposure>().map_err(Error::invalid)?,
        };
        Ok(ServeOptions {
            server_name: self
                .server_name
                .clone()
                .filter(|n| !n.trim().is_empty())
                .unwrap_or(defaults.server_name),
            name_budget: self.name_budget.unwrap_or(0),
            exposure,
            auto_limit: self.auto_limit.unwrap_or(AUTO_LIMIT),
            forward_host_requests: defaults.forward_host_requests,
            profile: defaults.profile,
            audit: match &self.audit_log {
                Some(path) if path.trim().is_empty() => {
                    return Err(Error::invalid("auditLog is empty: give a file path"));
                }
                Some(path) => Some(std::sync::Arc::new(super::front::audit::AuditLog::open(
                    std::path::Path::new(path),
                )?)),
                None => None,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_loopback_with_a_generated_token() {
        let (serve, http) = HttpServeSettings::from_json("{}")
            .unwrap()
            .into_options()
            .unwrap();
        assert_eq!(http.addr, SocketAddr::from(([127, 0, 0, 1], 0)));
        assert!(matches!(&http.auth, HttpAuth::Bearer(t) if t.len() == 64));
        assert_eq!(serve.exposure, Exposure::Auto);
        assert_eq!(serve.server_name, "mcpmux");
    }

    #[test]
    fn oauth_replaces_the_generated_token() {
        let json = r#"{"oauth": {"issuer": "https://auth.example.com", "scopes": ["mcp"]}}"#;
        let (_, http) = HttpServeSettings::from_json(json)
            .unwrap()
            .into_options()
            .unwrap();
        let HttpAuth::OAuth(settings) = &http.auth else {
            panic!("not OAuth: {:?}", http.auth);
        };
        assert_eq!(settings.issuer, "https://auth.example.com");
        assert_eq!(settings.scopes, ["mcp"]);
    }

    #[test]
    fn mistakes_say_what_to_change() {
        let bad = |json: &str| {
            HttpServeSettings::from_json(json)
                .and_then(HttpServeSettings::into_options)
                .unwrap_err()
                .to_string()
        };
        assert!(bad(r#"{"addr": "localhost"}"#).contains("127.0.0.1:8808"));
        assert!(bad(r#"{"addr": "0.0.0.0:0", "noAuth": true}"#).contains("127.0.0.1"));
        assert!(bad(r#"{"token": "t", "noAuth": true}"#).contains("not both"));
        assert!(bad(r#"{"token": " "}"#).contains("empty"));
        assert!(bad(r#"{"token": "sesame"}"#).contains("fewer than 16 characters"));
        assert!(bad(r#"{"maxConnections": 0}"#).contains("give 1 or more"));
        assert!(bad(r#"{"mode": "all"}"#).contains("direct, search or auto"));
        assert!(bad(r#"{"port": 1}"#).contains("unknown field `port`"));
        assert!(bad(r#"{"sessionKey": "short"}"#).contains("openssl rand -hex 32"));
        let oauth = r#"{"oauth": {"issuer": "https://auth.example.com"}, "token": "t"}"#;
        assert!(bad(oauth).contains("not both"));
        assert!(bad(r#"{"oauth": {"issuer": "http://auth.example.com"}}"#).contains("not HTTPS"));
        assert!(
            bad(r#"{"oauth": {"issuer": "https://a.example", "scope": "x"}}"#)
                .contains("unknown field `scope`")
        );
    }
}
