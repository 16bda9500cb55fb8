//! The task driver (the tasks extension, SEP-2663) against a real server whose tools run as
//! tasks: FastMCP 4.1 with `fastmcp-tasks` and its in-memory backend
//! (tests/servers/fastmcp_tasks_server.py). A plain `call_tool` gets the task's result as if
//! the call had been direct; the task's question goes to the host's elicitation handler; the
//! caller's cancel cancels the task at the server; a server restarted without the task fails
//! the call with why.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::common::*;
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
    let mut events = pool.events();
    let progress = Arc::new(std::sync::Mutex::new(Vec::new()));
    let heard = progress.clone();
    let options = CallOptions {
        on_progress: Some(Arc::new(move |p: mcpmux::Progress| {
            heard
                .lock()
                .unwrap()
                .push((p.progress, p.message.unwrap_or_default()));
        })),
        ..CallOptions::default()
    };
    let result = pool
        .call_tool("mcp__tasks__crunch", json!({"n": 4}), options)
        .await
        .unwrap();
    assert_eq!(text(&result), "crunched 4");
    assert_ne!(result.is_error, Some(true));
    // The task's statuses as `task:status` events: announced working (again with each new
    // status message), then completed.
    let mut statuses = Vec::new();
    while let Some(event) = events.try_recv() {
        if let mcpmux::events::Event::TaskStatus {
            tool_name, status, ..
        } = event
        {
            assert_eq!(tool_name, "crunch");
            statuses.push(status);
        }
    }
    statuses.dedup();
    assert_eq!(statuses, ["working", "completed"], "{statuses:?}");
    // What the task reported as it worked (its status messages, polled every 100 ms while each
    // step takes 200) reached the caller as progress, in order.
    let progress = progress.lock().unwrap().clone();
    assert!(!progress.is_empty(), "no progress from the task");
    let steps: Vec<u32> = progress
        .iter()
        .map(|(_, message)| {
            let step = message
                .strip_prefix("step ")
                .and_then(|m| m.strip_suffix(" of 4"));
            step.and_then(|k| k.parse().ok())
                .unwrap_or_else(|| panic!("{message}"))
        })
        .collect();
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
    assert!(
        progress.windows(2).all(|w| w[0].0 < w[1].0),
        "progress grows: {progress:?}"
    );
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

/// A call cancelled before its server's answer (the task it may already have made) arrives:
/// the late answer is still read, and a task in it is cancelled at the server, not orphaned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cancelled_before_its_task_is_announced_leaves_no_task_running() {
    let Some(pool) = tasks_pool().await else {
        return;
    };
    // Connected first, so the call below is written at once.
    call_ok(&pool, "mcp__tasks__crunch", json!({"n": 1})).await;
    let marker = pool.dir.path().join("early");
    let cancel = CancellationToken::new();
    cancel.cancel();
    let options = CallOptions {
        cancel: Some(cancel),
        ..Default::default()
    };
    let args = json!({"marker": marker.to_string_lossy()});
    let ended = pool.call_tool("mcp__tasks__stall", args, options).await;
    assert_eq!(ended.unwrap_err().kind(), ErrorKind::Cancelled);
    // The server either never ran the task or had it cancelled.
    let started = pool.dir.path().join("early.started");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while tokio::time::Instant::now() < deadline && !marker.is_file() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        !started.is_file() || marker.is_file(),
        "the server's task started and was never cancelled"
    );
    pool.close().await;
}

/// `start_task`: the host follows the call's task as its status changes, gets the result, or
/// cancels it (the task at the server with it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_started_task_reports_its_status_and_its_result_or_is_cancelled() {
    let Some(pool) = tasks_pool().await else {
        return;
    };
    let run = pool.start_task("mcp__tasks__crunch", json!({"n": 3}), Default::default());
    let mut seen = Vec::new();
    while let Some(update) = run.changed().await {
        seen.push(update.status);
    }
    assert_eq!(
        seen.first().map(String::as_str),
        Some("working"),
        "{seen:?}"
    );
    assert_eq!(
        seen.last().map(String::as_str),
        Some("completed"),
        "{seen:?}"
    );
    assert_eq!(run.status().unwrap().status, "completed");
    assert_eq!(text(&run.result().await.unwrap()), "crunched 3");

    let marker = pool.dir.path().join("stopped");
    let args = json!({"marker": marker.to_string_lossy()});
    let run = pool.start_task("mcp__tasks__stall", args, Default::default());
    let working = run.changed().await.expect("the task is announced");
    assert_eq!(working.status, "working");
    assert!(!working.task_id.is_empty());
    let started = pool.dir.path().join("stopped.started");
    assert!(mcpmux_tests::wait_until(Duration::from_secs(30), || {
        started.is_file()
    }));
    run.cancel();
    let ended = tokio::time::timeout(Duration::from_secs(5), run.result())
        .await
        .expect("a cancelled task's call ends at once");
    assert_eq!(ended.unwrap_err().kind(), ErrorKind::Cancelled);
    assert!(
        mcpmux_tests::wait_until(Duration::from_secs(10), || marker.is_file()),
        "the server's task was cancelled"
    );
    pool.close().await;
}
