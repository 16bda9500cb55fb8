//! What the tests of `mcpmux serve` share: running the command line on a config of their
//! own, starting HTTP servers, and the clients that call them.

mod raw_client;
pub mod terminal;
#[allow(unused_imports, reason = "what some test modules use")]
pub use raw_client::{MODERN, RawClient};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use mcpmux::{Pool, PoolOptions, ServerConfig, ServerInput, TransportType};
use mcpmux_tests::{
    ChildGuard, deps_dir, everything_command, python_sdk_server_command, test_server_bin,
};
use serde_json::json;

pub const MCPMUX: &str = env!("CARGO_BIN_EXE_mcpmux");

pub fn mcpmux(config: &Path, args: &[&str]) -> std::process::Output {
    Command::new(MCPMUX)
        .arg("--config")
        .arg(config)
        .args(args)
        .env_remove("MCPMUX_CONFIG")
        .output()
        .expect("run mcpmux")
}

pub fn add_stdio(config: &Path, name: &str, command: &Path, args: &[String]) {
    let mut argv = vec![
        "servers".to_string(),
        "add".into(),
        name.into(),
        "--command".into(),
        command.to_string_lossy().into_owned(),
    ];
    for a in args {
        argv.push(format!("--arg={a}"));
    }
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let out = mcpmux(config, &argv);
    assert!(
        out.status.success(),
        "servers add {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A config in a fresh folder with the fleet: `demo`, `test`, `broken`, and `everything` and
/// `py` when `third_party` (None when those are not installed and may be skipped).
pub fn fleet(third_party: bool) -> Option<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    add_stdio(&config, "demo", Path::new(MCPMUX), &["demo-server".into()]);
    add_stdio(&config, "test", &test_server_bin(), &[]);
    add_stdio(&config, "broken", Path::new("/nonexistent/mcp-server"), &[]);
    if third_party {
        let Some((node, args)) = everything_command() else {
            mcpmux_tests::skip_or_fail("server-everything");
            return None;
        };
        let mut args = args;
        args.push("stdio".into());
        add_stdio(&config, "everything", &node, &args);
        let Some((python, args)) = python_sdk_server_command() else {
            mcpmux_tests::skip_or_fail(
                "the Python SDK server (tests/servers/python_sdk_server.py)",
            );
            return None;
        };
        add_stdio(&config, "py", &python, &args);
    }
    Some((dir, config))
}

/// `mcpmux serve --http 127.0.0.1:0` with `extra` flags; its URL (read from stdout).
pub fn serve_http(config: &Path, extra: &[&str]) -> (ChildGuard, String) {
    serve_http_env(config, extra, &[])
}

/// [`serve_http`] with `env` set in its environment.
pub fn serve_http_env(config: &Path, extra: &[&str], env: &[(&str, &str)]) -> (ChildGuard, String) {
    let mut command = Command::new(MCPMUX);
    command
        .arg("--config")
        .arg(config)
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(extra)
        .env_remove("MCPMUX_CONFIG")
        .env_remove("MCPMUX_SERVE_TOKEN")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut server = ChildGuard::spawn(&mut command).expect("start mcpmux serve");
    let mut url = String::new();
    BufReader::new(server.child_mut().stdout.take().unwrap())
        .read_line(&mut url)
        .expect("read the URL mcpmux serve prints");
    assert!(url.starts_with("http://127.0.0.1:"), "{url:?}");
    (server, url.trim().to_string())
}

pub fn python_client() -> Option<PathBuf> {
    let python = deps_dir().join("venv/bin/python");
    if python.is_file() {
        Some(python)
    } else {
        mcpmux_tests::skip_or_fail("the Python SDK venv (.deps/venv)");
        None
    }
}

pub fn run_python_client(python: &Path, args: &[&str]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/python_sdk_client.py");
    // In a guard, so a panic below still kills the client and whatever it started.
    let mut client = mcpmux_tests::ChildGuard::spawn(
        Command::new(python)
            .arg(script)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped()),
    )
    .expect("run the Python SDK client");
    // Read as it runs, so a full pipe never stalls the client.
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let stdout = read(client.child_mut().stdout.take().map(|p| Box::new(p) as _));
    let stderr = read(client.child_mut().stderr.take().map(|p| Box::new(p) as _));
    // A client that hangs fails its test with what it said, instead of stalling the suite.
    let ended = mcpmux_tests::wait_until(PYTHON_CLIENT_TIME, || client.has_exited());
    if !ended {
        client.kill();
    }
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    assert!(
        ended,
        "{args:?}: no end after {PYTHON_CLIENT_TIME:?}, killed: {stdout}\n{stderr}"
    );
    let status = client
        .child_mut()
        .wait()
        .expect("wait for the Python SDK client");
    assert!(
        status.success() && stdout.contains("python sdk client: ok"),
        "{args:?}: {stdout}\n{stderr}"
    );
}

/// How long a Python SDK client run may take: each needs seconds.
const PYTHON_CLIENT_TIME: std::time::Duration = std::time::Duration::from_secs(180);

/// A pool of mcpmux's own, in a config of its own, with the served fleet as its one remote
/// server `fleet` (the token in its headers).
pub async fn client_pool(dir: &Path, url: &str, token: &str) -> Pool {
    client_pool_with(dir, url, token, None, PoolOptions::default()).await
}

/// [`client_pool`] reaching the fleet over `transport` (else as its URL says), with the
/// pool's own `options` (what a host declares, e.g. MCP Apps; the config path and health
/// checks are set here).
pub async fn client_pool_with(
    dir: &Path,
    url: &str,
    token: &str,
    transport: Option<TransportType>,
    options: PoolOptions,
) -> Pool {
    let pool = Pool::open(PoolOptions {
        config_path: Some(dir.join("client.json")),
        health_check_interval_ms: 0,
        ..options
    })
    .await
    .unwrap();
    let config: ServerConfig = serde_json::from_value(json!({
        "url": url,
        "headers": {"Authorization": format!("Bearer {token}")},
    }))
    .unwrap();
    pool.add_server(ServerInput {
        name: "fleet".into(),
        transport,
        config,
        ..ServerInput::default()
    })
    .await
    .unwrap();
    pool
}

pub fn text(result: &mcpmux::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

/// One raw HTTP/1.1 request to `url`'s host; the status code and the body.
pub fn http_request(
    url: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let authority = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .unwrap();
    let mut stream = TcpStream::connect(authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // A `Host` given in `headers` replaces the real one (a DNS-rebinding attempt).
    let host = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("host"))
        .map_or(authority, |(_, v)| *v);
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers
        .iter()
        .filter(|(k, _)| !k.eq_ignore_ascii_case("host"))
    {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, response)
}
