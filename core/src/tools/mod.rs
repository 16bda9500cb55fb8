//! Tools: their ids (`mcp__{server}__{tool}`) and the descriptions the pool hands out (here),
//! how the pool keeps a server's list (`stored_tool`) and saves every server's (the pool's catalog),
//! ranked search ([`search`]), canonical names ([`canonical`]), the host's own tools
//! ([`host_tools`]) and what a name that names no tool may have meant (`suggest`).

pub mod canonical;
pub mod host_tools;
pub mod pins;
pub mod search;
pub(crate) mod stored_tool;
pub(crate) mod suggest;

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::shared_json::SharedJson;
use crate::tools::stored_tool::StoredTool;

/// A server's tools as last listed, shared by its cache entry and the catalog.
pub(crate) type ToolList = std::sync::Arc<Vec<StoredTool>>;

/// LLM APIs reject function names longer than this.
pub const MAX_TOOL_ID_LEN: usize = 64;

/// A tool of some server, under the id an LLM sees.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    /// `mcp__{server}__{tool}`, sanitized, at most 64 characters, unique in the pool.
    pub id: String,
    pub server_id: String,
    pub server_name: String,
    /// The tool's own name on its server.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of the tool's arguments. Schemas and the fields below are shared text
    /// ([`SharedJson`]): a listing copies none of them; `to_value()` parses one.
    pub input_schema: SharedJson,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<SharedJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<SharedJson>,
    /// Icons a host may show for the tool (`src`, `mimeType`, `sizes`, `theme`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<SharedJson>,
    /// The server's `_meta` of the tool (extensions' data, e.g. an MCP App's `ui`).
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<SharedJson>,
}

/// Describes the tools of a set of servers under pool-unique ids. Servers are taken in
/// creation order, so ids stay stable as servers are added; disabled tools are left out.
pub(crate) fn describe(
    lists: Vec<(crate::config::record::ServerRecord, ToolList)>,
) -> Vec<ToolInfo> {
    name_tools(&lists)
        .into_iter()
        .map(|(list, tool, id)| {
            let (record, tools) = &lists[list];
            tools[tool].info(id, &record.id, &record.name)
        })
        .collect()
}

/// The tools [`describe`] gives, as places: each one's list in `lists`, its place in that
/// list, and its id, in `describe`'s order.
pub(crate) fn name_tools(
    lists: &[(crate::config::record::ServerRecord, ToolList)],
) -> Vec<(usize, usize, String)> {
    let mut order: Vec<usize> = (0..lists.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&lists[a].0, &lists[b].0);
        (a.created_at, &a.id).cmp(&(b.created_at, &b.id))
    });
    let places: Vec<(usize, usize)> = order
        .into_iter()
        .flat_map(|list| {
            let (record, tools) = &lists[list];
            tools
                .iter()
                .enumerate()
                .filter(|(_, t)| !record.disabled_tools.iter().any(|d| d == t.name()))
                .map(move |(tool, _)| (list, tool))
        })
        .collect();
    let ids = assign_ids(places.iter().map(|&(list, tool)| {
        let (record, tools) = &lists[list];
        (record.id.as_str(), record.name.as_str(), tools[tool].name())
    }));
    places
        .into_iter()
        .zip(ids)
        .map(|((list, tool), id)| (list, tool, id))
        .collect()
}

/// Characters outside `[A-Za-z0-9_-]` become `_`.
pub fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    push_sanitized(&mut out, s);
    out
}

/// [`sanitize`] onto the end of `out`: ids are built in one allocation, as every listing
/// names every tool again.
fn push_sanitized(out: &mut String, s: &str) {
    out.extend(s.chars().map(|c| {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            c
        } else {
            '_'
        }
    }));
}

/// The id prefix shared by every tool of servers with this name.
pub fn server_prefix(server_name: &str) -> String {
    format!("mcp__{}__", sanitize(server_name))
}

pub(crate) use crate::stable_hash::stable_hash;

/// Cuts an over-long id to `max` and appends a hash of the whole, so distinct long ids stay
/// distinct.
fn fit(id: String, max: usize) -> String {
    if id.len() <= max {
        return id;
    }
    let suffix = format!("_{:08x}", stable_hash(&id) as u32);
    // Sanitized ids are ASCII, so any byte index is a char boundary.
    format!("{}{suffix}", &id[..max - suffix.len()])
}

