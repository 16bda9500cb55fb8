//! Server records: what the config store persists for each MCP server (Elftia's McpServerRecord).

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
pub use crate::redact::{redact_log_line, redact_url, redact_urls_in};

/// How mcpmux reaches a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TransportType {
    Stdio,
    /// Streamable HTTP.
    Http,
    /// Legacy HTTP+SSE (2024-11-05).
    Sse,
    Websocket,
}

impl TransportType {
    pub fn as_str(self) -> &'static str {
        match self {
            TransportType::Stdio => "stdio",
            TransportType::Http => "http",
            TransportType::Sse => "sse",
            TransportType::Websocket => "websocket",
        }
    }
}

/// Whether a server belongs to the user (everywhere) or to one project.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    #[default]
    User,
    Local,
}

/// Whether the clients of a served pool share a server, or each gets its own connection (for a
/// stdio server, its own process): for servers that keep state for their client, such as a
/// browser, a REPL or a signed-in session.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum SessionScope {
    /// One connection for every client (the default).
    #[default]
    Shared,
    /// One connection per client (see `Pool::for_client`), at most `maxClients` at once.
    PerClient,
}

/// How many clients a `perClient` server serves at once when its record does not say.
pub const DEFAULT_MAX_CLIENTS: u32 = 8;

/// Where a record came from.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum InstallSource {
    Builtin,
    #[default]
    Manual,
    Protocol,
    #[serde(other)]
    Unknown,
}

/// Connection settings: `command`/`args`/`env`/`cwd` for stdio, `url`/`headers` otherwise.
///
/// `env` and `headers` often hold secrets, so `Debug` prints their keys only.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// For stdio: start the server with the host's whole environment (less mcpmux's own
    /// secrets) instead of the few variables every program needs; `env` is added either way.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inherit_env: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// For `type: http`: never fall back to legacy HTTP+SSE.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict_transport: bool,
    /// OAuth settings for a remote server (optional: a server that answers 401 is
    /// authorized with dynamic registration when none are given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<crate::config::oauth::OAuthSettings>,
    /// For stdio: run the server in a sandbox that grants it only what this says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::config::sandbox::Sandbox>,
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env: Vec<_> = self.env.keys().map(|k| format!("{k}=<redacted>")).collect();
        let headers: Vec<_> = self
            .headers
            .keys()
            .map(|k| format!("{k}: <redacted>"))
            .collect();
        f.debug_struct("ServerConfig")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &env)
            .field("inherit_env", &self.inherit_env)
            .field("cwd", &self.cwd)
            .field("url", &self.url.as_deref().map(redact_url))
            .field("headers", &headers)
            .field("strict_transport", &self.strict_transport)
            .field("oauth", &self.oauth)
            .field("sandbox", &self.sandbox)
            .finish()
    }
}

/// What stands in for a secret in what mcpmux shows.
pub const REDACTED: &str = "<redacted>";

impl ServerConfig {
    /// The same settings, as safe to show: env and header values, URL credentials and the
    /// OAuth secrets (client secrets, private keys, assertions, ID tokens) replaced by
    /// `<redacted>`; names, commands and arguments as they are.
    pub fn redacted(&self) -> ServerConfig {
        let hide = |map: &BTreeMap<String, String>| {
            map.keys()
                .map(|k| (k.clone(), REDACTED.to_string()))
                .collect()
        };
        let hidden = |value: &Option<String>| value.as_ref().map(|_| REDACTED.to_string());
        let oauth = self.oauth.clone().map(|mut oauth| {
            oauth.client_secret = hidden(&oauth.client_secret);
            oauth.private_key_pem = hidden(&oauth.private_key_pem);
            oauth.assertion = hidden(&oauth.assertion);
            if let Some(idp) = oauth.idp.as_mut() {
                idp.client_secret = hidden(&idp.client_secret);
                idp.id_token = hidden(&idp.id_token);
            }
            oauth
        });
        ServerConfig {
            env: hide(&self.env),
            headers: hide(&self.headers),
            url: self.url.as_deref().map(redact_url),
            oauth,
            ..self.clone()
        }
    }
}

