//! The pool under faults, as a review tried it from outside: calls kept in flight over five
//! real servers of three languages (two Rust test servers, two server-everythings on Node,
//! the Python SDK 2.3's `MCPServer`) while one of them is killed (SIGKILL) every second.
//! Every call ends, within its time limit, with its own answer (each asks to have a text of
//! its own echoed) or a typed error of the kinds a dying server causes; every server answers
//! again once the killing stops; and closing the pool leaves no process of any of them.
//! Bounded: a few seconds of faults, and a deadline for everything after.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcpmux::{CallOptions, ErrorKind, PoolOptions};
use mcpmux_tests::{everything_command, python_sdk_server_command, require_or_skip};
use serde_json::json;

use crate::common::*;

/// Calls in flight at once.
const IN_FLIGHT: usize = 32;
/// How long servers are killed for, one a second.
const FAULTS: Duration = Duration::from_secs(12);
/// The most a call may take: its time limit is 5 s; a call past this is a hang.
const CALL_DEADLINE: Duration = Duration::from_secs(20);

/// A server of the fleet: its name, its echo tool, the argument it echoes, and what the
/// answer to `text` is.
struct Echo {
    server: &'static str,
    tool: &'static str,
    argument: &'static str,
    answer: fn(&str) -> String,
}

const FLEET: [Echo; 5] = [
    Echo {
        server: "rust1",
        tool: "mcp__rust1__echo",
        argument: "text",
        answer: |t| t.to_string(),
    },
    Echo {
        server: "rust2",
        tool: "mcp__rust2__echo",
        argument: "text",
        answer: |t| t.to_string(),
    },
    Echo {
        server: "node1",
        tool: "mcp__node1__echo",
        argument: "message",
        answer: |t| format!("Echo: {t}"),
    },
    Echo {
        server: "node2",
        tool: "mcp__node2__echo",
        argument: "message",
        answer: |t| format!("Echo: {t}"),
    },
    Echo {
        server: "python",
        tool: "mcp__python__echo",
        argument: "text",
        answer: |t| t.to_string(),
    },
];

/// What the calls came to.
#[derive(Default, Debug)]
struct Outcomes {
    answered: usize,
    /// Errors, by kind.
    failed: BTreeMap<String, usize>,
    /// Answers that were not the call's own.
    wrong: Vec<String>,
    /// Calls past `CALL_DEADLINE`.
    hung: usize,
}

/// Keeps calling the fleet's echo tools, each call with a text of its own, until `stop`.
async fn caller(
    pool: mcpmux::Pool,
    worker: usize,
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Outcomes>>,
) {
    let mut n = 0usize;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let echo = &FLEET[(worker + n) % FLEET.len()];
        let text = format!("worker {worker} call {n}");
        let limit = CallOptions {
            timeout: Some(Duration::from_secs(5)),
            ..Default::default()
        };
        let call = pool.call_tool(echo.tool, json!({ echo.argument: text }), limit);
        let outcome = tokio::time::timeout(CALL_DEADLINE, call).await;
        let mut seen = seen.lock().unwrap();
        match outcome {
            Err(_) => seen.hung += 1,
            Ok(Ok(result)) => {
                let said = text_of(&result);
                if said == (echo.answer)(&text) {
                    seen.answered += 1;
                } else {
                    seen.wrong
                        .push(format!("{}: asked {text:?}, got {said:?}", echo.server));
                }
            }
            Ok(Err(e)) => {
                *seen.failed.entry(format!("{:?}", e.kind())).or_default() += 1;
            }
        }
    }
}

/// All the text of a result's content.
fn text_of(result: &mcpmux::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

/// The process ids of the fleet's servers now.
fn pids(pool: &mcpmux::Pool) -> BTreeMap<String, u32> {
    pool.server_states()
        .into_iter()
        .filter_map(|s| Some((s.name, s.pid?)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pool_holds_while_its_servers_are_killed_under_load() {
    let (node, everything) = require_or_skip!(everything_command(), "server-everything");
    let (python, py_args) = require_or_skip!(python_sdk_server_command(), "mcp 2.3 (PyPI)");
    let pool = pool_with(PoolOptions {
        connect_timeout_ms: 10_000,
        request_timeout_ms: 5_000,
        ..options()
    })
    .await;
    let node = node.to_str().unwrap();
    let everything: Vec<&str> = everything.iter().map(String::as_str).collect();
    let py_args: Vec<&str> = py_args.iter().map(String::as_str).collect();
    add_test_server(&pool, "rust1", &[]).await;
    add_test_server(&pool, "rust2", &[]).await;
    for name in ["node1", "node2"] {
        let mut args = everything.clone();
        args.push("stdio");
        pool.add_server(stdio(name, node, &args)).await.unwrap();
    }
    pool.add_server(stdio("python", python.to_str().unwrap(), &py_args))
        .await
        .unwrap();
    pool.connect_all().await;

    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Outcomes::default()));
    let callers: Vec<_> = (0..IN_FLIGHT)
        .map(|w| tokio::spawn(caller(pool.pool.clone(), w, stop.clone(), seen.clone())))
        .collect();

    // One server killed a second, in turn, each by the process id the pool says it has.
    let mut every_pid: HashSet<u32> = pids(&pool).into_values().collect();
    let mut killed = 0;
    let started = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    while started.elapsed() < FAULTS {
        tick.tick().await;
        let now = pids(&pool);
        every_pid.extend(now.values().copied());
        let victim = FLEET[killed % FLEET.len()].server;
        if let Some(pid) = now.get(victim) {
            // SAFETY: kill has no memory-safety preconditions; the pid is the pool's child.
            unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
        }
        killed += 1;
    }
    stop.store(true, Ordering::Relaxed);
    for caller in callers {
        tokio::time::timeout(CALL_DEADLINE + Duration::from_secs(5), caller)
            .await
            .expect("a caller hung")
            .unwrap();
    }
    let outcomes = std::mem::take(&mut *seen.lock().unwrap());
    eprintln!("chaos: {killed} kills, {outcomes:?}");
    assert_eq!(outcomes.hung, 0, "calls hung: {outcomes:?}");
    assert!(
        outcomes.wrong.is_empty(),
        "answers to other calls: {outcomes:?}"
    );
    let typed = ["Connection", "Timeout"];
    assert!(
        outcomes.failed.keys().all(|k| typed.contains(&k.as_str())),
        "errors of kinds a dying server does not explain: {outcomes:?}"
    );
    assert!(
        outcomes.answered >= 200,
        "too little was answered: {outcomes:?}"
    );

    // The killing has stopped: every server answers again.
    for echo in &FLEET {
        let deadline = Instant::now() + Duration::from_secs(45);
        loop {
            let text = format!("after the faults, {}", echo.server);
            let call = pool.call_tool(
                echo.tool,
                json!({ echo.argument: text }),
                Default::default(),
            );
            match call.await {
                Ok(result) if text_of(&result) == (echo.answer)(&text) => break,
                other if Instant::now() > deadline => {
                    panic!("{} does not answer again: {other:?}", echo.server)
                }
                Err(e) => assert!(
                    matches!(e.kind(), ErrorKind::Connection | ErrorKind::Timeout),
                    "{}: {e}",
                    echo.server
                ),
                Ok(wrong) => panic!("{}: {wrong:?}", echo.server),
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    every_pid.extend(pids(&pool).into_values());

    // Closed, the pool leaves no process of any server it ever started.
    pool.close().await;
    for pid in every_pid {
        assert!(
            mcpmux_tests::wait_for_pid_exit(pid, Duration::from_secs(10)),
            "process {pid} outlived the pool"
        );
    }
}