/// The id a tool gets when nothing conflicts with it.
pub fn tool_id(server_name: &str, tool_name: &str) -> String {
    fit(
        format!("{}{}", server_prefix(server_name), sanitize(tool_name)),
        MAX_TOOL_ID_LEN,
    )
}

/// Assigns ids to `(server_id, server_name, tool_name)` entries, in order. An entry whose plain
/// id is already taken (two servers whose names sanitize alike, or two tools that do) gets a
/// suffix hashed from its server id and tool name, so no tool is ever lost and each keeps its
/// id for as long as the order of servers is stable.
pub(crate) fn assign_ids<'a>(
    entries: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
) -> Vec<String> {
    assign_names(entries, "mcp__", MAX_TOOL_ID_LEN)
}

/// [`assign_ids`] with another lead than `mcp__` and another length limit: the names
/// `lead{server}__{tool}`, each at most `max` bytes (at least 16).
pub(crate) fn assign_names<'a>(
    entries: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
    lead: &str,
    max: usize,
) -> Vec<String> {
    let entries = entries.into_iter();
    // The hashes of the ids given so far: a hash seen before is checked against the ids
    // themselves, so no id is copied into a set.
    let mut taken = HashSet::with_capacity(entries.size_hint().0);
    let mut out = Vec::with_capacity(entries.size_hint().0);
    for (server_id, server_name, tool_name) in entries {
        let base = || {
            let mut base =
                String::with_capacity(lead.len() + server_name.len() + 2 + tool_name.len());
            base.push_str(lead);
            push_sanitized(&mut base, server_name);
            base.push_str("__");
            push_sanitized(&mut base, tool_name);
            base
        };
        let mut id = fit(base(), max);
        let mut salt = 0u32;
        while !taken.insert(stable_hash(&id)) && out.contains(&id) {
            let key = format!("{server_id}/{tool_name}/{salt}");
            let tag = format!("_{:06x}", stable_hash(&key) & 0xff_ffff);
            // Sanitized ids are ASCII, so byte truncation is safe.
            let mut stem = base();
            stem.truncate(max - tag.len());
            id = format!("{stem}{tag}");
            salt += 1;
        }
        out.push(id);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_sanitized() {
        assert_eq!(
            tool_id("my server", "get.weather"),
            "mcp__my_server__get_weather"
        );
        assert_eq!(tool_id("a-b", "c_d"), "mcp__a-b__c_d");
        assert_eq!(tool_id("héllo", "x"), "mcp__h_llo__x");
    }

    #[test]
    fn long_ids_are_cut_with_a_stable_hash() {
        let long = "t".repeat(100);
        let a = tool_id("server", &long);
        assert_eq!(a.len(), MAX_TOOL_ID_LEN);
        assert_eq!(a, tool_id("server", &long));
        let b = tool_id("server", &format!("{long}2"));
        assert_ne!(a, b);
        assert!(a.starts_with("mcp__server__ttt"));
        assert!(
            a.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        );
    }

    #[test]
    fn conflicts_never_lose_a_tool() {
        let ids = assign_ids([
            ("s1", "a.b", "echo"),
            ("s2", "a_b", "echo"),
            ("s2", "a_b", "x.y"),
            ("s2", "a_b", "x_y"),
        ]);
        assert_eq!(ids[0], "mcp__a_b__echo");
        assert_ne!(ids[1], ids[0]);
        assert!(ids[1].starts_with("mcp__a_b__echo_"));
        assert_eq!(ids[2], "mcp__a_b__x_y");
        assert_ne!(ids[3], ids[2]);
        let set: HashSet<_> = ids.iter().collect();
        assert_eq!(set.len(), 4);
        // Stable: the same input gives the same ids.
        assert_eq!(
            ids,
            assign_ids([
                ("s1", "a.b", "echo"),
                ("s2", "a_b", "echo"),
                ("s2", "a_b", "x.y"),
                ("s2", "a_b", "x_y"),
            ])
        );
    }

    #[test]
    fn conflicts_between_long_ids_stay_within_the_limit() {
        let long = "z".repeat(90);
        let ids = assign_ids([("s1", "srv", long.as_str()), ("s2", "srv", long.as_str())]);
        assert_ne!(ids[0], ids[1]);
        assert!(ids.iter().all(|i| i.len() <= MAX_TOOL_ID_LEN), "{ids:?}");
    }
}
