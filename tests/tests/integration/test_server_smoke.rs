//! Smoke tests of `mcpmux-test-server` itself, with raw JSON-RPC and no mcpmux, so a
//! failure here points at the test server rather than at the code under test.

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::TcpStream,
    path::PathBuf,
    process::{ChildStdin, Command, Stdio},
    sync::mpsc::{self, Receiver},
    time::Duration,
};

use mcpmux_tests::{
    ChildGuard, everything_command, require_or_skip, test_server_bin, time_server_command,
};
use serde_json::{Value, json};

/// Every read's bound: the first answer of a Node or Python server waits for it to start.
const TIMEOUT: Duration = mcpmux_tests::SERVER_START;

const TOOLS: &[&str] = &[
    "echo",
    "add",
    "sleep",
    "pid",
    "spawn_grandchild",
    "fail",
    "structured",
];

/// The test server on the other end of two pipes, read line by line by a thread so
/// that every read can time out instead of hanging the test.
struct StdioPeer {
    stdin: ChildStdin,
    lines: Receiver<String>,
    _server: ChildGuard,
}

impl StdioPeer {
    fn start(args: &[&str]) -> Self {
        let mut command = Command::new(test_server_bin());
        command.args(args);
        Self::spawn(command)
    }

    fn spawn(mut command: Command) -> Self {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut server = ChildGuard::spawn(&mut command).expect("start mcpmux-test-server");
        let stdin = server.child_mut().stdin.take().expect("stdin");
        let stdout = server.child_mut().stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            stdin,
            lines,
            _server: server,
        }
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").expect("write to server");
        self.stdin.flush().expect("flush");
    }

    fn next_line(&self) -> String {
        self.lines
            .recv_timeout(TIMEOUT)
            .expect("server answered within the timeout")
    }

    /// Read lines until the response with `id`; returns it and every line seen.
    fn response(&self, id: u64) -> (Value, Vec<String>) {
        let mut seen = Vec::new();
        loop {
            let line = self.next_line();
            seen.push(line.clone());
            if let Ok(message) = serde_json::from_str::<Value>(&line)
                && message["id"] == json!(id)
            {
                return (message, seen);
            }
        }
    }

    fn initialize(&mut self) -> Value {
        self.send(json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "smoke", "version": "0"}
            }
        }));
        let (response, _) = self.response(1);
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        response
    }
}

#[test]
fn test_server_bin_resolves_to_the_cargo_built_binary() {
    assert_eq!(
        test_server_bin(),
        PathBuf::from(env!("CARGO_BIN_EXE_mcpmux-test-server"))
    );
}

#[test]
fn stdio_initialize_list_and_call() {
    let mut peer = StdioPeer::start(&[]);
    let init = peer.initialize();
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["result"]["serverInfo"]["name"], "mcpmux-test-server");

    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let (list, _) = peer.response(2);
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("tools array")
        .iter()
        .map(|tool| tool["name"].as_str().expect("tool name"))
        .collect();
    for tool in TOOLS {
        assert!(names.contains(tool), "{tool} missing from {names:?}");
    }
    assert_eq!(names.len(), mcpmux_tests::TEST_SERVER_TOOLS, "{names:?}");

    peer.send(json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hello, mux"}}
    }));
    let (call, _) = peer.response(3);
    assert_eq!(call["result"]["isError"], false);
    assert_eq!(call["result"]["content"][0]["text"], "hello, mux");
}

#[test]
fn garbage_stdout_mixes_non_json_lines_with_working_json_rpc() {
    let mut peer = StdioPeer::start(&["--garbage-stdout"]);
    // The garbage starts before any request is sent.
    let first = peer.next_line();
    assert!(
        serde_json::from_str::<Value>(&first).is_err(),
        "{first:?} should not be JSON"
    );

    peer.send(json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "smoke", "version": "0"}
        }
    }));
    let (init, seen) = peer.response(1);
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert!(
        seen.iter()
            .any(|line| serde_json::from_str::<Value>(line).is_err()),
        "no garbage before the initialize response: {seen:?}"
    );

    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    peer.send(json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 40, "b": 2}}
    }));
    let (call, seen) = peer.response(2);
    assert_eq!(call["result"]["content"][0]["text"], "42");
    assert!(
        seen.iter()
            .any(|line| serde_json::from_str::<Value>(line).is_err()),
        "no garbage before the tools/call response: {seen:?}"
    );
}

#[test]
fn http_mode_answers_initialize_on_slash_mcp() {
    let (_server, url) = mcpmux_tests::start_test_server_http();
    let url = url.as_str();
    let authority = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("unexpected URL line {url:?}"));

    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "smoke", "version": "0"}
        }
    })
    .to_string();
    let mut stream = TcpStream::connect(authority).expect("connect");
    stream.set_read_timeout(Some(TIMEOUT)).expect("timeout");
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("send request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read response");

    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.to_ascii_lowercase().contains("mcp-session-id:"),
        "stateful mode must hand out a session id: {response}"
    );
    assert!(
        response.contains(r#""serverInfo":{"name":"mcpmux-test-server""#),
        "{response}"
    );
}

// The third-party servers: these fail early, and plainly, when scripts/test-deps.sh
// installed something that does not even start, before any mcpmux test trips on it.

#[test]
fn server_everything_answers_initialize_over_stdio() {
    let (node, args) = require_or_skip!(everything_command(), "server-everything");
    let mut command = Command::new(node);
    command.args(args).arg("stdio");
    let mut peer = StdioPeer::spawn(command);
    let init = peer.initialize();
    assert_eq!(
        init["result"]["serverInfo"]["name"],
        "mcp-servers/everything"
    );

    peer.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let (list, _) = peer.response(2);
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("tools array")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    // Names of the pinned release; they change between releases.
    for tool in ["echo", "get-sum", "trigger-long-running-operation"] {
        assert!(names.contains(&tool), "{tool} missing from {names:?}");
    }
}

#[test]
fn mcp_server_time_answers_initialize_over_stdio() {
    let bin = require_or_skip!(time_server_command(), "mcp-server-time");
    let mut peer = StdioPeer::spawn(Command::new(bin));
    let init = peer.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "mcp-time");
}
