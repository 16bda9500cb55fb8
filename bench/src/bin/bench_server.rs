//! The bench's MCP server: newline-delimited JSON-RPC on stdin/stdout, std and serde_json only,
//! answering `initialize`, `ping`, `tools/list` and `tools/call` at once, so that what a
//! benchmark measures is the client.
//!
//! `bench-server [--tools N] [--seed S]`: tool 0 is `echo` (returns its `text` argument); the
//! other N-1 tools get names, descriptions and parameters drawn from a small vocabulary (seeded
//! by S), for listing and search at scale, and echo too. `server/discover` and anything else
//! answers "method not found", so clients that probe the 2026-07-28 protocol fall back to the
//! `initialize` handshake every SDK speaks.

use std::io::{BufRead, BufReader, BufWriter, Write};

use serde_json::{Value, json};

#[path = "../../../core/benches/support/corpus.rs"]
mod corpus;

const VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

fn tools(n: usize, seed: u64) -> (Value, Vec<String>) {
    let mut rng = corpus::Lcg(42 ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut list = vec![json!({
        "name": "echo",
        "description": "Returns its text argument.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    })];
    let mut names = vec!["echo".to_string()];
    for i in 1..n.max(1) {
        let (name, description, schema) = corpus::tool(&mut rng, i);
        list.push(json!({"name": name, "description": description, "inputSchema": schema}));
        names.push(name);
    }
    (json!({ "tools": list }), names)
}

fn main() {
    let mut n_tools = 1;
    let mut seed = 0;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let value = args.next().and_then(|v| v.parse().ok());
        match (a.as_str(), value) {
            ("--tools", Some(v)) => n_tools = v as usize,
            ("--seed", Some(v)) => seed = v,
            _ => {
                eprintln!("usage: bench-server [--tools N] [--seed S]");
                std::process::exit(2);
            }
        }
    }
    let (tool_list, names) = tools(n_tools, seed);

    let mut input = BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut out = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = String::new();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        // Notifications (no id) and responses (no method) need no answer.
        let (Some(id), Some(method)) = (msg.get("id"), msg.get("method").and_then(Value::as_str))
        else {
            continue;
        };
        let params = msg.get("params").unwrap_or(&Value::Null);
        let answer = match method {
            "initialize" => {
                let asked = params["protocolVersion"].as_str().unwrap_or_default();
                let version = VERSIONS
                    .iter()
                    .find(|v| **v == asked)
                    .unwrap_or(&VERSIONS[VERSIONS.len() - 1]);
                Ok(json!({
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": false}},
                    "serverInfo": {"name": "mcpmux-bench-server", "version": "0.1.0"},
                }))
            }
            "ping" => Ok(json!({})),
            "tools/list" => Ok(tool_list.clone()),
            "tools/call" => {
                let name = params["name"].as_str().unwrap_or_default();
                if names.iter().any(|n| n == name) {
                    let text = match &params["arguments"]["text"] {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    Ok(json!({"content": [{"type": "text", "text": text}]}))
                } else {
                    Err((-32602, format!("unknown tool: {name}")))
                }
            }
            _ => Err((-32601, format!("method not found: {method}"))),
        };
        let reply = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        };
        if serde_json::to_writer(&mut out, &reply).is_err() || out.write_all(b"\n").is_err() {
            return;
        }
        // Answers to requests that arrived together go out together; the last one goes now.
        if input.buffer().is_empty() && out.flush().is_err() {
            return;
        }
    }
}
