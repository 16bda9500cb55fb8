//! Every answer `mcpmux serve` gives a 2026-07-28 client, over HTTP and over stdio, checked
//! against the specification's own JSON Schema of that version (tests/contract/mcp-schema):
//! each result against its definition, with `resultType: "complete"` (the schema types it as
//! any string), each notification and error against theirs. The official SDKs validate what
//! they receive the same way; an answer that misses a field the schema requires fails them
//! (the Python SDK 2.3 `Client` did on every `tools/call`, for `resultType`).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use mcpmux_tests::{ChildGuard, test_server_bin};
use serde_json::{Value, json};

#[allow(dead_code)]
use crate::support::*;

const TOKEN: &str = "schema-check-token-of-the-tests";

/// The specification's schema of 2026-07-28.
fn schema() -> Value {
    let path = mcpmux_tests::repo_root().join("tests/contract/mcp-schema/2026-07-28/schema.json");
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// Every way `value` is not a `definition` of `schema`, as text.
fn violations(schema: &Value, definition: &str, value: &Value) -> Vec<String> {
    let root = json!({
        "$schema": schema["$schema"],
        "$defs": schema["$defs"],
        "$ref": format!("#/$defs/{definition}"),
    });
    let validator = jsonschema::draft202012::new(&root).unwrap();
    validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// What a 2026-07-28 client asks, and the definition its result must be: one of each method
/// the gateway answers.
fn asked() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        ("server/discover", json!({}), "DiscoverResult"),
        ("tools/list", json!({}), "ListToolsResult"),
        (
            "tools/call",
            json!({"name": "demo__echo", "arguments": {"text": "hi"}}),
            "CallToolResult",
        ),
        (
            "tools/call",
            json!({"name": "demo__countdown", "arguments": {"steps": 2},
                   "_meta": {"progressToken": "countdown"}}),
            "CallToolResult",
        ),
        (
            "tools/call",
            json!({"name": "test__fail", "arguments": {}}),
            "CallToolResult",
        ),
        (
            "tools/call",
            json!({"name": "test__structured", "arguments": {}}),
            "CallToolResult",
        ),
        ("resources/list", json!({}), "ListResourcesResult"),
        (
            "resources/templates/list",
            json!({}),
            "ListResourceTemplatesResult",
        ),
        (
            "resources/read",
            json!({"uri": "mcpmux:demo/demo://readme"}),
            "ReadResourceResult",
        ),
        ("prompts/list", json!({}), "ListPromptsResult"),
        (
            "prompts/get",
            json!({"name": "demo__greet", "arguments": {"name": "Ada"}}),
            "GetPromptResult",
        ),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "demo__greet"},
                   "argument": {"name": "name", "value": "Gr"}}),
            "CompleteResult",
        ),
    ]
}

/// What a legacy upstream (server-everything, 2025-11-25: its answers carry no `resultType`)
/// and a Python SDK 2.3 one answer, passed on to a 2026-07-28 client.
fn asked_of_third_parties() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "tools/call",
            json!({"name": "everything__echo", "arguments": {"message": "hi"}}),
            "CallToolResult",
        ),
        (
            "tools/call",
            json!({"name": "everything__get-structured-content",
                   "arguments": {"location": "New York"}}),
            "CallToolResult",
        ),
        (
            "tools/call",
            json!({"name": "everything__trigger-long-running-operation",
                   "arguments": {"duration": 1, "steps": 2},
                   "_meta": {"progressToken": 7}}),
            "CallToolResult",
        ),
        (
            "prompts/get",
            json!({"name": "everything__simple-prompt", "arguments": {}}),
            "GetPromptResult",
        ),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "everything__completable-prompt"},
                   "argument": {"name": "department", "value": "E"}}),
            "CompleteResult",
        ),
        (
            "tools/call",
            json!({"name": "py__say", "arguments": {"message": "hi"}}),
            "CallToolResult",
        ),
    ]
}

/// The search mode's own tools, answered by the gateway itself.
fn asked_in_search_mode() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        ("tools/list", json!({}), "ListToolsResult"),
        (
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "echo text"}}),
            "CallToolResult",
        ),
        (
            "tools/call",
            json!({"name": "describe_tools", "arguments": {"names": ["demo__echo"]}}),
            "CallToolResult",
        ),
        (
            "tools/call",
            json!({"name": "call_tool",
                   "arguments": {"name": "demo__echo", "arguments": {"text": "hi"}}}),
            "CallToolResult",
        ),
    ]
}

