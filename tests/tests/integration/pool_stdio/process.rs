//! A server's process: started without a shell, with the allow-listed environment and its
//! `cwd`; stopped, group and all, when the pool closes.

use std::time::{Duration, Instant};

use crate::common::*;
use mcpmux::{ErrorKind, PoolOptions};
use mcpmux_tests::{pid_alive, wait_for_pid_exit};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn env_is_the_allow_list_and_the_records_and_cwd_is_set() {
    let pool = pool().await;
    let mut input = test_server("t", &[]);
    input
        .config
        .env
        .insert("MCPMUX_TEST_VALUE".into(), "overlaid".into());
    let dir = tempfile::tempdir().unwrap();
    input.config.cwd = Some(dir.path().to_string_lossy().into_owned());
    pool.add_server(input).await.unwrap();
    let r = call_ok(&pool, "mcp__t__env", json!({"name": "MCPMUX_TEST_VALUE"})).await;
    assert_eq!(text(&r), "overlaid");
    let r = call_ok(&pool, "mcp__t__env", json!({"name": "PATH"})).await;
    assert!(!text(&r).is_empty(), "PATH was not inherited");
    // This process's other variables are not the server's (cargo sets CARGO_PKG_NAME).
    assert!(std::env::var("CARGO_PKG_NAME").is_ok());
    let r = call_ok(&pool, "mcp__t__env", json!({"name": "CARGO_PKG_NAME"})).await;
    assert_eq!(text(&r), "CARGO_PKG_NAME is not set");
    let r = call_ok(&pool, "mcp__t__cwd", json!({})).await;
    assert_eq!(
        std::fs::canonicalize(text(&r)).unwrap(),
        std::fs::canonicalize(dir.path()).unwrap()
    );
    pool.close().await;
}

/// A server is started without a shell: what looks like shell in its command or its arguments
/// reaches it as the text it is, and runs nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_is_started_without_a_shell() {
    let pool = pool().await;
    let dir = tempfile::tempdir().unwrap();
    let marker = |name: &str| dir.path().join(name);
    let name = format!(
        "$(touch {}) `touch {}`; touch {} | touch {}",
        marker("a").display(),
        marker("b").display(),
        marker("c").display(),
        marker("d").display()
    );
    add_test_server(&pool, "t", &["--name", &name]).await;
    pool.connect("t").await.unwrap();
    let info = pool.server_info("t").unwrap().unwrap();
    assert_eq!(info.server_info.unwrap()["name"], name.as_str());
    let command = format!("true; touch {}", marker("e").display());
    pool.add_server(stdio("shelled", &command, &[]))
        .await
        .unwrap();
    let e = pool.connect("shelled").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Connection, "{e}");
    for file in ["a", "b", "c", "d", "e"] {
        assert!(!marker(file).exists(), "a shell ran: {file} was made");
    }
    pool.close().await;
}

/// A server that ignores its stdin closing and SIGTERM is killed, group and all, when the pool
/// closes: nothing outlives the pool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ignores_sigterm_is_killed_on_close() {
    let pool = pool().await;
    add_test_server(&pool, "stubborn", &["--stubborn"]).await;
    let r = call_ok(&pool, "mcp__stubborn__echo", json!({"text": "here"})).await;
    assert_eq!(text(&r), "here");
    let pid = pool.server_states()[0].pid.expect("a pid");
    let started = Instant::now();
    pool.close().await;
    assert!(
        wait_for_pid_exit(pid, Duration::from_secs(15)),
        "the stubborn server outlived the pool"
    );
    assert!(!pid_alive(pid));
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_drains_calls_in_flight_and_leaves_no_process() {
    let pool = pool_with(PoolOptions {
        shutdown_timeout_ms: 1_500,
        ..options()
    })
    .await;
    add_test_server(&pool, "t", &[]).await;
    let pid = pid_of(&pool, "mcp__t__pid").await;
    let r = call_ok(&pool, "mcp__t__spawn_grandchild", json!({})).await;
    let grandchild: u32 = text(&r).trim().parse().unwrap();
    assert!(pid_alive(grandchild));

    let mut calls = Vec::new();
    for ms in [300, 400, 20_000, 20_000] {
        let pool = pool.pool.clone();
        calls.push(tokio::spawn(async move {
            pool.call_tool("mcp__t__sleep", json!({"ms": ms}), Default::default())
                .await
        }));
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(pool.in_flight(), 4);
    let started = Instant::now();
    pool.close().await;
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    let mut outcomes = Vec::new();
    for c in calls {
        outcomes.push(c.await.unwrap());
    }
    assert!(outcomes[0].is_ok() && outcomes[1].is_ok(), "{outcomes:?}");
    for o in &outcomes[2..] {
        assert_eq!(
            o.as_ref().unwrap_err().kind(),
            ErrorKind::ShuttingDown,
            "{o:?}"
        );
    }
    let after = pool
        .call_tool("mcp__t__echo", json!({"text": "x"}), Default::default())
        .await
        .unwrap_err();
    assert_eq!(after.kind(), ErrorKind::ShuttingDown);
    assert!(
        wait_for_pid_exit(pid, Duration::from_secs(5)),
        "server left running"
    );
    assert!(
        wait_for_pid_exit(grandchild, Duration::from_secs(5)),
        "grandchild left running"
    );
}
