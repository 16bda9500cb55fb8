//! Servers that keep state for their client (`sessionScope: perClient`): through a view of
//! the pool for one client (`Pool::for_client`), each client has a process of its own, at
//! most `maxClients` at once; the least recently used idle one makes room, busy ones are never
//! cut, and a client's processes end with its view. Real processes of the test server.

use std::time::Duration;

use crate::common::*;
use mcpmux::{ErrorKind, PoolOptions, ServerPatch, SessionScope};
use mcpmux_tests::{pid_alive, wait_for_pid_exit};
use serde_json::json;

const PID: &str = "mcp__t__pid";

async fn per_client_pool(max_clients: u32) -> TestPool {
    let pool = pool_with(PoolOptions {
        idle_stop_ms: 0,
        ..options()
    })
    .await;
    pool.add_server(mcpmux::ServerInput {
        session_scope: Some(SessionScope::PerClient),
        max_clients: Some(max_clients),
        ..test_server("t", &[])
    })
    .await
    .unwrap();
    add_test_server(&pool, "shared", &[]).await;
    pool
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_client_has_its_own_process_and_the_others_stay_shared() {
    let pool = per_client_pool(4).await;
    let (a, b) = (pool.for_client("a"), pool.for_client("b"));
    let pa = pid_of(&a, PID).await;
    assert_eq!(pid_of(&a, PID).await, pa, "a client keeps its process");
    let pb = pid_of(&b, PID).await;
    assert_ne!(pa, pb, "another client has another");
    let unscoped = pid_of(&pool, PID).await;
    assert!(
        unscoped != pa && unscoped != pb,
        "the pool itself has the shared one"
    );
    // A shared server is one process for every view.
    let shared = pid_of(&pool, "mcp__shared__pid").await;
    assert_eq!(pid_of(&a, "mcp__shared__pid").await, shared);
    assert_eq!(pid_of(&b, "mcp__shared__pid").await, shared);
    // The server's state is the shared connection's: a client's own is not announced.
    let states = pool.server_states();
    let t = states.iter().find(|s| s.name == "t").unwrap();
    assert_eq!(t.pid, Some(unscoped));

    // A client's view dropped: its process ends (the whole process group), others stay.
    drop(a);
    assert!(
        wait_for_pid_exit(pa, Duration::from_secs(10)),
        "a's process ended"
    );
    assert!(pid_alive(pb) && pid_alive(unscoped) && pid_alive(shared));
    // The same client coming back starts afresh.
    let again = pid_of(&pool.for_client("a"), PID).await;
    assert!(again != pa);
    pool.close().await;
    for pid in [pb, unscoped, shared] {
        assert!(
            wait_for_pid_exit(pid, Duration::from_secs(10)),
            "closed with the pool"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_cap_the_idlest_client_makes_room_and_busy_ones_are_never_cut() {
    let pool = per_client_pool(2).await;
    let (a, b, c) = (
        pool.for_client_kept("a"),
        pool.for_client_kept("b"),
        pool.for_client_kept("c"),
    );
    let pa = pid_of(&a, PID).await;
    let pb = pid_of(&b, PID).await;
    // a was used least recently: c takes its place.
    let pc = pid_of(&c, PID).await;
    assert!(
        wait_for_pid_exit(pa, Duration::from_secs(10)),
        "a made room"
    );
    assert!(pid_alive(pb) && pid_alive(pc));

    // Both clients busy: a third is refused, saying what to change, and neither is cut.
    let long = |view: mcpmux::Pool| async move {
        view.call_tool("mcp__t__sleep", json!({"ms": 3000}), Default::default())
            .await
    };
    let (busy_b, busy_c) = (tokio::spawn(long(b.clone())), tokio::spawn(long(c.clone())));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let refused = a
        .call_tool(PID, json!({}), Default::default())
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Connection);
    assert!(refused.to_string().contains("maxClients"), "{refused}");
    for busy in [busy_b, busy_c] {
        let done = busy.await.unwrap().unwrap();
        assert!(!done.is_error.unwrap_or(false), "{done:?}");
    }
    assert_eq!(pid_of(&b, PID).await, pb);
    assert_eq!(pid_of(&c, PID).await, pc);

    // A kept client's processes end when asked.
    pool.end_client("b").await;
    assert!(wait_for_pid_exit(pb, Duration::from_secs(10)));
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_record_ends_the_clients_processes() {
    let pool = per_client_pool(4).await;
    let a = pool.for_client("a");
    let before = pid_of(&a, PID).await;
    let mut config = pool.get_server("t").await.unwrap().config;
    config.env.insert("CHANGED".into(), "1".into());
    pool.update_server(
        "t",
        ServerPatch {
            config: Some(config),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert!(wait_for_pid_exit(before, Duration::from_secs(10)));
    let after = pid_of(&a, PID).await;
    assert_ne!(
        after, before,
        "the next request starts one with the new config"
    );
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_stop_ends_a_clients_process_too() {
    let pool = pool_with(PoolOptions {
        idle_stop_ms: 500,
        ..options()
    })
    .await;
    pool.add_server(mcpmux::ServerInput {
        session_scope: Some(SessionScope::PerClient),
        ..test_server("t", &[])
    })
    .await
    .unwrap();
    let kept = pool.for_client_kept("k");
    let pid = pid_of(&kept, PID).await;
    assert!(
        wait_for_pid_exit(pid, Duration::from_secs(10)),
        "stopped when idle"
    );
    assert_ne!(
        pid_of(&kept, PID).await,
        pid,
        "and started again when asked"
    );
    pool.close().await;
}

#[tokio::test]
async fn max_clients_zero_is_refused_with_what_to_change() {
    let pool = pool().await;
    let refused = pool
        .add_server(mcpmux::ServerInput {
            session_scope: Some(SessionScope::PerClient),
            max_clients: Some(0),
            ..test_server("t", &[])
        })
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("maxClients must be 1 or more"),
        "{refused}"
    );
}
