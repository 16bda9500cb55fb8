//! Search over 10,000 tools: index build time and per-query latency.
//! Run with `cargo bench -p mcpmux --bench search`; prints one JSON line of figures.

use std::time::{Duration, Instant};

use mcpmux::ToolInfo;
use mcpmux::tools::search::SearchIndex;
use serde_json::json;

const VERBS: &[&str] = &[
    "get", "list", "create", "delete", "update", "search", "read", "write", "send", "fetch",
    "convert", "query", "sync", "export", "import", "render", "validate", "merge",
];
const NOUNS: &[&str] = &[
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
const PARAMS: &[&str] = &[
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

/// Deterministic pseudo-random numbers, so every run indexes the same corpus.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

fn corpus(n: usize) -> Vec<ToolInfo> {
    let mut rng = Lcg(42);
    (0..n)
        .map(|i| {
            let server = format!("server{}", i / 100);
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
            ToolInfo {
                id: mcpmux::tools::tool_id(&server, &name),
                server_id: server.clone(),
                server_name: server,
                name,
                title: None,
                description: Some(format!(
                    "{verb} a {noun} of the {} service; returns the {} as JSON.",
                    NOUNS[rng.next(NOUNS.len())],
                    NOUNS[rng.next(NOUNS.len())]
                )),
                input_schema: json!({"type": "object", "properties": props}),
                output_schema: None,
                annotations: None,
            }
        })
        .collect()
}

fn main() {
    let tools = corpus(10_000);
    let started = Instant::now();
    let index = SearchIndex::build(&tools);
    let build = started.elapsed();
    let queries = [
        "create an issue",
        "list files in a directory",
        "weather forecast",
        "send email to contact",
        "delete deployment",
        "export report as csv",
        "calend",
        "query table rows by owner",
    ];
    // Warm up, then measure each query many times.
    for q in queries {
        std::hint::black_box(index.search(q, 10));
    }
    let mut samples: Vec<Duration> = Vec::new();
    for round in 0..250 {
        for q in queries {
            let t = Instant::now();
            let hits = index.search(q, 10);
            samples.push(t.elapsed());
            if round == 0 {
                assert!(!hits.is_empty(), "no hit for {q}");
            }
        }
    }
    samples.sort();
    let pct = |p: f64| samples[((samples.len() as f64 - 1.0) * p) as usize].as_secs_f64() * 1e6;
    println!(
        "{}",
        json!({
            "bench": "search",
            "tools": tools.len(),
            "build_ms": build.as_secs_f64() * 1e3,
            "queries": samples.len(),
            "p50_us": pct(0.5),
            "p99_us": pct(0.99),
            "max_us": pct(1.0),
        })
    );
}