/// Per-server time limits; unset fields fall back to the pool's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Timeouts {
    /// Connect and handshake, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_ms: Option<u64>,
    /// Each request, in milliseconds (reset by progress notifications).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_ms: Option<u64>,
    /// A call of one of the server's tools (by its own name), in milliseconds, instead of
    /// `requestMs` (reset by progress notifications), e.g. for a slow build or search tool.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tools: std::collections::BTreeMap<String, u64>,
}

impl Timeouts {
    fn is_unset(&self) -> bool {
        self.connect_ms.is_none() && self.request_ms.is_none() && self.tools.is_empty()
    }

    /// The time a call of `tool` may take between progress reports, if the record says.
    pub(crate) fn tool(&self, tool: &str) -> Option<Duration> {
        self.tools
            .get(tool)
            .copied()
            .or(self.request_ms)
            .map(Duration::from_millis)
    }
    pub(crate) fn connect(&self) -> Option<Duration> {
        self.connect_ms.map(Duration::from_millis)
    }

    /// The time any other request may take, if the record says.
    pub(crate) fn request(&self) -> Option<Duration> {
        self.request_ms.map(Duration::from_millis)
    }
}

fn yes() -> bool {
    true
}

/// One MCP server as persisted in the config store, serialized in Elftia's camelCase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerRecord {
    /// `mcp_{timestamp}_{random}`, never changes.
    pub id: String,
    /// Unique among the servers a project sees.
    pub name: String,
    #[serde(rename = "type")]
    pub transport: TransportType,
    #[serde(default)]
    pub scope: Scope,
    pub config: ServerConfig,
    #[serde(default = "yes")]
    pub is_active: bool,
    /// Saved from another host's file and not yet approved by the user: nothing of it runs
    /// (no process, no connection) until it is approved (`Pool::approve_server`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
    #[serde(default)]
    pub is_trusted: bool,
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    #[serde(default)]
    pub disabled_auto_approve_tools: Vec<String>,
    #[serde(default)]
    pub install_source: InstallSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_path: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub created_at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Timeouts::is_unset")]
    pub timeouts: Timeouts,
    /// The least severe log messages asked of this server (else the pool's `logLevel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_level: Option<crate::log_level::LogLevel>,
    /// Shared by every client of a served pool (the default), or one connection per client.
    #[serde(default, skip_serializing_if = "is_shared")]
    pub session_scope: SessionScope,
    /// For `perClient`: the most clients with a connection of their own at once (default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_clients: Option<u32>,
    /// The server's tools as they were when it was trusted (`isTrusted`): a tool that changed
    /// since, or is new, is asked about again. Set when the server is trusted; absent for a
    /// server trusted as it was added, whose tools are pinned as first seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trusted_tools: Option<crate::config::trusted_tools::TrustedTools>,
}

fn is_shared(scope: &SessionScope) -> bool {
    *scope == SessionScope::Shared
}

/// What a caller gives to add a server; everything but `name` and `config` has a default.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerInput {
    pub name: String,
    /// Inferred from `config` when absent: `command` → stdio, `ws(s)://` → websocket, else http.
    #[serde(rename = "type", default)]
    pub transport: Option<TransportType>,
    #[serde(default)]
    pub scope: Option<Scope>,
    pub config: ServerConfig,
    #[serde(default)]
    pub is_active: Option<bool>,
    /// Save it waiting for the user's approval (as an import does); an add the user typed
    /// is approved by that act (the default).
    #[serde(default)]
    pub pending: Option<bool>,
    #[serde(default)]
    pub is_trusted: Option<bool>,
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    #[serde(default)]
    pub disabled_auto_approve_tools: Vec<String>,
    #[serde(default)]
    pub install_source: Option<InstallSource>,
    #[serde(default)]
    pub project_path: Option<String>,
    #[serde(default)]
    pub timeouts: Timeouts,
    #[serde(default)]
    pub log_level: Option<crate::log_level::LogLevel>,
    #[serde(default)]
    pub session_scope: Option<SessionScope>,
    #[serde(default)]
    pub max_clients: Option<u32>,
}

