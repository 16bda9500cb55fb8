//! The task driver (the tasks extension, SEP-2663) against a real server whose tools run as
//! tasks: FastMCP 4.1 with `fastmcp-tasks` and its in-memory backend
//! (tests/servers/fastmcp_tasks_server.py). A plain `call_tool` gets the task's result as if
//! the call had been direct; the task's question goes to the host's elicitation handler; the
//! caller's cancel cancels the task at the server; a server restarted without the task fails
//! the call with why.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use mcpmux::{CallOptions, ErrorKind};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// A pool with the FastMCP task server as `tasks` (None, skipped or failed, without it).
async fn tasks_pool() -> Option<TestPool> {
    let Some((python, args)) = mcpmux_tests::fastmcp_tasks_command() else {
        mcpmux_tests::skip_or_fail("FastMCP with fastmcp-tasks (.deps/tasks-venv)");
        return None;
    };
    let pool = pool().await;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    pool.add_server(stdio("tasks", python.to_str().unwrap(), &args))
        .await
        .unwrap();
    Some(pool)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_runs_as_a_task_answers_like_any_call() {
    let Some(pool) = tasks_pool().await else {
        return;
    };
    let result = call_ok(&pool, "mcp__tasks__crunch", json!({"n": 3})).await;
    assert_eq!(text(&result), "crunched 3");
    assert_ne!(result.is_error, Some(true));
    // A task whose tool fails ends in a result that says so, as a direct call would.
    let failed = call_ok(&pool, "mcp__tasks__explode", json!({})).await;
    assert_eq!(failed.is_error, Some(true));
    assert!(
        text(&failed).contains("the reactor went critical"),
        "{failed:?}"
    );
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_question_goes_to_the_host_and_its_answer_back_to_the_task() {
    let Some(pool) = tasks_pool().await else {
        return;
    };
    let asked = Arc::new(AtomicUsize::new(0));
    let count = asked.clone();
    pool.set_elicitation_handler(Some(Arc::new(move |request| {
        count.fetch_add(1, Ordering::SeqCst);
        let message = serde_json::to_value(&request.params).unwrap()["message"].clone();
        assert_eq!(message, "Approve the launch?");
        Box::pin(async {
            Ok(
                mcpmux::model::ElicitResult::new(mcpmux::model::ElicitationAction::Accept)
                    .with_content(json!({"ok": true})),
            )
        })
    })));
    let result = call_ok(&pool, "mcp__tasks__approve", json!({"item": "the launch"})).await;
    assert_eq!(asked.load(Ordering::SeqCst), 1, "asked once");
    let said = text(&result);
    assert!(said.starts_with("the launch: accept"), "{said}");
    assert!(said.contains("'ok': True"), "{said}");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_call_cancels_the_task_at_the_server() {
    let Some(pool) = tasks_pool().await else {
        return;
    };
    let marker = pool.dir.path().join("cancelled");
    let cancel = CancellationToken::new();
    let call = {
        let (pool, cancel) = (pool.pool.clone(), cancel.clone());
        let marker = marker.to_string_lossy().into_owned();
        tokio::spawn(async move {
            let options = CallOptions {
                cancel: Some(cancel),
                ..Default::default()
            };
            pool.call_tool("mcp__tasks__stall", json!({"marker": marker}), options)
                .await
        })
    };
    // Cancelled once the task runs at the server (a slow machine takes a while to get there).
    let started = pool.dir.path().join("cancelled.started");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !started.is_file() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the task never started"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    cancel.cancel();
    let ended = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("a cancelled call ends at once")
        .unwrap();
    assert_eq!(ended.unwrap_err().kind(), ErrorKind::Cancelled);
    assert!(
        mcpmux_tests::wait_until(Duration::from_secs(10), || marker.is_file()),
        "the server's task was cancelled"
    );
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restarted_without_the_task_fails_the_call_with_why() {
    let Some(pool) = tasks_pool().await else {
        return;
    };
    // Connected, so its process is known before the call.
    call_ok(&pool, "mcp__tasks__crunch", json!({"n": 1})).await;
    let pid = pool.server_states()[0].pid.unwrap();
    let call = {
        let pool = pool.pool.clone();
        tokio::spawn(async move {
            pool.call_tool("mcp__tasks__crunch", json!({"n": 40}), Default::default())
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(1500)).await;
    mcpmux_tests::kill_process_group(pid);
    let ended = tokio::time::timeout(Duration::from_secs(30), call)
        .await
        .expect("the call ends")
        .unwrap();
    // Polling went on over a new connection, whose server never heard of the task (its
    // store was the old process's memory).
    let error = ended.unwrap_err().to_string();
    eprintln!("the call failed with: {error}");
    assert!(error.contains("task"), "{error}");
    assert_ne!(pool.server_states()[0].pid, Some(pid), "a new process");
    pool.close().await;
}
