//! Tools that run as tasks upstream (FastMCP 4.1 with `fastmcp-tasks`, `taskSupport:
//! required`; tests/servers/fastmcp_tasks_server.py) called through `mcpmux serve`. A client
//! that takes tasks (mcpmux's own pool, which declares the extension) gets the upstream's task
//! under a sealed id and follows it through the gateway: `tasks/get`, the task's question
//! answered by `tasks/update`, `tasks/cancel` reaching the upstream's task. A client that
//! takes none (the Python SDK's) gets the result, the gateway following the task for it. The
//! audit log tells the two apart: `task` for a call answered with a task, `ok` for a result.
//! A session client (2025-11-25 over stdio) that declared the extension gets tasks too, and a
//! call cancelled before its task is named leaves no task running upstream.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcpmux::{CallOptions, ErrorKind};
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[allow(dead_code)]
use crate::support::*;

/// A config with the FastMCP task server as `tasks`, and `serve` in front of it writing its
/// audit log into `dir` (None, skipped or failed, without the server).
fn serve_tasks(dir: &Path) -> Option<(mcpmux_tests::ChildGuard, String)> {
    let Some((python, args)) = mcpmux_tests::fastmcp_tasks_command() else {
        mcpmux_tests::skip_or_fail("FastMCP with fastmcp-tasks (.deps/tasks-venv)");
        return None;
    };
    let config = dir.join("servers.json");
    add_stdio(&config, "tasks", &python, &args);
    let log = dir.join("audit.jsonl").to_string_lossy().into_owned();
    let flags = [
        "--token",
        "t0ken-of-the-tests",
        "--mode",
        "direct",
        "--audit-log",
        &log,
    ];
    Some(serve_http(&config, &flags))
}

/// `serve_tasks`, and a client pool (mcpmux's own, which takes tasks) connected to it.
async fn client_of_serve_tasks(dir: &Path) -> Option<(mcpmux_tests::ChildGuard, mcpmux::Pool)> {
    let (server, url) = serve_tasks(dir)?;
    Some((server, client_pool(dir, &url, "t0ken-of-the-tests").await))
}

/// The audit log's outcome of each call, in order.
fn outcomes(dir: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap_or_default();
    text.lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .map(|l| {
            let field = |k: &str| l[k].as_str().unwrap_or_default().to_string();
            (field("tool"), field("outcome"))
        })
        .collect()
}

