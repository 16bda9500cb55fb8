//! The names a served fleet shows its clients. A tool is always `server__tool` and a prompt
//! `server__prompt`, however many servers there are (a name never changes because a second
//! server was added), cut to the 64 characters clients allow less what the client puts in
//! front (`name_budget`: Claude Code's `mcp__mcpmux__`, for one); names that meet (two servers
//! whose names sanitize alike, a cut that lands on another name) get a hashed suffix, so none
//! is lost or shadowed. A resource URI is wrapped as `mcpmux:{server}/{uri}` so that a read
//! finds its server again; a resource template's URI is wrapped the same way, so the URIs a
//! client fills in from it are wrapped too.

use std::collections::HashMap;

use crate::pool::PromptInfo;
use crate::tools::{MAX_TOOL_ID_LEN, ToolInfo, assign_names, sanitize};

/// The scheme of wrapped resource URIs.
const RESOURCE_SCHEME: &str = "mcpmux:";
/// The scheme of an MCP App's view, which a wrapped view keeps.
const VIEW_SCHEME: &str = "ui://";
/// A wrapped view's authority starts so, then names its server: `ui://mcpmux.KEY/...`.
const VIEW_HOST_PREFIX: &str = "mcpmux.";

/// The shortest tool name budget left after a client's prefix: room for a server, a tool and
/// a collision suffix.
pub const MIN_NAME_LEN: usize = 24;

/// The longest name a client may be given, for a client that puts `name_budget` characters in
/// front of it (clamped so that names stay usable).
pub fn max_name_len(name_budget: usize) -> usize {
    MAX_TOOL_ID_LEN
        .saturating_sub(name_budget)
        .max(MIN_NAME_LEN)
}

/// Served tool names for the pool's tools, in the order given; the pool's ids stay the key to
/// call them by.
pub fn tool_names(tools: &[ToolInfo], max_len: usize) -> Vec<String> {
    let mut order: Vec<usize> = (0..tools.len()).collect();
    // Names are given in a fixed order, so that the one that keeps the plain name in a clash is
    // the same on every replica and after every restart.
    order.sort_by(|&a, &b| {
        let (a, b) = (&tools[a], &tools[b]);
        (&a.server_name, &a.server_id, &a.name).cmp(&(&b.server_name, &b.server_id, &b.name))
    });
    let assigned = assign_names(
        order.iter().map(|&i| {
            let t = &tools[i];
            (
                t.server_id.as_str(),
                t.server_name.as_str(),
                t.name.as_str(),
            )
        }),
        "",
        max_len,
    );
    let mut out = vec![String::new(); tools.len()];
    for (i, name) in order.into_iter().zip(assigned) {
        out[i] = name;
    }
    out
}

/// Served prompt names, as for tools.
pub fn prompt_names(prompts: &[PromptInfo], max_len: usize) -> Vec<String> {
    let mut order: Vec<usize> = (0..prompts.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&prompts[a], &prompts[b]);
        (&a.server_name, &a.server_id, &a.prompt.name).cmp(&(
            &b.server_name,
            &b.server_id,
            &b.prompt.name,
        ))
    });
    let assigned = assign_names(
        order.iter().map(|&i| {
            let p = &prompts[i];
            (
                p.server_id.as_str(),
                p.server_name.as_str(),
                p.prompt.name.as_str(),
            )
        }),
        "",
        max_len,
    );
    let mut out = vec![String::new(); prompts.len()];
    for (i, name) in order.into_iter().zip(assigned) {
        out[i] = name;
    }
    out
}

/// Each server's part of a wrapped resource URI: its sanitized name, or its id when another
/// server's name sanitizes alike (ids are unique and never contain `/`).
pub fn resource_keys<'a>(
    servers: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> HashMap<String, String> {
    let servers: Vec<(&str, &str)> = servers.into_iter().collect();
    let mut uses: HashMap<String, usize> = HashMap::new();
    for (_, name) in &servers {
        *uses.entry(sanitize(name)).or_default() += 1;
    }
    servers
        .into_iter()
        .map(|(id, name)| {
            let key = sanitize(name);
            let key = if uses[&key] == 1 { key } else { id.to_string() };
            (id.to_string(), key)
        })
        .collect()
}

