//! What the user is shown before a server they did not type in themselves first runs (one
//! saved from another host's file): the exact command it would run, as the MCP security best
//! practices ask of a one-click setup. Values of its environment and headers are never shown,
//! only their names.

use serde::{Deserialize, Serialize};

use crate::config::record::{ServerRecord, TransportType, redact_url};
use crate::config::sandbox::{Network, Sandbox};

/// What running a server would do, for the user to approve: its command and arguments (or
/// its URL), the names of what it is given, and its sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Consent {
    pub server_id: String,
    pub server_name: String,
    /// The program a stdio server runs, exactly as it would be started (no shell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// A remote server's address, credentials in it redacted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The names of the environment variables it is given (never their values).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_keys: Vec<String>,
    /// The names of the HTTP headers it is sent (never their values).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub header_keys: Vec<String>,
    /// It starts with the host's whole environment (less mcpmux's own secrets).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inherit_env: bool,
    /// The sandbox it would run in; none: the user's full rights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<Sandbox>,
}

impl Consent {
    /// What approving `record` would let run.
    pub fn of(record: &ServerRecord) -> Consent {
        let config = &record.config;
        let stdio = record.transport == TransportType::Stdio;
        Consent {
            server_id: record.id.clone(),
            server_name: record.name.clone(),
            command: config.command.clone().filter(|_| stdio),
            args: if stdio {
                config.args.clone()
            } else {
                Vec::new()
            },
            cwd: config.cwd.clone().filter(|_| stdio),
            url: config.url.as_deref().filter(|_| !stdio).map(redact_url),
            env_keys: config.env.keys().cloned().collect(),
            header_keys: config.headers.keys().cloned().collect(),
            inherit_env: config.inherit_env,
            sandbox: config.sandbox.clone(),
        }
    }

    /// The same, as lines for a person: what runs, with what, in what.
    pub fn describe(&self) -> String {
        let mut lines = Vec::new();
        match (&self.command, &self.url) {
            (Some(command), _) => {
                let words = std::iter::once(command).chain(&self.args);
                let shown: Vec<String> = words.map(|w| quoted(w)).collect();
                lines.push(format!("runs: {}", shown.join(" ")));
            }
            (None, Some(url)) => lines.push(format!("connects to: {url}")),
            (None, None) => {}
        }
        if let Some(cwd) = &self.cwd {
            lines.push(format!("in: {cwd}"));
        }
        let environment = match (self.inherit_env, self.env_keys.is_empty()) {
            (true, _) => Some("your whole environment (less mcpmux's own secrets)".to_owned()),
            (false, false) => Some(format!("{} (values not shown)", self.env_keys.join(", "))),
            (false, true) => None,
        };
        if let Some(environment) = environment {
            lines.push(format!("with: {environment}"));
        }
        if !self.header_keys.is_empty() {
            let headers = self.header_keys.join(", ");
            lines.push(format!("headers: {headers} (values not shown)"));
        }
        if self.command.is_some() {
            lines.push(format!("sandbox: {}", sandbox_words(self.sandbox.as_ref())));
        }
        lines.join("\n")
    }
}

/// A word as a shell user would type it, quoted when it holds a space or a quote.
fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@+,%~".contains(c));
    match plain {
        true => word.to_owned(),
        false => format!("'{}'", word.replace('\'', r"'\''")),
    }
}

fn sandbox_words(sandbox: Option<&Sandbox>) -> String {
    let Some(sandbox) = sandbox else {
        return "none: it runs with your full rights".to_owned();
    };
    let mut parts = Vec::new();
    let paths = |list: &[String]| match list.is_empty() {
        true => "nothing".to_owned(),
        false => list.join(", "),
    };
    parts.push(format!("reads {}", paths(&sandbox.read)));
    parts.push(format!("writes {}", paths(&sandbox.write)));
    parts.push(match sandbox.network {
        Network::None => "no network".to_owned(),
        Network::All => "the whole network".to_owned(),
    });
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::record::{ServerConfig, ServerInput};

    fn record(config: ServerConfig) -> ServerRecord {
        let input = ServerInput {
            name: "github".into(),
            config,
            ..Default::default()
        };
        input.into_record().unwrap()
    }

    #[test]
    fn the_command_is_shown_exactly_and_secrets_by_name_only() {
        let mut config = ServerConfig {
            command: Some("npx".into()),
            args: vec!["-y".into(), "@scope/server".into(), "my notes".into()],
            ..Default::default()
        };
        config
            .env
            .insert("GITHUB_TOKEN".into(), "ghp_secret".into());
        let consent = Consent::of(&record(config));
        let shown = consent.describe();
        assert_eq!(
            shown,
            "runs: npx -y @scope/server 'my notes'\n\
             with: GITHUB_TOKEN (values not shown)\n\
             sandbox: none: it runs with your full rights"
        );
        assert!(
            !serde_json::to_string(&consent)
                .unwrap()
                .contains("ghp_secret")
        );
    }

    #[test]
    fn a_remote_server_shows_its_url_without_credentials_and_its_header_names() {
        let mut config = ServerConfig {
            url: Some("https://user:pw@mcp.example.com/mcp?key=s3cret".into()),
            ..Default::default()
        };
        config
            .headers
            .insert("Authorization".into(), "Bearer t0ken".into());
        let shown = Consent::of(&record(config)).describe();
        assert!(shown.starts_with("connects to: https://"), "{shown}");
        assert!(
            shown.contains("headers: Authorization (values not shown)"),
            "{shown}"
        );
        for secret in ["pw", "s3cret", "t0ken"] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }
}