/// A partial update of a record; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerPatch {
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub transport: Option<TransportType>,
    pub scope: Option<Scope>,
    pub config: Option<ServerConfig>,
    pub is_active: Option<bool>,
    /// `false` approves a server that waits for approval (see `Pool::approve_server`).
    pub pending: Option<bool>,
    pub is_trusted: Option<bool>,
    pub disabled_tools: Option<Vec<String>>,
    pub disabled_auto_approve_tools: Option<Vec<String>>,
    pub install_source: Option<InstallSource>,
    pub project_path: Option<String>,
    pub timeouts: Option<Timeouts>,
    pub log_level: Option<crate::log_level::LogLevel>,
    pub session_scope: Option<SessionScope>,
    pub max_clients: Option<u32>,
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A fresh id in Elftia's format, `mcp_{timestamp}_{random}`.
pub fn new_server_id() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    let random: String = (0..9)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    format!("mcp_{}_{random}", now_ms())
}

impl ServerInput {
    /// The record's fields this input leaves to their defaults, as the file names them: an add
    /// of a server already saved does not ask to change them (a user may have disabled it,
    /// trusted it or turned tools off since a host first added it).
    pub(crate) fn unasked(&self) -> Vec<&'static str> {
        let fields = [
            ("isActive", self.is_active.is_none()),
            ("isTrusted", self.is_trusted.is_none()),
            ("disabledTools", self.disabled_tools.is_empty()),
            (
                "disabledAutoApproveTools",
                self.disabled_auto_approve_tools.is_empty(),
            ),
            ("timeouts", self.timeouts.is_unset()),
            ("logLevel", self.log_level.is_none()),
            ("sessionScope", self.session_scope.is_none()),
            ("maxClients", self.max_clients.is_none()),
        ];
        fields
            .into_iter()
            .filter_map(|(name, unasked)| unasked.then_some(name))
            .collect()
    }

    /// Validates the input and turns it into a new record with a fresh id.
    pub fn into_record(self) -> Result<ServerRecord> {
        let transport = match self.transport {
            Some(t) => t,
            None => infer_transport(&self.config)?,
        };
        let record = ServerRecord {
            id: new_server_id(),
            name: self.name,
            transport,
            scope: self.scope.unwrap_or_default(),
            config: self.config,
            is_active: self.is_active.unwrap_or(true),
            pending: self.pending.unwrap_or(false),
            is_trusted: self.is_trusted.unwrap_or(false),
            disabled_tools: self.disabled_tools,
            disabled_auto_approve_tools: self.disabled_auto_approve_tools,
            install_source: self.install_source.unwrap_or_default(),
            project_path: self.project_path,
            created_at: now_ms(),
            updated_at: None,
            timeouts: self.timeouts,
            log_level: self.log_level,
            session_scope: self.session_scope.unwrap_or_default(),
            max_clients: self.max_clients,
            trusted_tools: None,
        };
        record.validate()?;
        Ok(record)
    }
}

/// The keys whose values differ between two JSON objects (one missing counts), in order.
fn differing_keys<'a>(
    a: &'a serde_json::Map<String, serde_json::Value>,
    b: &'a serde_json::Map<String, serde_json::Value>,
) -> Vec<&'a String> {
    let mut keys: Vec<&String> = a
        .keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

pub(crate) fn infer_transport(config: &ServerConfig) -> Result<TransportType> {
    match (&config.command, &config.url) {
        (Some(_), None) => Ok(TransportType::Stdio),
        (None, Some(url)) if url.starts_with("ws://") || url.starts_with("wss://") => {
            Ok(TransportType::Websocket)
        }
        (None, Some(_)) => Ok(TransportType::Http),
        (Some(_), Some(_)) => Err(Error::invalid(
            "config has both `command` and `url`; set `type` to choose",
        )),
        (None, None) => Err(Error::invalid("config needs a `command` or a `url`")),
    }
}

