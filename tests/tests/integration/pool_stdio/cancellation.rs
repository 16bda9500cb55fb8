//! Cancelling a call (a token, or dropping its future): it returns at once, the server is
//! told, the connection stays.

use std::time::{Duration, Instant};

use crate::common::*;
use mcpmux::{CallOptions, ErrorKind};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_call_returns_at_once_and_keeps_the_connection() {
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    let pid = pid_of(&pool, "mcp__t__pid").await;
    let token = tokio_util::sync::CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let err = pool
        .call_tool(
            "mcp__t__sleep",
            json!({"ms": 10_000}),
            CallOptions {
                cancel: Some(token),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(2));
    // A dropped call future cancels too.
    let _ = tokio::time::timeout(
        Duration::from_millis(200),
        pool.call_tool("mcp__t__sleep", json!({"ms": 10_000}), Default::default()),
    )
    .await;
    assert_eq!(pid_of(&pool, "mcp__t__pid").await, pid);
    // Both reached the server as `notifications/cancelled` for the right request.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let r = call_ok(&pool, "mcp__t__cancelled", json!({})).await;
        if text(&r) == "2" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "server saw {} cancellations",
            text(&r)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    pool.close().await;
}