/// Checks one JSON-RPC answer to `method` and the notifications that came with it.
fn check_answer(schema: &Value, method: &str, definition: &str, answer: &Value, notes: &[Value]) {
    let result = answer
        .get("result")
        .unwrap_or_else(|| panic!("{method}: not a result: {answer}"));
    assert_eq!(result["resultType"], "complete", "{method}: {result}");
    let wrong = violations(schema, definition, result);
    assert!(
        wrong.is_empty(),
        "{method} ({definition}): {wrong:?}\n{result}"
    );
    for note in notes {
        let definition = match note["method"].as_str() {
            Some("notifications/progress") => "ProgressNotification",
            Some("notifications/message") => "LoggingMessageNotification",
            other => panic!("{method}: an unexpected notification {other:?}: {note}"),
        };
        let wrong = violations(schema, definition, note);
        assert!(wrong.is_empty(), "{method}: {note}: {wrong:?}");
    }
}

/// A config with the demo server, the test server, server-everything and the Python SDK
/// server (and what to ask of them); without the third parties when they are not installed
/// and may be skipped.
fn served_fleet() -> (
    tempfile::TempDir,
    std::path::PathBuf,
    Vec<(&'static str, Value, &'static str)>,
) {
    let mut asks = asked();
    if let Some((dir, config)) = fleet(true) {
        asks.extend(asked_of_third_parties());
        return (dir, config, asks);
    }
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    add_stdio(&config, "demo", Path::new(MCPMUX), &["demo-server".into()]);
    add_stdio(&config, "test", &test_server_bin(), &[]);
    (dir, config, asks)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_over_http_is_what_the_2026_schema_says() {
    let schema = schema();
    let (_dir, config, asks) = served_fleet();
    for (mode, asks) in [("direct", asks), ("search", asked_in_search_mode())] {
        let (_server, url) = serve_http(&config, &["--token", TOKEN, "--mode", mode]);
        let mut client = RawClient::modern(&url, TOKEN);
        for (method, params, definition) in asks {
            let seen = client.notifications.len();
            let answer = client.request(method, params).await;
            let notes = client.notifications[seen..].to_vec();
            check_answer(&schema, method, definition, &answer, &notes);
            if method == "tools/call" && answer.to_string().contains("countdown") {
                assert!(!notes.is_empty(), "no progress came with the countdown");
            }
        }
        // An error is the schema's error.
        let answer = client
            .request(
                "tools/call",
                json!({"name": "nope__nothing", "arguments": {}}),
            )
            .await;
        let wrong = violations(&schema, "JSONRPCErrorResponse", &answer);
        assert!(wrong.is_empty(), "{answer}: {wrong:?}");
    }
}

/// `mcpmux serve --stdio`, spoken to line by line as a 2026-07-28 client.
struct StdioClient {
    _server: ChildGuard,
    stdin: std::process::ChildStdin,
    lines: mpsc::Receiver<String>,
    next: u64,
}

impl StdioClient {
    fn start(config: &Path) -> StdioClient {
        let mut command = Command::new(MCPMUX);
        command
            .arg("--config")
            .arg(config)
            .args(["serve", "--stdio", "--mode", "direct"])
            .env_remove("MCPMUX_CONFIG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut server = ChildGuard::spawn(&mut command).unwrap();
        let stdin = server.child_mut().stdin.take().unwrap();
        let stdout = server.child_mut().stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        StdioClient {
            _server: server,
            stdin,
            lines,
            next: 1,
        }
    }

    /// The answer to `method`, and the notifications before it.
    fn request(&mut self, method: &str, mut params: Value) -> (Value, Vec<Value>) {
        let id = self.next;
        self.next += 1;
        let meta = params
            .as_object_mut()
            .unwrap()
            .entry("_meta")
            .or_insert_with(|| json!({}));
        meta["io.modelcontextprotocol/protocolVersion"] = json!(MODERN);
        meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "raw-stdio", "version": "1"});
        meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{line}").unwrap();
        let mut notes = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("{method}: no answer"));
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id") == Some(&json!(id)) {
                return (message, notes);
            }
            notes.push(message);
        }
    }
}

#[test]
fn every_answer_over_stdio_is_what_the_2026_schema_says() {
    let schema = schema();
    let (_dir, config, asks) = served_fleet();
    let mut client = StdioClient::start(&config);
    for (method, params, definition) in asks {
        let (answer, notes) = client.request(method, params);
        check_answer(&schema, method, definition, &answer, &notes);
    }
}
