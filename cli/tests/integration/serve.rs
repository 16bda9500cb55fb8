//! `mcpmux serve`: a fleet of real servers (the built-in demo server, server-everything, a
//! Python SDK 2.3 `MCPServer`, the test server, and one that cannot start) as one MCP server,
//! driven by real clients: the TypeScript SDK's and the Python SDK 2.3's clients over stdio
//! and HTTP, and mcpmux's own pool (a 2026-07-28 client) over HTTP. Configs start empty and
//! are filled with `mcpmux servers add`, as a user would.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcpmux::{CallOptions, Pool};
use mcpmux_tests::{ChildGuard, deps_dir, test_server_bin};
use serde_json::json;

#[allow(dead_code)]
use crate::support::*;

/// The bearer token the served fleets of these tests take.
const TOKEN: &str = "t0ken-of-the-tests";

/// `mcpmux serve --http` of `config` in direct mode, behind [`TOKEN`].
fn serve_direct(config: &Path) -> (ChildGuard, String) {
    serve_http(config, &["--token", TOKEN, "--mode", "direct"])
}

/// Runs the Python SDK client's `scenario` against `url` with [`TOKEN`] (off the runtime:
/// it blocks), unless the SDK is missing (then skipped, or failed in CI).
async fn python_scenario(scenario: &str, url: &str) {
    let Some(python) = python_client() else {
        return;
    };
    let (scenario, url) = (scenario.to_owned(), url.to_owned());
    tokio::task::spawn_blocking(move || run_python_client(&python, &[&scenario, &url, TOKEN]))
        .await
        .unwrap();
}

#[test]
fn the_python_sdk_client_uses_the_fleet_over_stdio() {
    let Some(python) = python_client() else {
        return;
    };
    let Some((_dir, config)) = fleet(true) else {
        return;
    };
    run_python_client(&python, &["stdio", MCPMUX, config.to_str().unwrap()]);
}

#[test]
fn the_python_sdk_client_uses_the_fleet_over_http() {
    let Some(python) = python_client() else {
        return;
    };
    let Some((_dir, config)) = fleet(true) else {
        return;
    };
    let (_server, url) = serve_http(
        &config,
        &["--token", "sesame-open-up-please", "--mode", "direct"],
    );
    run_python_client(&python, &["http", &url, "sesame-open-up-please"]);
}

