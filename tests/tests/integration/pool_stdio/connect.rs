//! Connecting and disconnecting: `connect_all`, `disconnect`, and idle servers stopped
//! (`idleStopMs`) until the next request.

use std::time::Duration;

use crate::common::*;
use mcpmux::{ConnectionPhase, ConnectionState, Event, PoolOptions};
use mcpmux_tests::wait_for_pid_exit;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_all_connects_in_parallel_and_one_failure_fails_alone() {
    let pool = pool().await;
    for i in 0..4 {
        add_test_server(&pool, &format!("s{i}"), &[]).await;
    }
    pool.add_server(stdio("dead", "/nonexistent/x", &[]))
        .await
        .unwrap();
    let states = pool.connect_all().await;
    assert_eq!(states.len(), 5);
    for s in &states {
        let expected = if s.name == "dead" {
            ConnectionState::Error
        } else {
            ConnectionState::Connected
        };
        assert_eq!(s.state, expected, "{s:?}");
    }
    pool.close().await;
}

// A current-thread runtime runs the tool fetch that a connect starts in the background only
// once the caller awaits, i.e. after `disconnect` has taken the connection: that fetch must not
// connect the server again, and the state must say what the connection is.
#[tokio::test(flavor = "current_thread")]
async fn disconnect_right_after_connect_stays_disconnected_until_the_next_connect() {
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    for _ in 0..3 {
        let mut events = pool.events();
        assert_eq!(
            pool.connect("t").await.unwrap().state,
            ConnectionState::Connected
        );
        pool.disconnect("t").await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let [st] = &pool.server_states()[..] else {
            panic!()
        };
        assert_eq!(st.state, ConnectionState::Disconnected, "{st:?}");
        assert_eq!(st.pid, None, "{st:?}");
        let after: Vec<_> = drain(&mut events)
            .into_iter()
            .skip_while(|e| {
                !matches!(
                    e,
                    Event::ConnectionState {
                        phase: ConnectionPhase::Closed,
                        ..
                    }
                )
            })
            .filter(|e| matches!(e, Event::ServerConnected { .. }))
            .collect();
        assert!(
            after.is_empty(),
            "connected again after disconnect: {after:?}"
        );
        let states = pool.connect_all().await;
        assert_eq!(states[0].state, ConnectionState::Connected, "{states:?}");
        pool.disconnect("t").await.unwrap();
    }
    pool.close().await;
}

/// `idleStopMs`: a server no request took for that long is stopped (its process ends, the
/// host hears why), a call that runs longer than that is not cut, a server with a resource
/// subscription is kept, and the next request starts a stopped one again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_servers_are_stopped_and_start_again_on_the_next_request() {
    let pool = pool_with(PoolOptions {
        idle_stop_ms: 1000,
        ..options()
    })
    .await;
    // Lists it says may be kept: a stopped server's tools then come from the cache.
    add_test_server(&pool, "t", &["--tools-ttl-ms", "600000"]).await;
    add_test_server(&pool, "kept", &[]).await;
    let mut events = pool.events();
    let pid = |pool: &mcpmux::Pool, server: &str| {
        let states = pool.server_states();
        let state = states.iter().find(|s| s.name == server).unwrap();
        (state.state, state.pid)
    };

    // A call longer than the idle time runs to its end.
    let slept = call_ok(&pool, "mcp__t__sleep", json!({"ms": 2500})).await;
    assert!(!slept.is_error.unwrap_or(false), "{slept:?}");
    let (state, first) = pid(&pool, "t");
    let first = first.expect("a running stdio server has a pid");
    assert_eq!(state, ConnectionState::Connected);
    pool.subscribe_resource("kept", "test://hello")
        .await
        .unwrap();

    let said = wait_event(
        &mut events,
        Duration::from_secs(10),
        |e| matches!(e, Event::Log { message, .. } if message.contains("without a request")),
    )
    .await;
    assert!(said.is_some(), "the host is told why the server stopped");
    assert!(
        wait_for_pid_exit(first, Duration::from_secs(10)),
        "the process ended"
    );
    assert_eq!(pid(&pool, "t").0, ConnectionState::Disconnected);
    // Lists still answer, from the cache, without starting it.
    let listed = pool.list_tools(Some("t")).await.unwrap();
    assert!(listed.iter().any(|t| t.name == "echo"));
    assert_eq!(pid(&pool, "t").0, ConnectionState::Disconnected);

    let again = call_ok(&pool, "mcp__t__echo", json!({"text": "back"})).await;
    assert_eq!(text(&again), "back");
    let (state, second) = pid(&pool, "t");
    assert_eq!(state, ConnectionState::Connected);
    assert_ne!(second, Some(first), "a new process");

    let (state, _) = pid(&pool, "kept");
    assert_eq!(
        state,
        ConnectionState::Connected,
        "a subscription keeps its server"
    );
}
