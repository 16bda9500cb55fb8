//! What a served pool tells the people who run it: `/status` (each server's state, error,
//! restarts and pid, as JSON) and `/metrics` (Prometheus: calls, errors and latency per server
//! and tool, restarts per server), counted from the pool's own events.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::events::{ConnectionState, Event};
use crate::pool::Pool;

/// Upper bounds of the latency histogram's buckets, in seconds.
const BUCKETS: [f64; 13] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// Calls of one tool.
#[derive(Default, Clone)]
struct Calls {
    count: u64,
    errors: u64,
    seconds: f64,
    /// Calls that took at most each of [`BUCKETS`] (not cumulative here).
    buckets: [u64; BUCKETS.len()],
}

impl Calls {
    fn record(&mut self, seconds: f64, ok: bool) {
        self.count += 1;
        if !ok {
            self.errors += 1;
        }
        self.seconds += seconds;
        if let Some(i) = BUCKETS.iter().position(|b| seconds <= *b) {
            self.buckets[i] += 1;
        }
    }
}

/// Counts kept since the server started serving.
#[derive(Default)]
pub struct Metrics {
    /// By (server id, tool name).
    calls: Mutex<HashMap<(String, String), Calls>>,
    /// Connections made, by server id (restarts are the ones after the first).
    connections: Mutex<HashMap<String, u64>>,
}

impl Metrics {
    /// Counts `pool`'s events until it closes.
    pub fn watch(pool: &Pool) -> Arc<Metrics> {
        let metrics = Arc::new(Metrics::default());
        let mut events = pool.events();
        let counting = Arc::downgrade(&metrics);
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                let Some(metrics) = counting.upgrade() else {
                    return;
                };
                metrics.count(&event);
            }
        });
        metrics
    }

    fn count(&self, event: &Event) {
        match event {
            Event::ToolCalled {
                server_id,
                tool_name,
                duration_ms,
                success,
                ..
            } => {
                let key = (server_id.clone(), tool_name.clone());
                self.calls
                    .lock()
                    .unwrap()
                    .entry(key)
                    .or_default()
                    .record(*duration_ms as f64 / 1000.0, *success);
            }
            Event::ServerConnected { server_id, .. } => {
                *self
                    .connections
                    .lock()
                    .unwrap()
                    .entry(server_id.clone())
                    .or_default() += 1;
            }
            _ => {}
        }
    }

    fn restarts(&self, server_id: &str) -> u64 {
        self.connections
            .lock()
            .unwrap()
            .get(server_id)
            .map_or(0, |n| n.saturating_sub(1))
    }

    /// `{"servers": [{"id", "name", "state", "error", "pid", "protocolVersion", "restarts"}]}`.
    pub fn status(&self, pool: &Pool) -> Value {
        let servers: Vec<Value> = pool
            .server_states()
            .into_iter()
            .map(|s| {
                json!({
                    "id": s.id,
                    "name": s.name,
                    "state": s.state,
                    "error": s.error,
                    "pid": s.pid,
                    "protocolVersion": s.protocol_version,
                    "restarts": self.restarts(&s.id),
                })
            })
            .collect();
        json!({ "servers": servers })
    }

    /// The Prometheus text format (version 0.0.4).
    pub fn prometheus(&self, pool: &Pool) -> String {
        let states = pool.server_states();
        let names: HashMap<&str, &str> = states
            .iter()
            .map(|s| (s.id.as_str(), s.name.as_str()))
            .collect();
        let mut out = String::new();
        family(
            &mut out,
            "mcpmux_server_up",
            "gauge",
            "1 while the server is connected.",
        );
        for s in &states {
            let up = u8::from(s.state == ConnectionState::Connected);
            let _ = writeln!(
                out,
                "mcpmux_server_up{{server=\"{}\"}} {up}",
                label(&s.name)
            );
        }
        family(
            &mut out,
            "mcpmux_server_restarts_total",
            "counter",
            "Connections made to the server after its first.",
        );
        for s in &states {
            let _ = writeln!(
                out,
                "mcpmux_server_restarts_total{{server=\"{}\"}} {}",
                label(&s.name),
                self.restarts(&s.id)
            );
        }
        // Sorted, so that scrapes and tests read the same order.
        let calls: BTreeMap<(String, String), Calls> = self
            .calls
            .lock()
            .unwrap()
            .iter()
            .map(|((id, tool), c)| {
                let server = names.get(id.as_str()).copied().unwrap_or(id).to_string();
                ((server, tool.clone()), c.clone())
            })
            .collect();
        family(
            &mut out,
            "mcpmux_tool_calls_total",
            "counter",
            "Tool calls, by server and tool.",
        );
        for ((server, tool), c) in &calls {
            let _ = writeln!(
                out,
                "mcpmux_tool_calls_total{} {}",
                labels(server, tool),
                c.count
            );
        }
        family(
            &mut out,
            "mcpmux_tool_call_errors_total",
            "counter",
            "Tool calls that failed or answered isError.",
        );
        for ((server, tool), c) in &calls {
            let _ = writeln!(
                out,
                "mcpmux_tool_call_errors_total{} {}",
                labels(server, tool),
                c.errors
            );
        }
        family(
            &mut out,
            "mcpmux_tool_call_duration_seconds",
            "histogram",
            "How long tool calls took.",
        );
        for ((server, tool), c) in &calls {
            let (server, tool) = (label(server), label(tool));
            let mut cumulative = 0;
            for (bound, n) in BUCKETS.iter().zip(c.buckets) {
                cumulative += n;
                let _ = writeln!(
                    out,
                    "mcpmux_tool_call_duration_seconds_bucket{{server=\"{server}\",tool=\"{tool}\",le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "mcpmux_tool_call_duration_seconds_bucket{{server=\"{server}\",tool=\"{tool}\",le=\"+Inf\"}} {}",
                c.count
            );
            let _ = writeln!(
                out,
                "mcpmux_tool_call_duration_seconds_sum{{server=\"{server}\",tool=\"{tool}\"}} {}",
                c.seconds
            );
            let _ = writeln!(
                out,
                "mcpmux_tool_call_duration_seconds_count{{server=\"{server}\",tool=\"{tool}\"}} {}",
                c.count
            );
        }
        out
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn labels(server: &str, tool: &str) -> String {
    format!("{{server=\"{}\",tool=\"{}\"}}", label(server), label(tool))
}

/// A label value in the text format: backslash, quote and newline escaped.
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_fall_in_their_buckets_and_errors_count() {
        let mut c = Calls::default();
        c.record(0.004, true);
        c.record(0.3, false);
        c.record(120.0, true);
        assert_eq!((c.count, c.errors), (3, 1));
        assert_eq!(c.buckets[0], 1);
        assert_eq!(c.buckets[6], 1);
        assert_eq!(
            c.buckets.iter().sum::<u64>(),
            2,
            "past the last bucket: +Inf only"
        );
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