/// Runs the TypeScript SDK client (`tests/clients/ts_sdk_client.js`) with the SDK that
/// server-everything installed; false (after a skip) when node or the SDK is missing.
fn run_ts_client(args: &[&str]) -> bool {
    let modules = deps_dir().join("npm/node_modules");
    let Some(node) = mcpmux_tests::find_in_path("node") else {
        mcpmux_tests::skip_or_fail("node");
        return false;
    };
    if !modules
        .join("@modelcontextprotocol/sdk/package.json")
        .is_file()
    {
        mcpmux_tests::skip_or_fail("the TypeScript SDK (installed with server-everything)");
        return false;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/ts_sdk_client.js");
    let out = Command::new(node)
        .arg(script)
        .arg(&modules)
        .args(args)
        .output()
        .expect("run the TypeScript SDK client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("ts sdk client: ok"),
        "{args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

#[test]
fn the_typescript_sdk_client_uses_the_fleet_over_stdio() {
    let Some((_dir, config)) = fleet(true) else {
        return;
    };
    run_ts_client(&["stdio", MCPMUX, config.to_str().unwrap()]);
}

#[test]
fn the_typescript_sdk_client_uses_the_fleet_over_http() {
    let Some((_dir, config)) = fleet(true) else {
        return;
    };
    let (_server, url) = serve_http(
        &config,
        &["--token", "sesame-open-up-please", "--mode", "direct"],
    );
    run_ts_client(&["http", &url, "sesame-open-up-please"]);
}

/// The specification's schema of 2026-07-28, which the 2026 clients check answers against.
fn schema_2026() -> String {
    let path = mcpmux_tests::repo_root().join("tests/contract/mcp-schema/2026-07-28/schema.json");
    path.to_string_lossy().into_owned()
}

/// Runs the Python SDK 2.3 `Client` in its default (2026-07-28) mode
/// (`tests/clients/python_sdk_modern_client.py`) with `args`.
fn run_python_modern_client(python: &Path, args: &[&str]) {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/python_sdk_modern_client.py");
    let out = Command::new(python)
        .arg(script)
        .arg(schema_2026())
        .args(args)
        .output()
        .expect("run the Python SDK client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("python sdk modern client: ok"),
        "{args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_python_sdk_client_in_2026_mode_uses_the_fleet_over_stdio() {
    let (Some(python), Some((_dir, config))) = (python_client(), fleet(true)) else {
        return;
    };
    run_python_modern_client(&python, &["stdio", MCPMUX, config.to_str().unwrap()]);
}

#[test]
fn the_python_sdk_client_in_2026_mode_uses_the_fleet_over_http() {
    let (Some(python), Some((_dir, config))) = (python_client(), fleet(true)) else {
        return;
    };
    let token = "python-2026-client-token";
    let (_server, url) = serve_http(&config, &["--token", token, "--mode", "direct"]);
    run_python_modern_client(&python, &["http", &url, token]);
}

/// Runs the TypeScript SDK v2 client (`tests/clients/ts_sdk_v2_client.mjs`, in 2026-07-28
/// mode) with `args`; it is installed by scripts/test-deps.sh into `.deps/npm-client`.
fn run_ts_v2_client(args: &[&str]) {
    let modules = deps_dir().join("npm-client/node_modules");
    let Some(node) = mcpmux_tests::find_in_path("node") else {
        mcpmux_tests::skip_or_fail("node");
        return;
    };
    if !modules
        .join("@modelcontextprotocol/client/package.json")
        .is_file()
    {
        mcpmux_tests::skip_or_fail("@modelcontextprotocol/client (.deps/npm-client)");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/ts_sdk_v2_client.mjs");
    let out = Command::new(node)
        .arg(script)
        .arg(&modules)
        .arg(schema_2026())
        .args(args)
        .output()
        .expect("run the TypeScript SDK v2 client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("ts sdk v2 client: ok"),
        "{args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_typescript_sdk_v2_client_uses_the_fleet_over_stdio() {
    let Some((_dir, config)) = fleet(true) else {
        return;
    };
    run_ts_v2_client(&["stdio", MCPMUX, config.to_str().unwrap()]);
}

#[test]
fn the_typescript_sdk_v2_client_uses_the_fleet_over_http() {
    let Some((_dir, config)) = fleet(true) else {
        return;
    };
    let token = "typescript-2026-client-token";
    let (_server, url) = serve_http(&config, &["--token", token, "--mode", "direct"]);
    run_ts_v2_client(&["http", &url, token]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_client_is_served_statelessly_with_the_merged_instructions() {
    let (dir, config) = fleet(false).unwrap();
    let (_server, url) = serve_direct(&config);
    let pool = client_pool(dir.path(), &url, TOKEN).await;
    let tools = pool.list_tools(Some("fleet")).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in ["demo__echo", "test__echo", "test__pid"] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let info = pool.server_info("fleet").unwrap().unwrap();
    assert_eq!(info.protocol_version, "2026-07-28");
    let echoed = pool
        .call_tool(
            "mcp__fleet__test__echo",
            json!({"text": "hi"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text(&echoed), "hi");

    // Once the servers are known, a client is told each one's instructions under its name.
    let sub = dir.path().join("second");
    std::fs::create_dir(&sub).unwrap();
    let second = client_pool(&sub, &url, TOKEN).await;
    second.connect("fleet").await.unwrap();
    let instructions = second
        .server_info("fleet")
        .unwrap()
        .and_then(|i| i.instructions)
        .unwrap_or_default();
    assert!(
        instructions.contains("## test\n\nTest server for mcpmux"),
        "{instructions:?}"
    );
    second.close().await;
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_killed_mid_call_fails_that_call_fast_and_comes_back() {
    let (dir, config) = fleet(false).unwrap();
    let (_server, url) = serve_http(&config, &["--token", TOKEN]);
    let pool = client_pool(dir.path(), &url, TOKEN).await;
    let pid_of_test = |pool: Pool| async move {
        let r = pool
            .call_tool("mcp__fleet__test__pid", json!({}), CallOptions::default())
            .await
            .unwrap();
        text(&r).trim().parse::<i32>().expect("a pid")
    };
    let first = pid_of_test(pool.clone()).await;

    let hanging = {
        let pool = pool.clone();
        tokio::spawn(async move {
            pool.call_tool(
                "mcp__fleet__test__hang",
                json!({"ms": 30_000}),
                CallOptions::default(),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    // SAFETY: kill(2) on a pid the test server reported; no memory is involved.
    assert_eq!(unsafe { libc::kill(first, libc::SIGKILL) }, 0);
    let killed = Instant::now();
    let result = tokio::time::timeout(Duration::from_secs(5), hanging)
        .await
        .expect("the call of the killed server ended")
        .unwrap()
        .expect("answered as a result");
    let took = killed.elapsed();
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert!(text(&result).contains("test"), "{}", text(&result));
    assert!(
        took < Duration::from_secs(1),
        "the failed call took {took:?}"
    );

    // The other servers never noticed; the killed one is started again on its next call.
    let echoed = pool
        .call_tool(
            "mcp__fleet__demo__echo",
            json!({"text": "still here"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text(&echoed), "still here");
    let second = pid_of_test(pool.clone()).await;
    assert_ne!(first, second);

    // Whoever runs the server sees it: the restart in /status and /metrics, the calls too.
    let auth = [("Authorization", "Bearer t0ken-of-the-tests")];
    let status_json = served_status(&url, TOKEN);
    let test = status_json["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "test")
        .expect("the test server in /status")
        .clone();
    assert_eq!(test["state"], "connected", "{test}");
    assert_eq!(test["restarts"], 1, "{test}");
    assert_eq!(test["pid"], second, "{test}");
    let (status, metrics) = http_request(&url, "GET", "/metrics", &auth, "");
    assert_eq!(status, 200, "{metrics}");
    for line in [
        "mcpmux_server_restarts_total{server=\"test\"} 1",
        "mcpmux_tool_calls_total{server=\"test\",tool=\"pid\"} 2",
        "mcpmux_tool_call_errors_total{server=\"test\",tool=\"hang\"} 1",
        "mcpmux_server_up{server=\"test\"} 1",
        "# TYPE mcpmux_tool_call_duration_seconds histogram",
    ] {
        assert!(metrics.contains(line), "{line} missing from {metrics}");
    }
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_clients_share_one_upstream_process() {
    let (dir, config) = fleet(false).unwrap();
    let (_server, url) = serve_http(&config, &["--token", TOKEN]);
    let mut pools = Vec::new();
    for i in 0..20 {
        let sub = dir.path().join(format!("client{i}"));
        std::fs::create_dir(&sub).unwrap();
        pools.push(client_pool(&sub, &url, TOKEN).await);
    }
    let calls = pools.iter().map(|pool| async move {
        let r = pool
            .call_tool("mcp__fleet__test__pid", json!({}), CallOptions::default())
            .await
            .unwrap();
        text(&r)
    });
    let pids = futures::future::join_all(calls).await;
    assert!(pids.iter().all(|p| p == &pids[0]), "{pids:?}");
    for pool in pools {
        pool.close().await;
    }
}

#[test]
fn http_asks_for_the_token_and_refuses_other_origins() {
    let (_dir, config) = fleet(false).unwrap();
    let (_server, url) = serve_http(
        &config,
        &["--token", TOKEN, "--cors", "http://localhost:5173"],
    );
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}
    })
    .to_string();
    let mcp = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let (status, body) = http_request(&url, "POST", "/mcp", &mcp, &initialize);
    assert_eq!(status, 401, "{body}");
    assert!(
        body.contains("WWW-Authenticate: Bearer") || body.contains("www-authenticate: Bearer"),
        "{body}"
    );

    let (status, body) = http_request(
        &url,
        "POST",
        "/mcp",
        &[mcp[0], mcp[1], ("Authorization", "Bearer wrong")],
        &initialize,
    );
    assert_eq!(status, 401, "{body}");

    let authorized = [
        mcp[0],
        mcp[1],
        ("Authorization", "Bearer t0ken-of-the-tests"),
    ];
    let (status, body) = http_request(&url, "POST", "/mcp", &authorized, &initialize);
    assert_eq!(status, 200, "{body}");

    let evil = [
        mcp[0],
        mcp[1],
        authorized[2],
        ("Origin", "http://evil.example"),
    ];
    let (status, body) = http_request(&url, "POST", "/mcp", &evil, &initialize);
    assert_eq!(status, 403, "{body}");
    let allowed = [
        mcp[0],
        mcp[1],
        authorized[2],
        ("Origin", "http://localhost:5173"),
    ];
    let (status, body) = http_request(&url, "POST", "/mcp", &allowed, &initialize);
    assert_eq!(status, 200, "{body}");
    // A page the server's own origin serves is same-origin: no rebinding, no CORS needed.
    let own = url.trim_end_matches("/mcp").to_string();
    let same_origin = [mcp[0], mcp[1], authorized[2], ("Origin", own.as_str())];
    let (status, same_body) = http_request(&url, "POST", "/mcp", &same_origin, &initialize);
    assert_eq!(status, 200, "{same_body}");
    let lower = body.to_ascii_lowercase();
    assert!(
        lower.contains("access-control-allow-origin: http://localhost:5173")
            && lower.contains("access-control-expose-headers: mcp-session-id"),
        "{body}"
    );

    // A browser's preflight carries no token: the allowed origin is answered, another is not.
    let preflight = [
        ("Origin", "http://localhost:5173"),
        ("Access-Control-Request-Method", "POST"),
        (
            "Access-Control-Request-Headers",
            "authorization, content-type",
        ),
    ];
    let (status, body) = http_request(&url, "OPTIONS", "/mcp", &preflight, "");
    assert_eq!(status, 204, "{body}");
    let lower = body.to_ascii_lowercase();
    assert!(
        lower.contains("access-control-allow-headers: authorization"),
        "{body}"
    );
    assert!(
        lower.contains("access-control-allow-methods: get, post"),
        "{body}"
    );
    let (_, body) = http_request(
        &url,
        "OPTIONS",
        "/mcp",
        &[("Origin", "http://evil.example"), preflight[1]],
        "",
    );
    assert!(
        !body
            .to_ascii_lowercase()
            .contains("access-control-allow-origin"),
        "{body}"
    );

    let (status, body) = http_request(&url, "GET", "/healthz", &[], "");
    assert_eq!(status, 200, "{body}");
    let (status, body) = http_request(&url, "GET", "/readyz", &[], "");
    assert_eq!(status, 200, "{body}");
    for private in ["/status", "/metrics"] {
        let (status, body) = http_request(&url, "GET", private, &[], "");
        assert_eq!(status, 401, "{private}: {body}");
    }
    let (status, body) = http_request(&url, "GET", "/elsewhere", &[], "");
    assert_eq!(status, 404, "{body}");
}

#[test]
fn serving_without_a_token_off_loopback_is_refused() {
    let (_dir, config) = fleet(false).unwrap();
    let out = mcpmux(&config, &["serve", "--http", "0.0.0.0:0", "--no-auth"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("without a token") && err.contains("127.0.0.1"),
        "{err}"
    );

    let out = mcpmux(&config, &["serve"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_generated_token_is_printed_and_required() {
    let (_dir, config) = fleet(false).unwrap();
    let mut command = Command::new(MCPMUX);
    command
        .arg("--config")
        .arg(&config)
        .args(["serve", "--http", "127.0.0.1:0"])
        .env_remove("MCPMUX_SERVE_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut server = ChildGuard::spawn(&mut command).unwrap();
    let mut url = String::new();
    BufReader::new(server.child_mut().stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    // The line that says what is served comes first.
    let mut stderr = BufReader::new(server.child_mut().stderr.take().unwrap());
    let mut served = String::new();
    stderr.read_line(&mut served).unwrap();
    assert!(served.contains("servers from"), "{served}");
    let mut notice = String::new();
    stderr.read_line(&mut notice).unwrap();
    let token = notice
        .split("Bearer ")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .unwrap_or_else(|| panic!("no token in {notice:?}"));
    assert_eq!(token.len(), 64, "{notice}");
    let (status, _) = http_request(url.trim(), "POST", "/mcp", &[], "{}");
    assert_eq!(status, 401);
    let auth = format!("Bearer {token}");
    let (status, body) = http_request(
        url.trim(),
        "POST",
        "/mcp",
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "raw", "version": "1"}}})
        .to_string(),
    );
    assert_eq!(status, 200, "{body}");
}

/// A new user's first `serve`: an empty config says how to add a server, and a client that
/// closes the stream before its handshake (a host checking that the command starts) ends
/// serving with success.
#[test]
fn serving_an_empty_config_names_the_next_step_and_a_client_gone_early_is_no_failure() {
    let dir = tempfile::tempdir().unwrap();
    // `output()` gives the child no stdin: the stream ends before any handshake.
    let out = mcpmux(&dir.path().join("servers.json"), &["serve", "--stdio"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("no servers in") && stderr.contains("mcpmux servers add"),
        "{stderr}"
    );
    assert!(!stderr.contains("connection closed"), "{stderr}");
}

/// The fleet with five more servers of 100 generated tools each: 500 tools and more.
fn search_fleet() -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, config) = fleet(false).unwrap();
    for k in 1..=5 {
        let name = format!("gen{k}");
        let args = [
            "--name".to_string(),
            name.clone(),
            "--generated-tools".into(),
            "100".into(),
        ];
        add_stdio(&config, &name, &test_server_bin(), &args);
    }
    (dir, config)
}

/// The SDKs' clients in search mode: over 500 tools they see three, find the one they need
/// and call it, never listing the rest.
#[test]
fn the_sdk_clients_find_and_call_a_tool_among_hundreds_in_search_mode() {
    let (_dir, config) = search_fleet();
    let (_server, url) = serve_http(&config, &["--token", TOKEN, "--mode", "search"]);
    if let Some(python) = python_client() {
        run_python_client(&python, &["search", &url, TOKEN]);
    }
    run_ts_client(&["search", &url, TOKEN]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_search_mode_a_client_finds_and_calls_a_tool_among_hundreds_without_listing_them() {
    let (dir, config) = search_fleet();
    let (_server, url) = serve_http(&config, &["--token", TOKEN, "--mode", "search"]);
    let pool = client_pool(dir.path(), &url, TOKEN).await;
    let listed: Vec<String> = pool
        .list_tools(Some("fleet"))
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(listed, ["call_tool", "describe_tools", "search_tools"]);

    let call = |tool: &'static str, args: serde_json::Value| {
        let pool = pool.clone();
        async move {
            let r = pool
                .call_tool(&format!("mcp__fleet__{tool}"), args, CallOptions::default())
                .await
                .unwrap();
            assert_ne!(r.is_error, Some(true), "{tool}: {r:?}");
            r.structured_content.expect("structuredContent")
        }
    };
    let found = call(
        "search_tools",
        json!({"query": "count down reporting progress"}),
    )
    .await;
    let hits = found["tools"].as_array().unwrap();
    assert_eq!(hits[0]["name"], "demo__countdown", "{found:#}");
    assert_eq!(
        hits[0]["inputSchema"]["properties"]["steps"]["type"],
        "integer"
    );
    assert!(hits.len() <= 10 && hits.iter().skip(3).all(|h| h.get("inputSchema").is_none()));

    let r = pool
        .call_tool(
            "mcp__fleet__call_tool",
            json!({"name": "demo__countdown", "arguments": {"steps": 2}}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text(&r), "liftoff");

    let some_generated = call("search_tools", json!({"query": "invoice", "limit": 50})).await;
    let generated = some_generated["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap().to_string())
        .find(|n| n.starts_with("gen"))
        .expect("a generated tool about invoices");
    let described = call(
        "describe_tools",
        json!({"names": [generated.clone(), "nope__nothing", "demo__countdwn"]}),
    )
    .await;
    assert_eq!(described["tools"][0]["name"], generated.as_str());
    assert!(described["tools"][0]["inputSchema"].is_object());
    assert_eq!(
        described["unknown"],
        json!(["nope__nothing", "demo__countdwn"])
    );
    // A slip is answered with the name meant; a name near nothing, with nothing.
    assert_eq!(
        described["didYouMean"],
        json!({"demo__countdwn": ["demo__countdown"]}),
        "{described:#}"
    );
    let r = pool
        .call_tool(
            "mcp__fleet__call_tool",
            json!({"name": generated, "arguments": {}}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(text(&r).ends_with("answered"), "{r:?}");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_client_hears_of_list_changes_on_its_listen_stream() {
    let (dir, config) = fleet(false).unwrap();
    let (_server, url) = serve_direct(&config);
    let pool = client_pool(dir.path(), &url, TOKEN).await;
    let fleet_id = pool.connect("fleet").await.unwrap().id;
    assert_eq!(
        pool.server_info("fleet").unwrap().unwrap().protocol_version,
        "2026-07-28"
    );
    let before = pool.list_tools(Some("fleet")).await.unwrap();
    assert!(!before.iter().any(|t| t.name == "test__late"));
    let mut events = pool.events();
    pool.call_tool(
        "mcp__fleet__test__add_tool",
        json!({"name": "late"}),
        CallOptions::default(),
    )
    .await
    .unwrap();
    // The test server tells mcpmux serve, which tells this client on its listen stream.
    let heard = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(event) = events.recv().await {
            if matches!(&event, mcpmux::Event::ToolsChanged { server_id } if *server_id == fleet_id)
            {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(heard, Ok(true), "no tools:changed from the served fleet");
    let after = pool.list_tools(Some("fleet")).await.unwrap();
    assert!(
        after.iter().any(|t| t.name == "test__late"),
        "{:?}",
        after.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    pool.close().await;
}

/// A 2026-07-28 client that gives up on a call (its request's HTTP stream closes) stops it
/// upstream too: the server sees the cancellation, and the connection goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_the_client_abandons_is_cancelled_upstream() {
    let (dir, config) = fleet(false).unwrap();
    let (_server, url) = serve_direct(&config);
    let pool = client_pool(dir.path(), &url, TOKEN).await;
    let cancel = tokio_util::sync::CancellationToken::new();
    let options = CallOptions {
        cancel: Some(cancel.clone()),
        ..CallOptions::default()
    };
    let call = pool.call_tool("mcp__fleet__test__sleep", json!({"ms": 60000}), options);
    let give_up = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(call, give_up);
    assert!(
        matches!(result, Err(mcpmux::Error::Cancelled)),
        "{result:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let counted = pool
            .call_tool(
                "mcp__fleet__test__cancelled",
                json!({}),
                CallOptions::default(),
            )
            .await
            .unwrap();
        if text(&counted) == "1" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the upstream's sleep was not cancelled: {}",
            text(&counted)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    pool.close().await;
}

/// Resource subscriptions pass through under the served URI: a client before 2026-07-28 (the
/// Python SDK's, `resources/subscribe`) and a 2026-07-28 client (mcpmux's pool, a listen
/// stream) each hear of an update the test server announces.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_updates_reach_the_clients_that_subscribed() {
    let (dir, config) = fleet(false).unwrap();
    let (_server, url) = serve_direct(&config);
    python_scenario("subscribe", &url).await;

    let pool = client_pool(dir.path(), &url, TOKEN).await;
    let mut events = pool.events();
    pool.subscribe_resource("fleet", "mcpmux:test/test://hello")
        .await
        .unwrap();
    pool.call_tool(
        "mcp__fleet__test__notify",
        json!({"what": "updated", "uri": "test://hello"}),
        CallOptions::default(),
    )
    .await
    .unwrap();
    let heard = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Some(mcpmux::Event::ResourceUpdated { uri, .. }) = events.recv().await {
                return uri;
            }
        }
    })
    .await
    .expect("the 2026-07-28 client hears of the update");
    assert_eq!(heard, "mcpmux:test/test://hello");
    pool.close().await;
}

/// An upstream's log messages reach the clients that ask for them, at their level, named by
/// the server: a client before 2026-07-28 (the Python SDK's, `logging/setLevel`) and a
/// 2026-07-28 client (mcpmux's pool, `logLevel` in the call's `_meta`, answered on the call's
/// stream).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_log_messages_reach_the_clients_that_ask() {
    let (dir, config) = fleet(false).unwrap();
    let (_server, url) = serve_direct(&config);
    python_scenario("logs", &url).await;

    let pool = client_pool(dir.path(), &url, TOKEN).await;
    let mut events = pool.events();
    let log = |level: &str| {
        let args = json!({"message": format!("a {level} line"), "level": level});
        pool.call_tool("mcp__fleet__test__log", args, CallOptions::default())
    };
    log("warning").await.unwrap();
    pool.hear_logs_at(mcpmux::LogLevel::Info).await;
    log("debug").await.unwrap();
    log("warning").await.unwrap();
    let heard = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Some(mcpmux::Event::Log {
                level,
                source,
                message,
                ..
            }) = events.recv().await
                && source == "notification"
            {
                return (level, message);
            }
        }
    })
    .await
    .expect("the 2026-07-28 client hears the warning");
    assert_eq!(heard.0, "warning");
    // The served logger is the server's name; the upstream's own logger stays in the text.
    assert!(
        heard.1.starts_with("[test] ") && heard.1.ends_with("a warning line"),
        "{heard:?}"
    );
    pool.close().await;
}

/// A server added or removed in the config while serving (by another `mcpmux` process, as a
/// user does) shows up for a connected client without a restart: the served pool applies
/// the change and the client is told with `list_changed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_added_and_removed_while_serving_reach_connected_clients() {
    let (dir, config) = fleet(false).unwrap();
    let (_server, url) = serve_direct(&config);
    let pool = client_pool(dir.path(), &url, TOKEN).await;
    let lists_extra = || {
        let pool = pool.clone();
        async move {
            pool.list_tools(Some("fleet"))
                .await
                .unwrap()
                .iter()
                .any(|t| t.name == "extra__echo")
        }
    };
    let until = |want: bool| async move {
        let deadline = Instant::now() + Duration::from_secs(15);
        while lists_extra().await != want {
            assert!(
                Instant::now() < deadline,
                "extra__echo listed is not {want}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    assert!(!lists_extra().await);

    add_stdio(&config, "extra", &test_server_bin(), &[]);
    until(true).await;
    let echoed = pool
        .call_tool(
            "mcp__fleet__extra__echo",
            json!({"text": "added live"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text(&echoed), "added live");

    let out = mcpmux(&config, &["servers", "remove", "extra"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    until(false).await;
    pool.close().await;
}

/// Every tool call through serve is a line of the audit log: when, which client, which
/// server and tool, how long, how it ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_is_a_line_of_the_audit_log() {
    let (dir, config) = fleet(false).unwrap();
    let log = dir.path().join("logs/audit.jsonl");
    let log_arg = log.to_string_lossy().into_owned();
    let (_server, url) = serve_http(
        &config,
        &[
            "--token",
            TOKEN,
            "--mode",
            "direct",
            "--audit-log",
            &log_arg,
        ],
    );
    let pool = client_pool(dir.path(), &url, TOKEN).await;
    let call = |tool: &'static str, args: serde_json::Value| {
        let pool = pool.clone();
        async move {
            pool.call_tool(&format!("mcp__fleet__{tool}"), args, CallOptions::default())
                .await
                .unwrap()
        }
    };
    call("test__echo", json!({"text": "audited"})).await;
    let failed = call("test__fail", json!({})).await;
    assert_eq!(failed.is_error, Some(true));
    pool.close().await;

    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0]["tool"], "test__echo");
    assert_eq!(lines[0]["server"], "test");
    assert_eq!(lines[0]["outcome"], "ok");
    assert_eq!(lines[0]["client"], "mcpmux");
    assert!(lines[0]["ms"].as_f64().unwrap() >= 0.0);
    assert!(lines[0]["time"].as_str().unwrap().ends_with('Z'));
    assert!(lines[0].get("error").is_none());
    assert_eq!(lines[1]["tool"], "test__fail");
    assert_eq!(lines[1]["outcome"], "error");
    assert!(!lines[1]["error"].as_str().unwrap().is_empty());
}

/// What a 2026-07-28 upstream asks in a call's `input_required` round (a sample, the roots)
/// is asked of the client that made the call: the Python SDK's client answers, and the test
/// server's `ask` reports its sample and its two roots.
#[test]
fn an_upstreams_input_round_asks_the_calling_client_for_its_roots_and_a_sample() {
    let (_dir, config) = fleet(false).unwrap();
    let (_server, url) = serve_direct(&config);
    if let Some(python) = python_client() {
        run_python_client(&python, &["ask", &url, TOKEN]);
    }
}

/// A client whose configured token the server refuses is told that, not sent into an OAuth
/// sign-in the server does not offer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_configured_token_is_said_plainly() {
    let (dir, config) = fleet(false).unwrap();
    let (_server, url) = serve_http(&config, &["--token", TOKEN]);
    let pool = client_pool(dir.path(), &url, "not-the-token").await;
    let error = pool.connect("fleet").await.unwrap_err().to_string();
    assert!(
        error.contains("refused the Authorization header"),
        "{error}"
    );
    pool.close().await;
}

/// `/status` of the served pool (its body is chunked: the JSON follows a chunk size).
fn served_status(url: &str, token: &str) -> serde_json::Value {
    let auth = format!("Bearer {token}");
    let (status, body) = http_request(url, "GET", "/status", &[("Authorization", &auth)], "");
    assert_eq!(status, 200, "{body}");
    let json_body = &body[body.find("\r\n\r\n").unwrap() + 4..];
    let json_body =
        json_body.trim_start_matches(|c: char| c.is_ascii_hexdigit() || c.is_whitespace());
    serde_json::Deserializer::from_str(json_body)
        .into_iter()
        .next()
        .expect("a JSON body")
        .unwrap()
}

/// A server's state as `/status` of the served pool says it.
fn served_state(url: &str, token: &str, server: &str) -> String {
    let status_json = served_status(url, token);
    let servers = status_json["servers"].as_array().unwrap();
    let entry = servers.iter().find(|s| s["name"] == server).unwrap();
    entry["state"].as_str().unwrap().to_string()
}

/// `--idle-stop`: an upstream no call needed for that long is stopped; a client listing the
/// tools does not start it again (its tools come from the catalog), a call does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_upstreams_stop_and_a_listing_does_not_start_them() {
    let (dir, config) = fleet(false).unwrap();
    let (_server, url) = serve_http(
        &config,
        &["--token", TOKEN, "--mode", "direct", "--idle-stop", "1"],
    );
    let pool = client_pool(dir.path(), &url, TOKEN).await;
    let call = || {
        let args = json!({"text": "warm"});
        pool.call_tool("mcp__fleet__demo__echo", args, CallOptions::default())
    };
    assert_eq!(text(&call().await.unwrap()), "warm");
    assert_eq!(served_state(&url, TOKEN, "demo"), "connected");
    let deadline = Instant::now() + Duration::from_secs(15);
    while served_state(&url, TOKEN, "demo") != "disconnected" {
        assert!(
            Instant::now() < deadline,
            "the idle upstream was never stopped"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let listed = pool
        .list_tools_with(Some("fleet"), mcpmux::ListOptions::refresh())
        .await
        .unwrap();
    assert!(listed.iter().any(|t| t.name == "demo__echo"), "{listed:?}");
    assert_eq!(served_state(&url, TOKEN, "demo"), "disconnected");
    assert_eq!(text(&call().await.unwrap()), "warm");
    assert_eq!(served_state(&url, TOKEN, "demo"), "connected");
    pool.close().await;
}

/// `--sse`: clients of the HTTP+SSE transport (protocol 2024-11-05) get the fleet at `/sse`:
/// the Python SDK's `sse_client` and mcpmux's own pool (configured as type `sse`) list and
/// call; the token and the DNS-rebinding check hold there too, and without `--sse` there is
/// no such path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_sse_clients_use_the_fleet_when_asked_for() {
    let (dir, config) = fleet(false).unwrap();
    let (_server, url) = serve_http(&config, &["--token", TOKEN, "--mode", "direct", "--sse"]);
    let sse = url.replace("/mcp", "/sse");
    python_scenario("sse", &sse).await;

    let sse_transport = Some(mcpmux::TransportType::Sse);
    let options = mcpmux::PoolOptions::default();
    let client = client_pool_with(dir.path(), &sse, TOKEN, sse_transport, options).await;
    let echoed = client
        .call_tool(
            "mcp__fleet__demo__echo",
            json!({"text": "sse"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text(&echoed), "sse");
    client.close().await;

    let (status, body) = http_request(&url, "GET", "/sse", &[], "");
    assert_eq!(status, 401, "{body}");
    let auth = [
        ("Authorization", "Bearer t0ken-of-the-tests"),
        ("Host", "evil.example"),
    ];
    let (status, body) = http_request(&url, "GET", "/sse", &auth, "");
    assert_eq!(status, 403, "{body}");
    let posted = [("Authorization", "Bearer t0ken-of-the-tests")];
    let (status, body) = http_request(&url, "POST", "/messages?sessionId=nope", &posted, "{}");
    assert_eq!(status, 404, "{body}");

    let (_plain, plain_url) = serve_http(&config, &["--token", TOKEN]);
    let (status, body) = http_request(&plain_url, "GET", "/sse", &posted, "");
    assert_eq!(status, 404, "{body}");
}

/// A 2026-07-28 client (mcpmux's pool, with its host handlers) answers an upstream's
/// `input_required` round through serve: the gateway passes the questions back as its own
/// round and the upstream's state sealed in its own; the same through the search tools'
/// `call_tool`, whose state is bound to that call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(
    deprecated,
    reason = "sampling and roots (SEP-2577) are what the test server's `ask` asks for"
)]
async fn a_2026_client_answers_an_upstreams_round_through_serve() {
    let (dir, config) = fleet(false).unwrap();
    for (mode, tool, args) in [
        ("direct", "mcp__fleet__test__ask", json!({})),
        (
            "search",
            "mcp__fleet__call_tool",
            json!({"name": "test__ask", "arguments": {}}),
        ),
    ] {
        let (_server, url) = serve_http(&config, &["--token", TOKEN, "--mode", mode]);
        let client_dir = dir.path().join(mode);
        std::fs::create_dir(&client_dir).unwrap();
        let pool = client_pool(&client_dir, &url, TOKEN).await;
        pool.set_sampling_handler(Some(std::sync::Arc::new(|_req| {
            Box::pin(async {
                Ok(serde_json::from_value(json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": "hi from the client"},
                    "model": "m"
                }))
                .unwrap())
            })
        })));
        pool.set_elicitation_handler(Some(std::sync::Arc::new(|_req| {
            Box::pin(async {
                Ok(
                    mcpmux::model::ElicitResult::new(mcpmux::model::ElicitationAction::Accept)
                        .with_content(json!({"name": "Ada"})),
                )
            })
        })));
        pool.set_roots(vec![mcpmux::model::Root::new("file:///only")])
            .await;
        let answered = pool
            .call_tool(tool, args, CallOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert_eq!(
            text(&answered),
            r#"name="Ada" sample="hi from the client" roots=1"#,
            "{mode}"
        );
        pool.close().await;
    }
}

/// A server marked `perClient` (`servers add --per-client`): each legacy session has a process
/// of its own, ended with the session (the Python SDK client's two sessions); a 2026-07-28
/// client, which has no session, has one too, kept across its calls; a shared server stays one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_per_client_server_gives_each_session_its_own_process() {
    let Some(python) = python_client() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    add_stdio(
        &config,
        "demo",
        std::path::Path::new(MCPMUX),
        &["demo-server".into()],
    );
    let bin = mcpmux_tests::test_server_bin();
    let added = mcpmux(
        &config,
        &[
            "servers",
            "add",
            "test",
            "--command",
            bin.to_str().unwrap(),
            "--per-client",
            "--max-clients",
            "4",
        ],
    );
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let saved = std::fs::read_to_string(&config).unwrap();
    assert!(saved.contains(r#""sessionScope": "perClient""#), "{saved}");
    let (_server, url) = serve_direct(&config);

    run_python_client(&python, &["per-client", &url, TOKEN]);

    let pool = client_pool(dir.path(), &url, TOKEN).await;
    let pid = || async {
        let result = pool
            .call_tool("mcp__fleet__test__pid", json!({}), CallOptions::default())
            .await
            .unwrap();
        text(&result).parse::<u32>().unwrap()
    };
    let first = pid().await;
    assert_eq!(
        pid().await,
        first,
        "a 2026-07-28 client keeps its process across calls"
    );
    assert!(mcpmux_tests::pid_alive(first));
    pool.close().await;
}

/// `mcpmux serve` tells servers it hosts MCP Apps, and passes views on only to the clients
/// that render them: the view under the fleet's `ui://` address, and the view's own tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_reach_the_clients_that_render_them_and_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    add_stdio(&config, "app", &test_server_bin(), &["--apps".into()]);
    let (_server, url) = serve_direct(&config);

    let host_dir = dir.path().join("host");
    std::fs::create_dir(&host_dir).unwrap();
    let renders_views = mcpmux::PoolOptions {
        apps: Some(mcpmux::AppsOptions::default()),
        ..mcpmux::PoolOptions::default()
    };
    let host = client_pool_with(&host_dir, &url, TOKEN, None, renders_views).await;
    let tools = host.list_tools(Some("fleet")).await.unwrap();
    let dashboard = tools.iter().find(|t| t.name == "app__dashboard").unwrap();
    assert_eq!(
        dashboard.view_uri(),
        Some("ui://mcpmux.app/test/dashboard.html".into())
    );
    assert!(tools.iter().any(|t| t.name == "app__refresh"), "{tools:?}");
    let view = host.app_view("mcp__fleet__app__dashboard").await.unwrap();
    assert!(view.html.contains("test dashboard"), "{}", view.html);
    host.close().await;

    let plain = client_pool(dir.path(), &url, TOKEN).await;
    let tools = plain.list_tools(Some("fleet")).await.unwrap();
    assert!(tools.iter().all(|t| t.name != "app__refresh"), "{tools:?}");
    assert!(tools.iter().all(|t| t.view_uri().is_none()), "{tools:?}");
    plain.close().await;
}