/// The upstream's `crunch`, called plainly through the gateway (which starts the upstream),
/// answers as it should.
async fn crunch(pool: &mcpmux::Pool, n: u64) {
    let crunched = pool
        .call_tool(
            "mcp__fleet__tasks__crunch",
            json!({"n": n}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text(&crunched), format!("crunched {n}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_takes_tasks_follows_the_upstreams_task_through_the_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_server, pool)) = client_of_serve_tasks(dir.path()).await else {
        return;
    };
    crunch(&pool, 2).await;

    // The task's question goes to this client's handler, its answer back by tasks/update.
    pool.set_elicitation_handler(Some(Arc::new(|_request| {
        Box::pin(async {
            Ok(
                mcpmux::model::ElicitResult::new(mcpmux::model::ElicitationAction::Accept)
                    .with_content(json!({"ok": true})),
            )
        })
    })));
    let approved = pool
        .call_tool(
            "mcp__fleet__tasks__approve",
            json!({"item": "the launch"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(
        text(&approved).starts_with("the launch: accept"),
        "{approved:?}"
    );

    assert_eq!(
        outcomes(dir.path()),
        [
            ("tasks__crunch".to_string(), "task".to_string()),
            ("tasks__approve".to_string(), "task".to_string()),
        ],
        "the gateway answered both calls with the upstream's task"
    );
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_cancel_reaches_the_upstreams_task_through_the_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_server, pool)) = client_of_serve_tasks(dir.path()).await else {
        return;
    };
    let marker = dir.path().join("cancelled");
    let cancel = CancellationToken::new();
    let call = {
        let (pool, cancel) = (pool.clone(), cancel.clone());
        let marker = marker.to_string_lossy().into_owned();
        tokio::spawn(async move {
            let options = CallOptions {
                cancel: Some(cancel),
                ..Default::default()
            };
            let args = json!({"marker": marker});
            pool.call_tool("mcp__fleet__tasks__stall", args, options)
                .await
        })
    };
    let started = dir.path().join("cancelled.started");
    assert!(
        mcpmux_tests::wait_until(Duration::from_secs(30), || started.is_file()),
        "the task never started"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    cancel.cancel();
    let ended = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("a cancelled call ends at once")
        .unwrap();
    assert_eq!(ended.unwrap_err().kind(), ErrorKind::Cancelled);
    assert!(
        mcpmux_tests::wait_until(Duration::from_secs(10), || marker.is_file()),
        "the upstream's task was cancelled"
    );
    pool.close().await;
}

/// A call cancelled before the gateway's answer (the upstream's task) arrives: the client
/// still reads the answer and cancels the task through the gateway, so none runs on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cancelled_before_its_task_is_named_leaves_no_task_running_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_server, pool)) = client_of_serve_tasks(dir.path()).await else {
        return;
    };
    // Connected and the upstream started, so the call below is answered at once.
    crunch(&pool, 1).await;
    let marker = dir.path().join("early");
    let cancel = CancellationToken::new();
    cancel.cancel();
    let options = CallOptions {
        cancel: Some(cancel),
        ..Default::default()
    };
    let args = json!({"marker": marker.to_string_lossy()});
    let ended = pool
        .call_tool("mcp__fleet__tasks__stall", args, options)
        .await;
    assert_eq!(ended.unwrap_err().kind(), ErrorKind::Cancelled);
    let started = dir.path().join("early.started");
    mcpmux_tests::wait_until(Duration::from_secs(10), || marker.is_file());
    assert!(
        !started.is_file() || marker.is_file(),
        "the upstream's task started and was never cancelled"
    );
    pool.close().await;
}

/// A client of a session (protocol 2025-11-25, over stdio) that declared the extension at
/// `initialize` gets the task too, and follows it with `tasks/get`.
#[test]
fn a_session_client_that_takes_tasks_gets_the_task_over_stdio() {
    use std::io::{BufRead, BufReader, Write};
    let Some((python, args)) = mcpmux_tests::fastmcp_tasks_command() else {
        mcpmux_tests::skip_or_fail("FastMCP with fastmcp-tasks (.deps/tasks-venv)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    add_stdio(&config, "tasks", &python, &args);
    let mut command = std::process::Command::new(MCPMUX);
    command
        .arg("--config")
        .arg(&config)
        .args(["serve", "--stdio", "--mode", "direct"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut front = mcpmux_tests::ChildGuard::spawn(&mut command).unwrap();
    let mut stdin = front.child_mut().stdin.take().unwrap();
    let mut lines = BufReader::new(front.child_mut().stdout.take().unwrap()).lines();
    // Sends a message; a request's answer is returned (a notification's is Null).
    let mut ask = |request: serde_json::Value| -> serde_json::Value {
        writeln!(stdin, "{request}").unwrap();
        if request.get("id").is_none() {
            return serde_json::Value::Null;
        }
        loop {
            let line = lines.next().expect("an answer").unwrap();
            let message: serde_json::Value = serde_json::from_str(&line).unwrap();
            if message.get("id") == request.get("id") {
                return message;
            }
        }
    };
    let tasks = json!({"io.modelcontextprotocol/tasks": {}});
    let init = ask(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"extensions": tasks},
            "clientInfo": {"name": "session-client", "version": "1"}
        }}),
    );
    assert!(
        init["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "{init}"
    );
    ask(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "tasks__crunch", "arguments": {"n": 2}}});
    let created = ask(call);
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(30);
    let done = loop {
        let got = ask(
            json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": id}}),
        );
        if got["result"]["status"] == "completed" {
            break got;
        }
        assert!(Instant::now() < deadline, "the task never completed: {got}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(done["result"]["taskId"], id.as_str());
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "crunched 2",
        "{done}"
    );
}

#[test]
fn a_client_that_takes_no_tasks_gets_the_result_of_the_upstreams_task() {
    let dir = tempfile::tempdir().unwrap();
    let Some(python) = python_client() else {
        return;
    };
    let Some((_server, url)) = serve_tasks(dir.path()) else {
        return;
    };
    run_python_client(&python, &["task-tool", &url, "t0ken-of-the-tests"]);
    assert_eq!(
        outcomes(dir.path()),
        [("tasks__crunch".to_string(), "ok".to_string())],
        "the gateway followed the task and answered with its result"
    );
}
