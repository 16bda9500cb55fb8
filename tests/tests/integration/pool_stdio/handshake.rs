//! The handshake: both protocol eras, a probe answered late, a retry that fails again.

use std::time::Duration;

use crate::common::*;
use mcpmux::{ErrorKind, PoolOptions};
use serde_json::json;

/// A server that answers the `server/discover` probe with a result (as some answer every
/// unknown method) is asked again with `initialize` alone; when that fails too, the error
/// says both what the retry met and how the first try failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_handshake_that_fails_again_tells_both_failures() {
    let pool = pool().await;
    let odd = r#"read line
id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
case "$line" in
  *server/discover*) printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"; exec sleep 20 ;;
  *) echo "initialize is not for me" >&2; exit 3 ;;
esac"#;
    pool.add_server(stdio("odd", "sh", &["-c", odd]))
        .await
        .unwrap();
    let err = tokio::time::timeout(Duration::from_secs(20), pool.connect("odd"))
        .await
        .expect("the handshakes hang")
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Connection, "{err}");
    let message = err.to_string();
    assert!(
        message.contains("the first handshake failed (expect initialized result"),
        "{message}"
    );
    assert!(
        message.contains("; asked again with `initialize` alone: the server exited"),
        "{message}"
    );
    assert!(message.ends_with("initialize is not for me"), "{message}");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_protocol_eras_connect_and_pass_health_checks_on_reuse() {
    // Idle threshold 0: every reuse runs the health check, so a check that fails would show
    // as a new process behind the same server.
    let pool = pool_with(PoolOptions {
        health_check_idle_ms: 0,
        ..options()
    })
    .await;
    add_test_server(&pool, "modern", &[]).await;
    add_test_server(&pool, "legacy", &["--legacy"]).await;
    for name in ["modern", "legacy"] {
        let tool = format!("mcp__{name}__pid");
        let first = pid_of(&pool, &tool).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(pid_of(&pool, &tool).await, first, "{name} was reconnected");
    }
    let states = pool.server_states();
    let version = |n: &str| {
        states
            .iter()
            .find(|s| s.name == n)
            .and_then(|s| s.protocol_version.clone())
            .unwrap()
    };
    assert_eq!(version("modern"), "2026-07-28");
    assert!(
        version("legacy").as_str() < "2026-07-28",
        "{}",
        version("legacy")
    );
    pool.close().await;
}

/// rmcp gives up on the `server/discover` probe after 10 s and sends `initialize`; a legacy
/// server slow to start answers the probe after that (seen with `npx` server-everything in a
/// busy CI run), which failed the handshake. The pool connects again with `initialize` alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_server_answering_the_probe_after_its_timeout_still_connects() {
    let version = slow_server_connects(&["--slow-discover", "10500"]).await;
    assert!(version.as_str() < "2026-07-28", "{version}");
}

/// Adds the test server started with `args` as "slow", connects it and calls it; gives the
/// protocol version it was connected with.
async fn slow_server_connects(args: &[&str]) -> String {
    let pool = pool().await;
    add_test_server(&pool, "slow", args).await;
    pool.connect("slow").await.unwrap();
    let version = pool
        .server_states()
        .into_iter()
        .find(|s| s.name == "slow")
        .and_then(|s| s.protocol_version)
        .expect("a connected server has a protocol version");
    let result = call_ok(&pool, "mcp__slow__echo", json!({"text": "late"})).await;
    assert_eq!(text(&result), "late");
    pool.close().await;
    version
}

/// The same for a 2026-07-28 server slow on its first start only (as `npx` or `uvx` fetching
/// the package; seen with FastMCP in a busy CI run): its late result to the probe came while
/// rmcp waited for `initialize`'s, which failed the handshake ("conflict initialized response
/// id"). The pool starts it again and asks with `server/discover` alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_server_slow_on_its_first_start_connects_with_the_new_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("downloaded");
    let marker_arg = marker.to_str().unwrap();
    let args = ["--slow-first-start", "10500", "--marker", marker_arg];
    let version = slow_server_connects(&args).await;
    assert!(marker.exists(), "the first start did not run");
    assert_eq!(version, "2026-07-28");
}
