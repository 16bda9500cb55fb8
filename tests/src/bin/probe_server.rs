//! A hostile MCP server over stdio, for the sandbox's tests: its one tool, `probe`, tries what
//! a server that turned against its user would (read a file, write one, open a connection,
//! read its host's environment) and says what happened. Written on bare JSON-RPC, so that
//! nothing but the sandbox decides whether an attempt works.

use std::io::{BufRead, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::{Value, json};

fn main() {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = message.get("id").cloned() else {
            continue; // A notification.
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let answer = match message["method"].as_str().unwrap_or_default() {
            "initialize" => json!({"result": {
                "protocolVersion": params["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "mcpmux-probe-server", "version": "1.0.0"},
            }}),
            "ping" => json!({"result": {}}),
            "tools/list" => json!({"result": {"tools": [tool()]}}),
            "tools/call" => json!({"result": call(&params["arguments"])}),
            other => json!({"error": {"code": -32601, "message": format!("no method {other}")}}),
        };
        let mut answer = answer;
        answer["jsonrpc"] = json!("2.0");
        answer["id"] = id;
        if writeln!(stdout, "{answer}")
            .and_then(|_| stdout.flush())
            .is_err()
        {
            break;
        }
    }
}

fn tool() -> Value {
    let string = json!({"type": "string"});
    json!({
        "name": "probe",
        "description": "Try one thing a hostile server would: read or write a file, connect \
                        to host:port or a Unix socket, allocate memory, hold files open, start processes, or read the parent process's environment",
        "inputSchema": {
            "type": "object",
            "properties": {
                "read": string, "write": string, "connect": string, "parentEnviron": string,
                "allocateMb": string, "holdFiles": string, "connectUnix": string,
                "spawn": string,
            },
        },
    })
}

/// The attempt `arguments` names: `ok: …` when it worked, an error result naming the OS error
/// when it did not.
fn call(arguments: &Value) -> Value {
    let attempt = |key: &str| arguments.get(key).and_then(Value::as_str);
    let outcome: std::io::Result<String> = if let Some(path) = attempt("read") {
        std::fs::read(path).map(|bytes| format!("read {} bytes", bytes.len()))
    } else if let Some(path) = attempt("write") {
        std::fs::write(path, b"written by the probe").map(|()| "written".to_owned())
    } else if let Some(address) = attempt("connect") {
        connect(address)
    } else if let Some(path) = attempt("connectUnix") {
        std::os::unix::net::UnixStream::connect(path).map(|_| "connected".to_owned())
    } else if let Some(n) = attempt("spawn") {
        spawn(n)
    } else if let Some(n) = attempt("holdFiles") {
        hold_files(n)
    } else if let Some(mib) = attempt("allocateMb") {
        allocate(mib)
    } else if attempt("parentEnviron").is_some() {
        // SAFETY: getppid has no preconditions.
        let parent = unsafe { libc::getppid() };
        std::fs::read(format!("/proc/{parent}/environ"))
            .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', "\n"))
    } else {
        Err(std::io::Error::other("say what to probe"))
    };
    match outcome {
        Ok(what) => json!({"content": [{"type": "text", "text": format!("ok: {what}")}]}),
        Err(e) => json!({
            "content": [{"type": "text", "text": format!("failed: {e}")}],
            "isError": true,
        }),
    }
}

fn connect(address: &str) -> std::io::Result<String> {
    let address: SocketAddr = address
        .parse()
        .map_err(|e| std::io::Error::other(format!("{address}: {e}")))?;
    TcpStream::connect_timeout(&address, Duration::from_secs(5)).map(|_| "connected".to_owned())
}

/// Allocates and touches `mib` MiB, without aborting when the allocator refuses.
fn allocate(mib: &str) -> std::io::Result<String> {
    let mib: usize = mib.parse().map_err(std::io::Error::other)?;
    let mut held: Vec<u8> = Vec::new();
    held.try_reserve_exact(mib << 20)
        .map_err(|e| std::io::Error::other(format!("memory: {e}")))?;
    held.resize(mib << 20, 1);
    Ok(format!("allocated {} MiB", held.len() >> 20))
}

/// Opens `/dev/null` `n` times, all held at once.
fn hold_files(n: &str) -> std::io::Result<String> {
    let n: usize = n.parse().map_err(std::io::Error::other)?;
    let held = (0..n)
        .map(|_| std::fs::File::open("/dev/null"))
        .collect::<std::io::Result<Vec<_>>>()?;
    Ok(format!("held {} files", held.len()))
}

/// Starts `n` processes that live until it returns, all at once.
fn spawn(n: &str) -> std::io::Result<String> {
    let n: usize = n.parse().map_err(std::io::Error::other)?;
    let mut children = Vec::new();
    let outcome: std::io::Result<()> = (0..n).try_for_each(|_| {
        let child = std::process::Command::new("sleep").arg("30").spawn()?;
        children.push(child);
        Ok(())
    });
    let started = children.len();
    for mut child in children {
        let _ = child.kill();
        let _ = child.wait();
    }
    outcome
        .map(|()| format!("started {started}"))
        .map_err(|e| std::io::Error::other(format!("after {started} processes: {e}")))
}
