//! Replicas of `mcpmux serve` behind a real round-robin load balancer (nginx, from Debian's
//! package), with no sticky routing and no shared store: three processes on one config and one
//! session key. A legacy client (the Python SDK 2.3's, on a session) and a 2026-07-28 client
//! (mcpmux's own pool, stateless) each make 50 calls; every one must land, and every replica
//! must have answered some.

use std::path::Path;

use mcpmux::CallOptions;
use mcpmux_tests::ChildGuard;
use serde_json::json;

#[allow(dead_code)]
use crate::support::*;

const TOKEN: &str = "replica-t0ken-of-the-tests";
const SESSION_KEY: &str = "one secret the three replicas share";
const CALLS: usize = 50;

/// An nginx that spreads requests over `replicas` in turn (its default), on a free port of
/// 127.0.0.1; its URL. Buffering is off so that SSE answers stream through.
fn balancer(nginx: &Path, dir: &Path, replicas: &[String]) -> (ChildGuard, String) {
    let servers: String = replicas
        .iter()
        .map(|url| {
            let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
            format!("        server {authority};\n")
        })
        .collect();
    let http = format!(
        "    upstream replicas {{\n{servers}    }}\n\
         server {{\n        listen 127.0.0.1:{{port}};\n        location / {{\n\
         proxy_pass http://replicas;\n            proxy_http_version 1.1;\n\
         proxy_set_header Host $host:$server_port;\n\
         proxy_set_header Connection \"\";\n            proxy_buffering off;\n\
         proxy_read_timeout 60s;\n        }}\n    }}"
    );
    let (guard, port) = mcpmux_tests::nginx::start(nginx, dir, &http);
    (guard, format!("http://127.0.0.1:{port}/mcp"))
}

/// The calls a replica answered, from its own /metrics.
fn calls_answered(replica: &str) -> u64 {
    let (status, body) = http_request(
        replica,
        "GET",
        "/metrics",
        &[("Authorization", &format!("Bearer {TOKEN}"))],
        "",
    );
    assert_eq!(status, 200, "{body}");
    body.lines()
        .filter(|l| l.starts_with("mcpmux_tool_calls_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_behind_a_round_robin_balancer_serve_every_call() {
    let Some(nginx) = mcpmux_tests::nginx::nginx() else {
        mcpmux_tests::skip_or_fail("nginx (Debian's package)");
        return;
    };
    let Some(python) = python_client() else {
        return;
    };
    let (dir, config) = fleet(false).unwrap();
    let flags = [
        "--token",
        TOKEN,
        "--session-key",
        SESSION_KEY,
        "--mode",
        "direct",
    ];
    let replicas: Vec<(ChildGuard, String)> = (0..3).map(|_| serve_http(&config, &flags)).collect();
    let urls: Vec<String> = replicas.iter().map(|(_, url)| url.clone()).collect();
    let (_nginx, url) = balancer(&nginx, dir.path(), &urls);

    // A legacy client holds one session for all its calls; each request meets the next
    // replica, which opens the session id the first one sealed.
    let legacy = {
        let (python, url) = (python.clone(), url.clone());
        tokio::task::spawn_blocking(move || {
            run_python_client(&python, &["calls", &url, TOKEN, &CALLS.to_string()])
        })
    };

    // A 2026-07-28 client has no session at all.
    let pool = client_pool(dir.path(), &url, TOKEN).await;
    for i in 0..CALLS {
        let sent = format!("call {i}");
        let echoed = pool
            .call_tool(
                "mcp__fleet__test__echo",
                json!({"text": sent}),
                CallOptions::default(),
            )
            .await
            .unwrap_or_else(|e| panic!("call {i} through the balancer: {e}"));
        assert_eq!(text(&echoed), sent);
    }
    assert_eq!(
        pool.server_info("fleet").unwrap().unwrap().protocol_version,
        "2026-07-28"
    );
    pool.close().await;
    legacy.await.expect("the legacy client ran");

    let answered: Vec<u64> = urls.iter().map(|u| calls_answered(u)).collect();
    assert_eq!(
        answered.iter().sum::<u64>(),
        2 * CALLS as u64,
        "every call answered once: {answered:?}"
    );
    assert!(
        answered.iter().all(|&n| n > 0),
        "every replica answered calls (no sticky routing): {answered:?}"
    );
}

#[test]
fn a_session_id_from_another_key_is_not_found_and_says_why() {
    let (_dir, config) = fleet(false).unwrap();
    let (_a, a) = serve_http(&config, &["--token", TOKEN, "--session-key", SESSION_KEY]);
    let (_b, b) = serve_http(
        &config,
        &[
            "--token",
            TOKEN,
            "--session-key",
            "a different secret for b",
        ],
    );
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}
    })
    .to_string();
    let auth = format!("Bearer {TOKEN}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let (status, response) = http_request(&a, "POST", "/mcp", &headers, &initialize);
    assert_eq!(status, 200, "{response}");
    let session = response
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_string())
        })
        .expect("initialize answers with a session id");
    assert!(session.len() > 40, "a sealed id, not rmcp's own: {session}");

    let mut with_session = headers.to_vec();
    with_session.push(("Mcp-Session-Id", &session));
    with_session.push(("Mcp-Protocol-Version", "2025-11-25"));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, response) =
        http_request(&a, "POST", "/mcp", &with_session, &initialized.to_string());
    assert_eq!(status, 202, "{response}");
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    let (status, response) = http_request(&b, "POST", "/mcp", &with_session, &ping);
    assert_eq!(status, 404, "{response}");
    assert!(response.contains("session keys"), "{response}");
    // The replica that sealed it still knows it.
    let (status, response) = http_request(&a, "POST", "/mcp", &with_session, &ping);
    assert_eq!(status, 200, "{response}");
}