/// `uri` of the server with resource key `key`, as clients see it.
pub fn wrap_uri(key: &str, uri: &str) -> String {
    // An MCP App's view keeps the `ui://` scheme: hosts render only such addresses.
    match uri.strip_prefix(VIEW_SCHEME) {
        Some(rest) => format!("{VIEW_SCHEME}{VIEW_HOST_PREFIX}{key}/{rest}"),
        None => format!("{RESOURCE_SCHEME}{key}/{uri}"),
    }
}

/// The resource key and the server's own URI of a wrapped URI.
pub fn unwrap_uri(wrapped: &str) -> Option<(&str, String)> {
    if let Some(view) = wrapped.strip_prefix(VIEW_SCHEME) {
        let (key, rest) = view.strip_prefix(VIEW_HOST_PREFIX)?.split_once('/')?;
        return (!key.is_empty() && !rest.is_empty())
            .then(|| (key, format!("{VIEW_SCHEME}{rest}")));
    }
    let rest = wrapped.strip_prefix(RESOURCE_SCHEME)?;
    let (key, uri) = rest.split_once('/')?;
    (!key.is_empty() && !uri.is_empty()).then(|| (key, uri.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(server_id: &str, server: &str, name: &str) -> ToolInfo {
        ToolInfo {
            id: format!("mcp__{server}__{name}"),
            server_id: server_id.into(),
            server_name: server.into(),
            name: name.into(),
            ..ToolInfo::default()
        }
    }

    #[test]
    fn one_server_or_many_a_name_is_server_then_tool() {
        let one = [tool("s1", "files", "read")];
        assert_eq!(tool_names(&one, 64), ["files__read"]);
        let two = [tool("s2", "git", "log"), tool("s1", "files", "read")];
        assert_eq!(tool_names(&two, 64), ["git__log", "files__read"]);
    }

    #[test]
    fn names_fit_the_budget_and_clashes_keep_every_tool() {
        let long = "x".repeat(80);
        let tools = [
            tool("s1", "a.b", "echo"),
            tool("s2", "a_b", "echo"),
            tool("s1", "a.b", &long),
            tool("s1", "a.b", &format!("{long}y")),
        ];
        let max = max_name_len("mcp__mcpmux__".len());
        let names = tool_names(&tools, max);
        assert!(names.iter().all(|n| n.len() <= max), "{names:?}");
        let distinct: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(distinct.len(), tools.len(), "{names:?}");
        assert_eq!(names[0], "a_b__echo");
        assert!(names[1].starts_with("a_b__echo_"));
        // The same tools in another order get the same names.
        let mut reversed = tools.to_vec();
        reversed.reverse();
        let mut again = tool_names(&reversed, max);
        again.reverse();
        assert_eq!(again, names);
    }

    #[test]
    fn wrapped_uris_come_back() {
        let keys = resource_keys([("s1", "my files"), ("s2", "my.files"), ("s3", "git")]);
        assert_eq!(keys["s1"], "s1");
        assert_eq!(keys["s2"], "s2");
        assert_eq!(keys["s3"], "git");
        let wrapped = wrap_uri("git", "file:///a/b?c=d");
        assert_eq!(wrapped, "mcpmux:git/file:///a/b?c=d");
        assert_eq!(
            unwrap_uri(&wrapped),
            Some(("git", "file:///a/b?c=d".into()))
        );
        assert_eq!(unwrap_uri("file:///a"), None);
        assert_eq!(unwrap_uri("mcpmux:git"), None);
    }

    #[test]
    fn a_wrapped_view_keeps_the_scheme_hosts_render() {
        let wrapped = wrap_uri("time", "ui://server-time/mcp-app.html");
        assert_eq!(wrapped, "ui://mcpmux.time/server-time/mcp-app.html");
        assert_eq!(
            unwrap_uri(&wrapped),
            Some(("time", "ui://server-time/mcp-app.html".into()))
        );
        // A view the fleet did not wrap names no server of it.
        assert_eq!(unwrap_uri("ui://server-time/mcp-app.html"), None);
        assert_eq!(unwrap_uri("ui://mcpmux.time"), None);
    }
}
