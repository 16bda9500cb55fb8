//! Profiles: named views of the fleet, for clients that should see less of it than everything
//! (a coding assistant that gets the file and git servers only, a client whose tool cap is
//! small, one server passed through alone). They live in the config file beside the servers,
//! under `profiles`, and are served as plain URLs, `/mcp/p/NAME`, or with `--profile NAME` on
//! stdio:
//!
//! ```json
//! "profiles": {
//!   "coding": {"servers": ["files", "git"], "deny": ["git__push*"], "mode": "direct",
//!              "tools": {"files__read_file": {"description": "Read a file of the project"}}},
//!   "time": {"servers": ["time"], "passThrough": true}
//! }
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::serve::view::exposure::Exposure;

/// The config file's key that holds the profiles.
pub const PROFILES_KEY: &str = "profiles";

/// One view of the fleet: which servers, which of their tools, and how they are shown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Profile {
    /// Its name in the config (set when it is read; none for the whole fleet).
    #[serde(skip)]
    pub name: Option<String>,
    /// The servers served, by name (default: every server).
    #[serde(default)]
    pub servers: Option<Vec<String>>,
    /// Served tool names a client may see and call; `*` matches any run of characters
    /// (default: every tool).
    #[serde(default)]
    pub allow: Vec<String>,
    /// Served tool names hidden from clients, as `allow`; wins over it.
    #[serde(default)]
    pub deny: Vec<String>,
    /// `direct`, `search` or `auto` (default: what the server was started with).
    #[serde(default)]
    pub mode: Option<String>,
    /// The one server's tools, prompts and resources under their own names and URIs, with no
    /// `server__` prefix: for a profile of exactly one server.
    #[serde(default)]
    pub pass_through: bool,
    /// What to show instead of a tool's own description or title, by served tool name.
    #[serde(default)]
    pub tools: BTreeMap<String, ToolOverride>,
}

/// A tool shown otherwise than its server describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolOverride {
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
}

impl Profile {
    /// Whether the server named `name` is in view.
    pub fn serves(&self, name: &str) -> bool {
        self.servers
            .as_ref()
            .is_none_or(|servers| servers.iter().any(|s| s == name))
    }

    /// Whether a client may see and call the tool served as `name`.
    pub fn shows(&self, name: &str) -> bool {
        let allowed = self.allow.is_empty() || self.allow.iter().any(|p| matches(p, name));
        allowed && !self.deny.iter().any(|p| matches(p, name))
    }

    /// The mode this profile asks for, if it asks.
    pub fn exposure(&self) -> Option<Exposure> {
        self.mode.as_deref().and_then(|m| m.parse().ok())
    }

    /// What to change for this profile (named `name`) to be served, if anything.
    fn check(&self, name: &str) -> Result<()> {
        let bad = |why: String| Err(Error::invalid(format!("profile '{name}': {why}")));
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return bad(
                "a profile name is a path segment of its URL: use letters, digits, '-', '_' \
                 and '.'"
                    .into(),
            );
        }
        if let Some(mode) = &self.mode
            && let Err(why) = mode.parse::<Exposure>()
        {
            return bad(why);
        }
        if self.pass_through && self.servers.as_ref().is_none_or(|s| s.len() != 1) {
            return bad(
                "passThrough serves one server's own names: list exactly one server in \
                        `servers`"
                    .into(),
            );
        }
        Ok(())
    }
}

/// `*` matches any run of characters; everything else matches itself.
fn matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The profiles of the config file at `path` (none when the file or the key is missing).
pub fn load(path: &Path) -> Result<BTreeMap<String, Profile>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
    };
    let mut top: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text)
        .map_err(|e| Error::invalid(format!("{} is not valid JSON: {e}", path.display())))?;
    let Some(profiles) = top.remove(PROFILES_KEY) else {
        return Ok(BTreeMap::new());
    };
    let profiles: BTreeMap<String, Profile> = serde_json::from_value(profiles).map_err(|e| {
        Error::invalid(format!(
            "the `{PROFILES_KEY}` of {} are not valid: {e}",
            path.display()
        ))
    })?;
    let mut profiles = profiles;
    for (name, profile) in &mut profiles {
        profile.check(name)?;
        profile.name = Some(name.clone());
    }
    Ok(profiles)
}

/// The profile named `name` in the config file at `path`, or what to change.
pub fn find(path: &Path, name: &str) -> Result<Profile> {
    let mut profiles = load(path)?;
    profiles.remove(name).ok_or_else(|| {
        let known: Vec<&String> = profiles.keys().collect();
        Error::invalid(format!(
            "no profile named '{name}' in {} (profiles there: {known:?}); add it under \
             `{PROFILES_KEY}`",
            path.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_with_stars() {
        assert!(matches("git__*", "git__push"));
        assert!(matches("*__read*", "files__read_file"));
        assert!(matches("exact", "exact"));
        assert!(!matches("exact", "exact2"));
        assert!(!matches("git__*", "files__git__x"));
        assert!(matches("*", "anything"));
        assert!(matches("a*b*c", "a_b_c"));
        assert!(!matches("a*b*c", "a_c_b"));
    }

    #[test]
    fn deny_wins_over_allow() {
        let profile = Profile {
            allow: vec!["git__*".into()],
            deny: vec!["git__push*".into()],
            ..Profile::default()
        };
        assert!(profile.shows("git__status"));
        assert!(!profile.shows("git__push"));
        assert!(!profile.shows("files__read"));
        assert!(Profile::default().shows("anything"));
    }

    #[test]
    fn mistakes_in_the_config_say_what_to_change() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("servers.json");
        let bad = |profiles: serde_json::Value| {
            std::fs::write(
                &path,
                serde_json::json!({"mcpServers": [], "profiles": profiles}).to_string(),
            )
            .unwrap();
            load(&path).unwrap_err().to_string()
        };
        assert!(bad(serde_json::json!({"a": {"passThrough": true}})).contains("exactly one"));
        assert!(bad(serde_json::json!({"a": {"mode": "all"}})).contains("direct, search or auto"));
        assert!(bad(serde_json::json!({"a b": {}})).contains("path segment"));
        assert!(bad(serde_json::json!({"a": {"server": ["x"]}})).contains("unknown field"));
        std::fs::write(&path, r#"{"mcpServers": [], "profiles": {"one": {}}}"#).unwrap();
        let missing = find(&path, "two").unwrap_err().to_string();
        assert!(
            missing.contains("\"one\"") && missing.contains("two"),
            "{missing}"
        );
        assert!(load(&dir.path().join("none.json")).unwrap().is_empty());
    }
}