impl ServerRecord {
    /// The same record, as safe to show (see [`ServerConfig::redacted`]).
    pub fn redacted(&self) -> ServerRecord {
        ServerRecord {
            config: self.config.redacted(),
            ..self.clone()
        }
    }

    /// What the server's tool list depends on (its transport and connection settings, and
    /// what the host declares that changes a server's offer: `host_offers`, see
    /// `Host::offers_key`), as a stable hex hash: the catalog keeps it beside a list, so a list
    /// made from another config, or for a host that renders no views, is known to be stale.
    /// Stable across processes and versions (FNV-1a of the JSON).
    pub(crate) fn config_key(&self, host_offers: Option<&str>) -> String {
        let mut text = serde_json::to_string(&(self.transport, &self.config)).unwrap_or_default();
        if let Some(offers) = host_offers {
            text.push_str(offers);
        }
        format!("{:016x}", crate::stable_hash::stable_hash(&text))
    }

    /// Checks that the record can be used: a name, and the settings its transport needs.
    pub fn validate(&self) -> Result<()> {
        if self.name.trim().is_empty() {
            return Err(Error::invalid("server name must not be empty"));
        }
        if self.name.chars().any(char::is_control) {
            return Err(Error::invalid(
                "server name must not contain control characters",
            ));
        }
        match self.transport {
            TransportType::Stdio => match &self.config.command {
                Some(c) if !c.trim().is_empty() => {}
                _ => {
                    return Err(Error::invalid(format!(
                        "server '{}': a stdio server needs `config.command`",
                        self.name
                    )));
                }
            },
            t => {
                let url = self.config.url.as_deref().unwrap_or("");
                let ok = match t {
                    TransportType::Websocket => {
                        url.starts_with("ws://") || url.starts_with("wss://")
                    }
                    _ => url.starts_with("http://") || url.starts_with("https://"),
                };
                if !ok {
                    return Err(Error::invalid(format!(
                        "server '{}': a {} server needs a {} `config.url`",
                        self.name,
                        t.as_str(),
                        if t == TransportType::Websocket {
                            "ws:// or wss://"
                        } else {
                            "http:// or https://"
                        }
                    )));
                }
            }
        }
        if let Some(oauth) = &self.config.oauth {
            oauth.validate().map_err(|m| {
                Error::invalid(format!("server '{}': config.oauth: {m}", self.name))
            })?;
        }
        if let Some(sandbox) = &self.config.sandbox {
            sandbox.validate(self.transport).map_err(|m| {
                Error::invalid(format!("server '{}': config.sandbox: {m}", self.name))
            })?;
        }
        if self.scope == Scope::Local && self.project_path.is_none() {
            return Err(Error::invalid(format!(
                "server '{}': a local-scope server needs `projectPath`",
                self.name
            )));
        }
        if self.max_clients == Some(0) {
            return Err(Error::invalid(format!(
                "server '{}': maxClients must be 1 or more (it is how many clients may each \
                 have a connection of their own at once)",
                self.name
            )));
        }
        Ok(())
    }

    /// Whether anything of this server may run: it is active and not waiting for approval.
    pub fn runs(&self) -> bool {
        self.is_active && !self.pending
    }

    /// Refuses a server that waits for the user's approval, with what approving it would let
    /// run and how to approve it.
    pub(crate) fn approved(&self) -> Result<()> {
        if !self.pending {
            return Ok(());
        }
        Err(Error::invalid(format!(
            "server '{}' waits for your approval before it first runs:\n{}\napprove it with \
             `mcpmux servers approve {}` (`approve_server` in the libraries), or remove it",
            self.name,
            crate::config::consent::Consent::of(self).describe(),
            self.name
        )))
    }

