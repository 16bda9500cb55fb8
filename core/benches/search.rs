//! Search over 10,000 tools: index build time and per-query latency.
//! Run with `cargo bench -p mcpmux --bench search`; prints one JSON line of figures.

use std::time::{Duration, Instant};

use mcpmux::ToolInfo;
use mcpmux::tools::search::SearchIndex;
use serde_json::json;

#[path = "support/corpus.rs"]
mod corpus;

fn tool_infos(n: usize) -> Vec<ToolInfo> {
    let mut rng = corpus::Lcg(42);
    (0..n)
        .map(|i| {
            let server = format!("server{}", i / 100);
            let (name, description, input_schema) = corpus::tool(&mut rng, i);
            ToolInfo {
                id: mcpmux::tools::tool_id(&server, &name),
                server_id: server.clone(),
                server_name: server,
                name,
                description: Some(description),
                input_schema: input_schema.into(),
                ..Default::default()
            }
        })
        .collect()
}

fn main() {
    let tools = tool_infos(10_000);
    let started = Instant::now();
    let index = SearchIndex::build(&tools);
    let build = started.elapsed();
    let queries = corpus::QUERIES;
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
