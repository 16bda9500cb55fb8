//! What a server says of itself when it connects: who it is (`serverInfo`: name, version,
//! title, description, icons, website), how its tools are meant to be used (`instructions`),
//! what it offers (`capabilities`) and the protocol version agreed. A desktop host shows the
//! name and icon and gives the instructions to its model; the pool keeps the last of each
//! server across reconnects and in the catalog, so it is known before connecting.

use rmcp::model::ServerPeerInfo as Announced;
use serde::{Deserialize, Serialize};

/// What a server said of itself at its last connection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    /// `name` and `version`, with `title`, `description`, `icons` and `websiteUrl` when the
    /// server gives them, as it sent them (a 2026-07-28 server may leave it out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<serde_json::Value>,
    /// How to use the server's tools, for a model's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// What the server offers (`tools`, `resources`, `prompts`, `logging`, `completions`,
    /// `extensions`, ...), as it sent them.
    pub capabilities: serde_json::Value,
    pub protocol_version: String,
}

impl ServerInfo {
    /// From the handshake's answer (`initialize` or `server/discover`).
    pub(crate) fn from_handshake(announced: &Announced) -> ServerInfo {
        let value = |v: serde_json::Result<serde_json::Value>| v.unwrap_or_default();
        ServerInfo {
            server_info: announced
                .server_info
                .as_ref()
                .and_then(|i| serde_json::to_value(i).ok()),
            instructions: announced
                .instructions
                .clone()
                .filter(|i| !i.trim().is_empty()),
            capabilities: value(serde_json::to_value(&announced.capabilities)),
            protocol_version: announced.protocol_version.to_string(),
        }
    }
}

#[cfg(feature = "agent")]
/// The most of a server's instructions the agent's system prompt takes by default.
pub const INSTRUCTIONS_CHARS: usize = 2_000;

#[cfg(feature = "agent")]
/// `text` cut to at most `max` characters, with a marker that says so.
pub(crate) fn bounded(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((cut, _)) => format!("{} [instructions cut]", text[..cut].trim_end()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_instructions_are_cut_with_a_marker() {
        assert_eq!(bounded("  short  ", 10), "short");
        assert_eq!(bounded("ééééé", 5), "ééééé");
        assert_eq!(bounded("ééééé é", 5), "ééééé [instructions cut]");
    }

    #[test]
    fn a_handshake_answer_becomes_what_the_host_sees() {
        let announced: Announced = serde_json::from_value(serde_json::json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "files", "version": "1.2.0", "title": "Files",
                           "icons": [{"src": "https://example.com/f.png"}]},
            "instructions": "Use read_file for text files."
        }))
        .unwrap();
        let info = ServerInfo::from_handshake(&announced);
        let about = info.server_info.as_ref().unwrap();
        assert_eq!(about["title"], "Files");
        assert_eq!(about["icons"][0]["src"], "https://example.com/f.png");
        assert_eq!(
            info.instructions.as_deref(),
            Some("Use read_file for text files.")
        );
        assert_eq!(info.capabilities["tools"]["listChanged"], true);
        assert_eq!(info.protocol_version, "2025-11-25");
    }
}