    /// Whether a pool opened for `project` sees this server.
    pub fn visible_from(&self, project: Option<&str>) -> bool {
        match self.scope {
            Scope::User => true,
            Scope::Local => project.is_some() && self.project_path.as_deref() == project,
        }
    }

    /// Where `added`, the record an add of this server's name would save, differs from this
    /// saved one: the fields as the file names them (`config.args`, `isActive`), leaving out
    /// what an add never asks for (the id, the times, the provenance) and the fields in
    /// `unasked`, which the add left to their defaults. None: the add asks for this server as
    /// it is.
    pub(crate) fn differences_from(&self, added: &ServerRecord, unasked: &[&str]) -> Vec<String> {
        // An import of a server the user approved since does not take the approval back.
        const NOT_ASKED: [&str; 5] = ["id", "createdAt", "updatedAt", "installSource", "pending"];
        let fields = |r: &ServerRecord| match serde_json::to_value(r) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        let (mine, theirs) = (fields(self), fields(added));
        let mut differences = Vec::new();
        for key in differing_keys(&mine, &theirs) {
            if NOT_ASKED.contains(&key.as_str()) || unasked.contains(&key.as_str()) {
                continue;
            }
            match (&mine.get(key), &theirs.get(key)) {
                // `config`, `timeouts`: the field within.
                (Some(serde_json::Value::Object(a)), Some(serde_json::Value::Object(b))) => {
                    let inner = differing_keys(a, b).into_iter();
                    // The sandbox of a server the user approved is theirs: an import of it
                    // again does not ask for the one it would have given.
                    let inner =
                        inner.filter(|k| !(added.pending && key == "config" && *k == "sandbox"));
                    differences.extend(inner.map(|k| format!("{key}.{k}")));
                }
                _ => differences.push(key.clone()),
            }
        }
        differences
    }

    /// Whether two records would be seen together by some pool, so their names must differ.
    pub(crate) fn shares_view_with(&self, other: &ServerRecord) -> bool {
        match (self.scope, other.scope) {
            (Scope::Local, Scope::Local) => self.project_path == other.project_path,
            _ => true,
        }
    }

