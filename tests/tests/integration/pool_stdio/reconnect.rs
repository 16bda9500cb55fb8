//! A server that dies: calls in flight fail fast with how it ended, and the pool reconnects.

use std::time::Duration;

use crate::common::*;
use mcpmux::{ConnectionPhase, ConnectionState, Event};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_during_call_fails_fast_and_next_call_respawns() {
    let pool = pool().await;
    add_test_server(&pool, "t", &["--stderr-lines", "2"]).await;
    let pid = pid_of(&pool, "mcp__t__pid").await;
    let mut events = pool.events();
    let call = {
        let pool = pool.pool.clone();
        tokio::spawn(async move {
            pool.call_tool("mcp__t__sleep", json!({"ms": 20_000}), Default::default())
                .await
        })
    };
    // SAFETY: kills the test's own child process.
    let kill = || unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    };
    let (after, bound) = (Duration::from_millis(300), Duration::from_secs(1));
    let err = fails_fast_when_killed(call, after, kill, bound, "t").await;
    // The call that found the pipe closed says how the server ended, as the state does
    // (not "Transport closed"), and the state keeps it while the reconnect waits.
    let exited = "the server exited (signal: 9 (SIGKILL)), its stderr ending with:\n\
                  test-server stderr line 1\ntest-server stderr line 2";
    assert!(err.to_string().contains(exited), "{err}");
    for phase in [ConnectionPhase::Lost, ConnectionPhase::Backoff] {
        let seen = wait_event(
            &mut events,
            Duration::from_secs(5),
            |e| matches!(e, Event::ConnectionState { phase: p, .. } if *p == phase),
        )
        .await;
        let Some(Event::ConnectionState { error, .. }) = seen else {
            panic!("no {phase:?} state after the kill");
        };
        let error = error.unwrap_or_default();
        assert!(error.contains(exited), "{phase:?}: {error}");
    }
    let new_pid = pid_of(&pool, "mcp__t__pid").await;
    assert_ne!(new_pid, pid);

    // So does any other request in flight (here one of a method mcpmux has no verb for,
    // which goes through rmcp's session rather than the direct path).
    let request = {
        let pool = pool.pool.clone();
        tokio::spawn(async move {
            let params = json!({"name": "sleep", "arguments": {"ms": 20_000}});
            let params = params.as_object().cloned();
            pool.request("t", "tools/call", params).await
        })
    };
    // SAFETY: as above.
    let kill = || unsafe {
        libc::kill(new_pid as i32, libc::SIGKILL);
    };
    let err = fails_fast_when_killed(request, after, kill, bound, "t").await;
    assert!(err.to_string().contains(exited), "{err}");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_reconnects_by_itself() {
    let pool = pool().await;
    let mut events = pool.events();
    add_test_server(&pool, "t", &[]).await;
    let pid = kill_and_wait_for_reconnect(&pool, &mut events, "mcp__t__pid").await;
    let status = &pool.server_states()[0];
    assert_eq!(status.state, ConnectionState::Connected);
    assert_ne!(status.pid, Some(pid));
    pool.close().await;
}
