//! The synthetic tool corpus the benchmarks list and search: names, descriptions and
//! parameters drawn from a small vocabulary by a seeded generator, and the queries run over
//! it. Shared by core's search bench, the bench server and the bench's scale runs (each
//! includes this file), so their figures are over the same kind of tools.
#![allow(dead_code, reason = "each includer uses a part")]

use serde_json::{Value, json};

pub const VERBS: &[&str] = &[
    "get", "list", "create", "delete", "update", "search", "read", "write", "send", "fetch",
    "convert", "query", "sync", "export", "import", "render", "validate", "merge",
];
pub const NOUNS: &[&str] = &[
    "file",
    "directory",
    "issue",
    "pull_request",
    "commit",
    "branch",
    "user",
    "message",
    "channel",
    "invoice",
    "customer",
    "order",
    "ticket",
    "calendar_event",
    "email",
    "contact",
    "table",
    "row",
    "document",
    "page",
    "image",
    "chart",
    "metric",
    "alert",
    "deployment",
    "container",
    "secret",
    "bucket",
    "object",
    "queue",
    "job",
    "report",
    "weather_forecast",
];
pub const PARAMS: &[&str] = &[
    "id",
    "path",
    "query",
    "limit",
    "owner",
    "repo",
    "title",
    "body",
    "timezone",
    "start",
    "end",
    "format",
    "recursive",
    "labels",
    "assignee",
    "channel_id",
    "text",
    "url",
];

/// The queries the search figures are measured with.
pub const QUERIES: &[&str] = &[
    "create an issue",
    "list files in a directory",
    "weather forecast",
    "send email to contact",
    "delete deployment",
    "export report as csv",
    "calend",
    "query table rows by owner",
];

/// Deterministic pseudo-random numbers.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

/// One synthetic tool, number `i`: its name, description and input schema.
pub fn tool(rng: &mut Lcg, i: usize) -> (String, String, Value) {
    let (verb, noun) = (VERBS[rng.next(VERBS.len())], NOUNS[rng.next(NOUNS.len())]);
    let name = format!("{verb}_{noun}_{i}");
    let props: serde_json::Map<_, _> = (0..3)
        .map(|_| {
            (
                PARAMS[rng.next(PARAMS.len())].to_string(),
                json!({"type": "string"}),
            )
        })
        .collect();
    let description = format!(
        "{verb} a {noun} of the {} service; returns the {} as JSON.",
        NOUNS[rng.next(NOUNS.len())],
        NOUNS[rng.next(NOUNS.len())]
    );
    (
        name,
        description,
        json!({"type": "object", "properties": props}),
    )
}