    /// Applies a patch; returns whether the connection settings changed.
    pub(crate) fn apply(&mut self, patch: ServerPatch) -> Result<bool> {
        let before = (self.transport, self.config.clone());
        if let Some(v) = patch.name {
            self.name = v;
        }
        if let Some(v) = patch.transport {
            self.transport = v;
        }
        if let Some(v) = patch.scope {
            self.scope = v;
        }
        if let Some(v) = patch.config {
            self.config = v;
        }
        if let Some(v) = patch.is_active {
            self.is_active = v;
        }
        if let Some(v) = patch.pending {
            self.pending = v;
        }
        if let Some(v) = patch.is_trusted {
            self.is_trusted = v;
        }
        if let Some(v) = patch.disabled_tools {
            self.disabled_tools = v;
        }
        if let Some(v) = patch.disabled_auto_approve_tools {
            self.disabled_auto_approve_tools = v;
        }
        if let Some(v) = patch.install_source {
            self.install_source = v;
        }
        if let Some(v) = patch.project_path {
            self.project_path = Some(v);
        }
        if let Some(v) = patch.timeouts {
            self.timeouts = v;
        }
        if let Some(v) = patch.log_level {
            self.log_level = Some(v);
        }
        if let Some(v) = patch.session_scope {
            self.session_scope = v;
        }
        if let Some(v) = patch.max_clients {
            self.max_clients = Some(v);
        }
        self.updated_at = Some(now_ms().max(self.created_at));
        self.validate()?;
        Ok(before != (self.transport, self.config.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redacted_config_shows_names_but_no_secret() {
        let config: ServerConfig = serde_json::from_value(serde_json::json!({
            "command": "npx", "args": ["-y", "server"], "env": {"GITHUB_TOKEN": "ghp_secret"},
            "url": "https://u:p@api.example/mcp?key=k", "headers": {"Authorization": "Bearer b"},
            "oauth": {"clientId": "c", "clientSecret": "s", "privateKeyPem": "pem",
                      "idp": {"issuer": "https://idp.example", "clientId": "i",
                              "clientSecret": "is", "idToken": "t"}},
        }))
        .unwrap();
        let shown = serde_json::to_string(&config.redacted()).unwrap();
        for secret in [
            "ghp_secret",
            ":p@",
            "key=k",
            "Bearer b",
            "\"s\"",
            "pem",
            "\"is\"",
            "\"t\"",
        ] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        for kept in [
            "GITHUB_TOKEN",
            "Authorization",
            "npx",
            "\"clientId\":\"c\"",
            "api.example",
        ] {
            assert!(shown.contains(kept), "{kept} not in {shown}");
        }
    }

    fn stdio(name: &str) -> ServerInput {
        ServerInput {
            name: name.into(),
            config: ServerConfig {
                command: Some("echo".into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn an_add_differs_from_a_saved_server_only_in_what_it_asks_for() {
        let saved = stdio("files").into_record().unwrap();
        // The same input later: another id and time, nothing asked differently.
        let differences = |saved: &ServerRecord, input: ServerInput| {
            let unasked = input.unasked();
            saved.differences_from(&input.into_record().unwrap(), &unasked)
        };
        let mut again = stdio("files");
        again.install_source = Some(InstallSource::Protocol);
        assert_eq!(differences(&saved, again), Vec::<String>::new());

        let mut other = stdio("files");
        other.config.args = vec!["--root".into(), "/srv".into()];
        other.config.env.insert("TOKEN".into(), "secret".into());
        other.is_active = Some(false);
        assert_eq!(
            differences(&saved, other),
            ["config.args", "config.env", "isActive"]
        );

        // What a user changed since (disabled it, turned a tool off) is not asked again by an
        // add that leaves it to its default; an add that names it asks for it.
        let mut changed = saved.clone();
        changed.is_active = false;
        changed.disabled_tools = vec!["write".into()];
        assert_eq!(differences(&changed, stdio("files")), Vec::<String>::new());
        let mut enable = stdio("files");
        enable.is_active = Some(true);
        assert_eq!(differences(&changed, enable), ["isActive"]);

        // The host's file imported again after the user approved the server: it stays
        // approved, and the import finds it there.
        let mut imported = stdio("files");
        imported.pending = Some(true);
        assert_eq!(differences(&saved, imported.clone()), Vec::<String>::new());
        // Nor does it ask again for the sandbox it would give one the user approved without.
        imported.config.sandbox = Some(Default::default());
        assert_eq!(differences(&saved, imported), Vec::<String>::new());
    }

    /// A field `ServerInput` gains must be sorted here on purpose: either an add always
    /// compares it with the saved server (what the server is and where it is seen), or an add
    /// that leaves it to its default does not (`unasked`), or an add never asks for it. A field
    /// in none of them would refuse the second add of a server a user has changed since.
    #[test]
    fn every_field_of_an_input_is_compared_or_left_to_the_saved_server() {
        const COMPARED: [&str; 5] = ["name", "type", "scope", "config", "projectPath"];
        const NEVER_ASKED: [&str; 2] = ["installSource", "pending"];
        let input = stdio("files");
        let unasked = input.unasked();
        let schema = serde_json::to_value(schemars::schema_for!(ServerInput)).unwrap();
        let mut fields: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        fields.sort_unstable();
        let mut sorted: Vec<&str> = [&COMPARED[..], &NEVER_ASKED, &unasked].concat();
        sorted.sort_unstable();
        assert_eq!(fields, sorted);
    }

    #[test]
    fn a_list_made_for_a_host_of_views_is_not_one_for_other_hosts() {
        let rec = stdio("files").into_record().unwrap();
        let plain = rec.config_key(None);
        assert_eq!(plain, rec.config_key(None), "stable");
        assert_ne!(
            plain,
            rec.config_key(Some("apps:text/html;profile=mcp-app"))
        );
        let mut moved = rec.clone();
        moved.config.args.push("--other".into());
        assert_ne!(plain, moved.config_key(None));
    }

    #[test]
    fn record_serializes_in_seed_camel_case() {
        let mut input = stdio("files");
        input.config.env.insert("TOKEN".into(), "s3cret".into());
        let rec = input.into_record().unwrap();
        let v = serde_json::to_value(&rec).unwrap();
        for key in [
            "id",
            "name",
            "type",
            "scope",
            "config",
            "isActive",
            "isTrusted",
            "disabledTools",
            "disabledAutoApproveTools",
            "installSource",
            "createdAt",
        ] {
            assert!(v.get(key).is_some(), "missing {key} in {v}");
        }
        assert_eq!(v["type"], "stdio");
        assert_eq!(v["scope"], "user");
        assert_eq!(v["isActive"], true);
        assert_eq!(v["isTrusted"], false);
        assert_eq!(v["installSource"], "manual");
        let id = rec.id.clone();
        let parts: Vec<_> = id.split('_').collect();
        assert_eq!(parts.len(), 3, "{id}");
        assert_eq!(parts[0], "mcp");
        assert!(parts[1].parse::<u64>().is_ok());
        let back: ServerRecord = serde_json::from_value(v).unwrap();
        assert_eq!(back, rec);
    }

    #[test]
    fn debug_never_shows_secrets() {
        let mut input = stdio("files");
        input.config.env.insert("TOKEN".into(), "s3cret-env".into());
        input
            .config
            .headers
            .insert("Authorization".into(), "Bearer s3cret-hdr".into());
        input.config.url = Some("https://user:pw@example.com/mcp?key=s3cret-q".into());
        let text = format!("{input:?}");
        assert!(!text.contains("s3cret"), "{text}");
        assert!(text.contains("TOKEN"));
    }

    #[test]
    fn validation_names_the_problem() {
        let mut bad = stdio("x");
        bad.config.command = None;
        bad.config.url = Some("ftp://nope".into());
        let err = bad.into_record().unwrap_err().to_string();
        assert!(err.contains("http:// or https://"), "{err}");
        let local = ServerInput {
            scope: Some(Scope::Local),
            ..stdio("y")
        };
        assert!(
            local
                .into_record()
                .unwrap_err()
                .to_string()
                .contains("projectPath")
        );
        assert!(stdio(" ").into_record().is_err());
    }

    #[test]
    fn transport_is_inferred() {
        let mut ws = stdio("w");
        ws.config.command = None;
        ws.config.url = Some("wss://h/x".into());
        assert_eq!(
            ws.into_record().unwrap().transport,
            TransportType::Websocket
        );
    }

    #[test]
    fn local_scope_visibility() {
        let mut a = stdio("a").into_record().unwrap();
        a.scope = Scope::Local;
        a.project_path = Some("/p".into());
        assert!(a.visible_from(Some("/p")));
        assert!(!a.visible_from(Some("/q")));
        assert!(!a.visible_from(None));
        let mut b = a.clone();
        b.project_path = Some("/q".into());
        assert!(!a.shares_view_with(&b));
        let user = stdio("u").into_record().unwrap();
        assert!(user.shares_view_with(&a));
    }

    #[test]
    fn patch_reports_connection_changes() {
        let mut rec = stdio("a").into_record().unwrap();
        let changed = rec
            .apply(ServerPatch {
                is_trusted: Some(true),
                ..Default::default()
            })
            .unwrap();
        assert!(!changed);
        assert!(rec.updated_at.is_some());
        let changed = rec
            .apply(ServerPatch {
                config: Some(ServerConfig {
                    command: Some("cat".into()),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .unwrap();
        assert!(changed);
    }
}
