//! The pool against a real MCP server (mcpmux-test-server, built with rmcp) over stdio.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::*;
use mcpmux::{
    CallOptions, ConnectionPhase, ConnectionState, ErrorKind, Event, PoolOptions, ServerPatch,
};
use mcpmux_tests::{pid_alive, wait_for_pid_exit};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connects_lazily_lists_and_calls_tools_with_events() {
    let pool = pool().await;
    let mut events = pool.events();
    let rec = add_test_server(&pool, "t", &[]).await;
    assert_eq!(pool.server_states()[0].state, ConnectionState::Disconnected);

    let tools = pool.list_tools(None).await.unwrap();
    let ids: Vec<_> = tools.iter().map(|t| t.id.as_str()).collect();
    for id in [
        "mcp__t__echo",
        "mcp__t__add",
        "mcp__t__sleep",
        "mcp__t__structured",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    let echo = tools.iter().find(|t| t.name == "echo").unwrap();
    assert_eq!(echo.server_id, rec.id);
    assert_eq!(echo.input_schema.to_value()["type"], "object");

    let r = call_ok(&pool, "mcp__t__echo", json!({"text": "hi"})).await;
    assert_eq!(text(&r), "hi");
    let r = call_ok(&pool, "mcp__t__add", json!({"a": 2, "b": 40})).await;
    assert_eq!(text(&r), "42");
    let r = call_ok(&pool, "mcp__t__structured", json!({})).await;
    assert!(r.structured_content.is_some(), "{r:?}");
    let r = call_ok(&pool, "mcp__t__fail", json!({})).await;
    assert_eq!(r.is_error, Some(true));

    let seen = drain(&mut events);
    let names: Vec<_> = seen.iter().map(Event::name).collect();
    assert!(names.contains(&"servers:changed"), "{names:?}");
    assert!(names.contains(&"server:connected"), "{names:?}");
    let states: Vec<_> = seen
        .iter()
        .filter_map(|e| match e {
            Event::ConnectionState { state, .. } => Some(*state),
            _ => None,
        })
        .collect();
    assert_eq!(
        &states[..2],
        &[ConnectionState::Connecting, ConnectionState::Connected]
    );
    let calls: Vec<_> = seen
        .iter()
        .filter_map(|e| match e {
            Event::ToolCalled {
                tool_name, success, ..
            } => Some((tool_name.as_str(), *success)),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("echo", true),
            ("add", true),
            ("structured", true),
            ("fail", false)
        ]
    );
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_and_prompts() {
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    let resources = pool.list_resources(None).await.unwrap();
    assert!(resources.iter().any(|r| r.resource.uri == "test://hello"));
    assert_eq!(resources[0].server_name, "t");
    let templates = pool.list_resource_templates(None).await.unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t.template.uri_template == "test://echo/{text}")
    );
    let read = pool.read_resource("t", "test://echo/abc").await.unwrap();
    let v = serde_json::to_value(&read.contents[0]).unwrap();
    assert_eq!(v["text"], "abc");
    let err = pool.read_resource("t", "test://nope").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol, "{err}");

    let prompts = pool.list_prompts(None).await.unwrap();
    assert!(
        prompts
            .iter()
            .any(|p| p.prompt.name == "greet" && p.server_name == "t")
    );
    let mut args = serde_json::Map::new();
    args.insert("name".into(), json!("Ada"));
    let got = pool.get_prompt("t", "greet", Some(args)).await.unwrap();
    assert!(serde_json::to_string(&got).unwrap().contains("Ada"));
    pool.close().await;
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stderr_becomes_log_events_and_garbage_stdout_an_error_event() {
    let pool = pool().await;
    let mut events = pool.events();
    add_test_server(&pool, "noisy", &["--stderr-lines", "3", "--garbage-stdout"]).await;
    let r = call_ok(&pool, "mcp__noisy__echo", json!({"text": "still works"})).await;
    assert_eq!(text(&r), "still works");
    let stderr = wait_event(&mut events, Duration::from_secs(5), |e| {
        matches!(e, Event::Log { source, message, .. } if source == "stderr" && message.contains("stderr line"))
    })
    .await;
    assert!(stderr.is_some(), "no stderr log event");
    let mut events = pool.events();
    call_ok(&pool, "mcp__noisy__echo", json!({"text": "again"})).await;
    let garbage = wait_event(&mut events, Duration::from_secs(5), |e| {
        matches!(e, Event::Log { level, source, .. } if level == "error" && source == "transport")
    })
    .await;
    assert!(garbage.is_some(), "no error event for non-JSON stdout");
    pool.close().await;
}

/// A server that writes its settings to stdout, where only JSON-RPC belongs, is reported
/// with the line, the config's env values in it redacted as in all the pool says of a
/// server's output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_json_stdout_line_is_reported_without_the_configs_secrets() {
    let pool = pool().await;
    let mut events = pool.events();
    let chatty = "echo \"starting with API_TOKEN=$API_TOKEN\"; exec sleep 20";
    let mut input = stdio("chatty", "sh", &["-c", chatty]);
    input
        .config
        .env
        .insert("API_TOKEN".into(), "sk-not-a-real-key".into());
    pool.add_server(input).await.unwrap();
    // The server never answers: only what it wrote matters here (closing the pool ends it).
    let connecting = {
        let pool = pool.clone();
        tokio::spawn(async move { pool.connect("chatty").await })
    };
    let reported = wait_event(&mut events, Duration::from_secs(5), |e| {
        matches!(e, Event::Log { level, source, .. } if level == "error" && source == "transport")
    })
    .await;
    assert!(
        matches!(&reported, Some(Event::Log { message, .. })
            if message.ends_with("starting with API_TOKEN=<redacted>")),
        "{reported:?}"
    );
    pool.close().await;
    connecting.abort();
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_server_times_out_and_progress_resets_the_call_timeout() {
    let pool = pool_with(PoolOptions {
        connect_timeout_ms: 1_000,
        ..options()
    })
    .await;
    add_test_server(&pool, "silent", &["--silent"]).await;
    let started = Instant::now();
    let err = pool.list_tools(Some("silent")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));

    add_test_server(&pool, "t", &[]).await;
    // Without progress the call timeout holds, and the connection stays usable after it.
    times_out(&pool, "mcp__t__hang", json!({"ms": 5_000}), 500).await;
    let r = call_ok(&pool, "mcp__t__echo", json!({"text": "alive"})).await;
    assert_eq!(text(&r), "alive");
    let short = CallOptions {
        timeout: Some(Duration::from_millis(600)),
        ..Default::default()
    };
    let (r, seen) = call_with_progress(&pool, "mcp__t__sleep", json!({"ms": 1_500}), short).await;
    assert_eq!(text(&r), "slept");
    assert!(seen.len() >= 5, "{seen:?}");
    assert_eq!(seen[0].total, Some(1500.0));
    // Without a progress callback too (the direct stdio path): progress still resets it.
    let r = pool
        .call_tool(
            "mcp__t__sleep",
            json!({"ms": 1_200}),
            CallOptions {
                timeout: Some(Duration::from_millis(500)),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(text(&r), "slept");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_timeout_runs_out_while_a_longer_call_waits() {
    // A session's time limits are kept by one task, which sleeps until the earliest: a
    // request with an earlier limit than the one it sleeps for must wake it.
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    pool.connect("t").await.unwrap();
    let long = {
        let pool = pool.clone();
        let minute = CallOptions {
            timeout: Some(Duration::from_secs(60)),
            ..Default::default()
        };
        tokio::spawn(async move {
            pool.call_tool("mcp__t__hang", json!({"ms": 2_000}), minute)
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Less than `sleep`'s first progress report (at 100 ms), which would restart it.
    times_out(&pool, "mcp__t__sleep", json!({"ms": 10_000}), 50).await;
    // The server heard that the call was given up on; the longer one is still answered.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let told = text(&call_ok(&pool, "mcp__t__cancelled", json!({})).await);
        if told == "1" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the server was told {told} times"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(text(&long.await.unwrap().unwrap()), "done");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_limits_hold_after_the_runtime_of_the_first_call_shuts_down() {
    // The task that keeps a session's limits runs on the runtime of the call that started
    // it; when that runtime goes, the next call must start another.
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    pool.connect("t").await.unwrap();
    let elsewhere = pool.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let r = rt.block_on(call_ok(&elsewhere, "mcp__t__echo", json!({"text": "x"})));
        assert_eq!(text(&r), "x");
    })
    .join()
    .unwrap();
    // Less than `sleep`'s first progress report (at 100 ms), which would restart it.
    times_out(&pool, "mcp__t__sleep", json!({"ms": 10_000}), 50).await;
    pool.close().await;
}

/// Calls `tool` with a timeout of `limit_ms` and checks that it times out, well within 2 s.
async fn times_out(pool: &mcpmux::Pool, tool: &str, args: serde_json::Value, limit_ms: u64) {
    let started = Instant::now();
    let limit = CallOptions {
        timeout: Some(Duration::from_millis(limit_ms)),
        ..Default::default()
    };
    let err = pool.call_tool(tool, args, limit).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{tool}: {err}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{tool} timed out after {:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_sent_right_before_the_reply_reaches_the_callback_before_the_call_returns() {
    // rmcp hands notifications to spawned tasks: without routing them as they are read, the
    // last updates could land after the reply (and the call's callback) were gone.
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    for round in 0..40 {
        let burst = json!({"ms": 0, "burst": 5});
        let (r, seen) = call_with_progress(&pool, "mcp__t__sleep", burst, Default::default()).await;
        assert_eq!(text(&r), "slept");
        let seen: Vec<f64> = seen.iter().map(|p| p.progress).collect();
        assert_eq!(seen, vec![1.0, 2.0, 3.0, 4.0, 5.0], "round {round}");
    }
    pool.close().await;
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_each_get_their_own_reply() {
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    let calls = (0..300).map(|i| {
        let pool = pool.clone();
        async move {
            let r = call_ok(&pool, "mcp__t__echo", json!({"text": format!("n{i}")})).await;
            assert_eq!(text(&r), format!("n{i}"));
        }
    });
    futures::future::join_all(calls).await;
    // Failed and slow calls interleaved with quick ones keep their own outcomes too.
    let (slow, quick, failed) = tokio::join!(
        pool.call_tool("mcp__t__sleep", json!({"ms": 300}), Default::default()),
        pool.call_tool("mcp__t__add", json!({"a": 2, "b": 3}), Default::default()),
        pool.call_tool("mcp__t__echo", json!({"wrong": 1}), Default::default()),
    );
    assert_eq!(text(&slow.unwrap()), "slept");
    assert_eq!(text(&quick.unwrap()), "5");
    assert_eq!(failed.unwrap().is_error, Some(true));
    pool.close().await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_reconnects_disable_hides_and_remove_stops_the_server() {
    let pool = pool().await;
    let rec = add_test_server(&pool, "t", &[]).await;
    let pid = pid_of(&pool, "mcp__t__pid").await;

    let updated = pool
        .update_server(
            "t",
            ServerPatch {
                is_trusted: Some(true),
                disabled_tools: Some(vec!["add".into()]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.id, rec.id);
    assert!(updated.updated_at.is_some());
    assert_eq!(
        pid_of(&pool, "mcp__t__pid").await,
        pid,
        "no reconnect expected"
    );
    let tools = pool.list_tools(None).await.unwrap();
    assert!(
        !tools.iter().any(|t| t.name == "add"),
        "disabled tool listed"
    );
    let err = pool
        .call_tool("mcp__t__add", json!({"a": 1, "b": 1}), Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");

    let mut config = updated.config.clone();
    config.args = vec!["--name".into(), "renamed".into()];
    pool.update_server(
        &rec.id,
        ServerPatch {
            config: Some(config),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert!(wait_for_pid_exit(pid, Duration::from_secs(5)));
    let new_pid = pid_of(&pool, "mcp__t__pid").await;
    assert_ne!(new_pid, pid);

    set_active(&pool, "t", false).await;
    assert!(wait_for_pid_exit(new_pid, Duration::from_secs(5)));
    assert!(pool.list_tools(None).await.unwrap().is_empty());
    set_active(&pool, "t", true).await;
    let last_pid = pid_of(&pool, "mcp__t__pid").await;
    pool.remove_server("t").await.unwrap();
    assert!(wait_for_pid_exit(last_pid, Duration::from_secs(5)));
    assert!(pool.list_servers().await.unwrap().is_empty());
    let err = pool
        .call_tool("mcp__t__pid", json!({}), Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_whose_names_clash_keep_all_their_tools() {
    let pool = pool().await;
    add_test_server(&pool, "a.b", &[]).await;
    add_test_server(&pool, "a_b", &["--name", "second"]).await;
    let tools = pool.list_tools(None).await.unwrap();
    let echoes: Vec<_> = tools.iter().filter(|t| t.name == "echo").collect();
    assert_eq!(echoes.len(), 2, "{tools:?}");
    assert_ne!(echoes[0].id, echoes[1].id);
    for e in echoes {
        let r = pool
            .call_tool(&e.id, json!({"text": e.server_name}), Default::default())
            .await
            .unwrap();
        assert_eq!(text(&r), e.server_name);
    }
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_clear_errors() {
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    let e = pool
        .call_tool("mcp__nope__x", json!({}), Default::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    let e = pool
        .call_tool("mcp__t__no_such_tool", json!({}), Default::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    let e = pool
        .call_tool("mcp__t__echo", json!([1]), Default::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = pool
        .call_tool("mcp__t__add", json!({"a": "x"}), Default::default())
        .await;
    assert!(
        matches!(&e, Err(err) if err.kind() == ErrorKind::Tool)
            || matches!(&e, Ok(r) if r.is_error == Some(true)),
        "{e:?}"
    );
    // The same server again (a script run twice) is the one saved; another under its name is
    // refused, with what differs.
    let first = pool.get_server("t").await.unwrap();
    let again = pool.add(test_server("t", &[])).await.unwrap();
    assert_eq!(again.record, first);
    assert!(again.already_there);
    let e = pool
        .add_server(test_server("t", &["--legacy"]))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(
        e.to_string().ends_with(&format!(
            "a server named 't' already exists (id {}) with another config.args: update that \
             server, or remove it before adding it again",
            first.id
        )),
        "{e}"
    );

    pool.add_server(stdio("dead", "/nonexistent/mcp-server", &[]))
        .await
        .unwrap();
    let started = Instant::now();
    let e = pool.list_tools(Some("dead")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Connection, "{e}");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(e.to_string().contains("cannot start"), "{e}");
    // A dead server never hides the others.
    assert!(
        pool.list_tools(None)
            .await
            .unwrap()
            .iter()
            .any(|t| t.name == "echo")
    );
    let states = pool.server_states();
    let dead = states.iter().find(|s| s.name == "dead").unwrap();
    assert_eq!(dead.state, ConnectionState::Error);
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_discover_and_add_json() {
    let pool = pool().await;
    let import = format!(
        r#"{{"mcpServers": {{
            "good": {{"command": "{bin}"}},
            "broken": {{"args": "not-a-list"}}
        }}}}"#,
        bin = env!("CARGO_BIN_EXE_mcpmux-test-server")
    );
    let results = pool.add_json(&import).await.unwrap();
    assert_eq!(results.len(), 2);
    let good = results.iter().find(|r| r.name == "good").unwrap();
    assert!(good.success && !good.already_there, "{good:?}");
    assert!(!results.iter().find(|r| r.name == "broken").unwrap().success);
    // The same import again (a setup run twice) finds the good one there.
    let again = pool.add_json(&import).await.unwrap();
    let good_again = again.iter().find(|r| r.name == "good").unwrap();
    assert!(
        good_again.success && good_again.already_there,
        "{good_again:?}"
    );
    assert_eq!(good_again.record, good.record);

    let t = pool.test_server("good").await.unwrap();
    assert!(t.success, "{t:?}");
    assert!(t.tools.contains(&"echo".to_string()));
    let bad = pool
        .test_config(stdio("x", "/nonexistent/thing", &[]))
        .await
        .unwrap();
    assert!(!bad.success);
    assert!(bad.error.is_some());

    let d = pool.discover("good").await.unwrap();
    assert!(d.tools.iter().any(|t| t.name == "echo"));
    assert!(d.prompts.iter().any(|p| p.name == "greet"));
    assert!(d.resources.iter().any(|r| r.uri == "test://hello"));
    pool.close().await;
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_servers_are_seen_only_from_their_project() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    let open = |project: Option<&str>| {
        let config = config.clone();
        let project = project.map(str::to_string);
        async move {
            mcpmux::Pool::open(PoolOptions {
                config_path: Some(config),
                project_path: project,
                ..options()
            })
            .await
            .unwrap()
        }
    };
    let p = open(Some("/work/p")).await;
    let mut local = test_server("db", &[]);
    local.scope = Some(mcpmux::Scope::Local);
    local.project_path = Some("/work/p".into());
    p.add_server(local.clone()).await.unwrap();
    p.add_server(test_server("global", &[])).await.unwrap();
    let q = open(Some("/work/q")).await;
    let names = |v: Vec<mcpmux::ServerRecord>| {
        let mut n: Vec<_> = v.into_iter().map(|r| r.name).collect();
        n.sort();
        n
    };
    assert_eq!(names(p.list_servers().await.unwrap()), ["db", "global"]);
    assert_eq!(names(q.list_servers().await.unwrap()), ["global"]);
    // Another project may use the same name for its own local server.
    local.project_path = Some("/work/q".into());
    q.add_server(local).await.unwrap();
    assert_eq!(names(q.list_servers().await.unwrap()), ["db", "global"]);
    let none = open(None).await;
    assert_eq!(names(none.list_servers().await.unwrap()), ["global"]);
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(
    deprecated,
    reason = "sampling and roots (SEP-2577) are what this test exercises"
)]
async fn input_required_rounds_of_2026_servers_are_answered_by_the_host() {
    let pool = pool().await;
    pool.set_sampling_handler(Some(Arc::new(|_req| {
        Box::pin(async {
            Ok(serde_json::from_value(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "hi from host"},
                "model": "m"
            }))
            .unwrap())
        })
    })));
    pool.set_elicitation_handler(Some(Arc::new(|_req| {
        Box::pin(async {
            Ok(
                mcpmux::model::ElicitResult::new(mcpmux::model::ElicitationAction::Accept)
                    .with_content(json!({"name": "Grace"})),
            )
        })
    })));
    pool.set_roots(vec![
        mcpmux::model::Root::new("file:///a"),
        mcpmux::model::Root::new("file:///b"),
    ])
    .await;
    add_test_server(&pool, "t", &[]).await;
    let r = call_ok(&pool, "mcp__t__ask", json!({})).await;
    assert_eq!(text(&r), r#"name="Grace" sample="hi from host" roots=2"#);
    assert_eq!(
        pool.server_states()[0].protocol_version.as_deref(),
        Some("2026-07-28")
    );
    pool.close().await;
}

/// An elicitation handler answering `name` and counting the questions.
fn answer_name(pool: &mcpmux::Pool, name: &'static str) -> Arc<std::sync::atomic::AtomicUsize> {
    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = asked.clone();
    pool.set_elicitation_handler(Some(Arc::new(move |_req| {
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move {
            Ok(
                mcpmux::model::ElicitResult::new(mcpmux::model::ElicitationAction::Accept)
                    .with_content(json!({"name": name})),
            )
        })
    })));
    asked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_and_resources_complete_through_input_rounds() {
    let pool = pool().await;
    let asked = answer_name(&pool, "Ada");
    add_test_server(&pool, "t", &[]).await;
    assert_eq!(prompt_text(&pool, "t", "ask").await, "Hello, Ada!");
    assert_eq!(
        resource_text(&pool, "t", "test://ask").await,
        "asked for Ada"
    );
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 2);
    // Rounds that carry only the server's state are sent again without asking the host.
    assert_eq!(
        resource_text(&pool, "t", "test://wait").await,
        "waited two rounds"
    );
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 2);
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_rounds_stop_at_the_pools_cap() {
    let pool = pool_with(PoolOptions {
        max_input_rounds: 3,
        ..options()
    })
    .await;
    add_test_server(&pool, "t", &[]).await;
    let err = pool
        .read_resource("t", "test://ask-forever")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol, "{err}");
    assert!(
        err.to_string()
            .contains("resources/read: still asking for input after 3 rounds"),
        "{err}"
    );
    // Without an elicitation handler the question is declined, and the server says so.
    let prompt = pool.get_prompt("t", "ask", None).await.unwrap();
    let greeting = serde_json::to_value(&prompt.messages[0]).unwrap();
    assert_eq!(
        greeting["content"]["text"], "Hello, declined!",
        "{greeting}"
    );
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(deprecated, reason = "sampling (SEP-2577) is what this test exercises")]
async fn the_input_requests_of_one_round_are_answered_at_once() {
    // The elicitation waits for the sampling request to arrive: answered one after the
    // other, the round would never finish.
    let pool = pool().await;
    let both = Arc::new(tokio::sync::Barrier::new(2));
    let meet = both.clone();
    pool.set_sampling_handler(Some(Arc::new(move |_req| {
        let meet = meet.clone();
        Box::pin(async move {
            meet.wait().await;
            Ok(serde_json::from_value(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "together"},
                "model": "m"
            }))
            .unwrap())
        })
    })));
    let meet = both.clone();
    pool.set_elicitation_handler(Some(Arc::new(move |_req| {
        let meet = meet.clone();
        Box::pin(async move {
            meet.wait().await;
            Ok(
                mcpmux::model::ElicitResult::new(mcpmux::model::ElicitationAction::Accept)
                    .with_content(json!({"name": "Lin"})),
            )
        })
    })));
    add_test_server(&pool, "t", &[]).await;
    let r = tokio::time::timeout(
        Duration::from_secs(10),
        call_ok(&pool, "mcp__t__ask", json!({})),
    )
    .await
    .expect("the round's requests were answered one after the other");
    assert!(
        text(&r).starts_with(r#"name="Lin" sample="together""#),
        "{}",
        text(&r)
    );
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_lists_a_new_server_first_then_answers_from_the_catalog_without_connecting() {
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    // Never listed (and not connected on add in these tests): the search lists it first.
    assert!(pool.known_tools().is_empty());
    let hits = pool
        .search_tools("return the text unchanged", Some(3))
        .await
        .unwrap();
    assert_eq!(hits[0].id, "mcp__t__echo", "{hits:?}");
    pool.close().await;
    // The catalog is written in the background, and finished by the close.
    assert!(pool.dir.path().join("servers.tools.json").exists());

    let again = mcpmux::Pool::open(PoolOptions {
        config_path: Some(pool.dir.path().join("servers.json")),
        ..options()
    })
    .await
    .unwrap();
    let hits = again
        .search_tools("sleep milliseconds progress slept", Some(3))
        .await
        .unwrap();
    assert_eq!(hits[0].id, "mcp__t__sleep", "{hits:?}");
    assert_eq!(again.known_tools().len(), mcpmux_tests::TEST_SERVER_TOOLS);
    assert!(
        again
            .server_states()
            .iter()
            .all(|s| s.state == ConnectionState::Disconnected),
        "search connected a server"
    );
    // Disabling a tool hides it from search too.
    again
        .update_server(
            "t",
            ServerPatch {
                disabled_tools: Some(vec!["sleep".into()]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(
        again
            .search_tools("sleep", Some(3))
            .await
            .unwrap()
            .iter()
            .all(|h| h.name != "sleep")
    );
    again.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_starts_with_discovery_and_activates_servers_on_first_use() {
    let pool = pool().await;
    let rec = add_test_server(&pool, "t", &[]).await;
    let conv = pool.conversation();
    let names =
        |c: &mcpmux::Conversation| c.tools().into_iter().map(|t| t.name).collect::<Vec<_>>();
    let first = names(&conv);
    for n in [
        "search_tools",
        "t_mcp_list_tools",
        "t_mcp_search_tools",
        "t_mcp_list_recipes",
        "t_mcp_search_recipes",
        "t_mcp_get_recipe",
    ] {
        assert!(first.contains(&n.to_string()), "{n} missing from {first:?}");
    }
    assert!(!first.iter().any(|n| n.starts_with("mcp__")), "{first:?}");

    let listed = conv
        .call("t_mcp_list_tools", json!({}), Default::default())
        .await
        .unwrap();
    let ids: Vec<_> = listed
        .structured_content
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert!(ids.contains(&"mcp__t__echo".to_string()), "{ids:?}");
    assert!(conv.activated().is_empty(), "discovery must not activate");
    let found = conv
        .call(
            "search_tools",
            json!({"query": "sleep milliseconds slept"}),
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        found.structured_content.unwrap()["tools"][0]["id"],
        "mcp__t__sleep"
    );
    let mine = conv
        .call(
            "t_mcp_search_tools",
            json!({"query": "process id"}),
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        mine.structured_content.unwrap()["tools"][0]["id"],
        "mcp__t__pid"
    );

    // The server's own recipe tool takes the canonical name (WebMCP Auto-UI's alias map).
    let def = conv
        .tools()
        .into_iter()
        .find(|t| t.name == "t_mcp_search_recipes")
        .unwrap();
    assert!(
        def.input_schema.to_value()["properties"]
            .get("keyword")
            .is_some(),
        "{def:?}"
    );
    let r = conv
        .call(
            "t_mcp_search_recipes",
            json!({"keyword": "chart"}),
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(text(&r), "recipes matching chart: none yet");
    let e = conv
        .call("t_mcp_get_recipe", json!({"name": "x"}), Default::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert!(conv.activated().is_empty());

    let r = conv
        .call("mcp__t__echo", json!({"text": "real"}), Default::default())
        .await
        .unwrap();
    assert_eq!(text(&r), "real");
    assert_eq!(conv.activated(), vec![rec.id.clone()]);
    let now = names(&conv);
    assert!(
        now.contains(&"mcp__t__sleep".to_string()),
        "activation adds every tool of the server"
    );
    // Another conversation starts over.
    assert!(pool.conversation().activated().is_empty());
    let e = conv
        .call("t_mcp_search_tools", json!({}), Default::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    pool.close().await;
}

/// Registers a host tool `set_theme` that accepts any object and answers nothing.
fn register_set_theme(pool: &mcpmux::Pool) {
    pool.register_tool(mcpmux::HostTool {
        name: "set_theme".into(),
        description: "Switch the theme".into(),
        input_schema: json!({"type": "object"}),
        handler: Arc::new(|_| Box::pin(async { Ok(Default::default()) })),
    })
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversations_tools_follow_changes_made_between_turns() {
    // The known tools are described once and shared until something changes: each change
    // below must reach the next turn's tools.
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    let conv = pool.conversation();
    let names =
        |c: &mcpmux::Conversation| c.tools().into_iter().map(|t| t.name).collect::<Vec<_>>();
    conv.call("mcp__t__echo", json!({"text": "x"}), Default::default())
        .await
        .unwrap();
    let before = names(&conv);
    assert!(before.contains(&"mcp__t__sleep".to_string()), "{before:?}");

    register_set_theme(&pool);
    let with_host = names(&conv);
    let host_layer: Vec<_> = with_host.iter().filter(|n| !before.contains(n)).collect();
    assert_eq!(
        host_layer.len(),
        5,
        "a layer of the host's tools: {host_layer:?}"
    );

    let patch = mcpmux::ServerPatch {
        disabled_tools: Some(vec!["sleep".into()]),
        ..Default::default()
    };
    pool.update_server("t", patch).await.unwrap();
    pool.list_tools(Some("t")).await.unwrap();
    let without_sleep = names(&conv);
    assert!(!without_sleep.contains(&"mcp__t__sleep".to_string()));
    assert!(without_sleep.contains(&"mcp__t__echo".to_string()));

    add_test_server(&pool, "u", &[]).await;
    assert!(names(&conv).contains(&"u_mcp_list_tools".to_string()));
    set_active(&pool, "u", false).await;
    assert!(!names(&conv).contains(&"u_mcp_list_tools".to_string()));
    assert!(pool.unregister_tool("set_theme"));
    let after = names(&conv);
    assert!(!after.iter().any(|n| host_layer.contains(&n)), "{after:?}");
    assert_eq!(after.len(), without_sleep.len() - host_layer.len());
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_asked_again_follows_every_change() {
    // A listing with every list fresh is copied out of the last one's places: after each
    // change below it must be what a listing that asks every server again gives.
    let pool = pool().await;
    // Names that sanitize alike: their ids are assigned together, conflicts included. Lists
    // fresh for a minute (an rmcp server's lists say `ttlMs: 0` unless told otherwise).
    let fresh = ["--tools-ttl-ms", "60000"];
    add_test_server(&pool, "a.b", &fresh).await;
    add_test_server(&pool, "a_b", &fresh).await;
    let shown = |tools: Vec<mcpmux::ToolInfo>| {
        tools
            .into_iter()
            .map(|t| (t.id, t.server_name, t.name, t.description))
            .collect::<Vec<_>>()
    };
    let check = |pool: mcpmux::Pool| async move {
        let again = shown(pool.list_tools(None).await.unwrap());
        let refresh = mcpmux::ListOptions {
            refresh: true,
            ..Default::default()
        };
        let asked = shown(pool.list_tools_with(None, refresh).await.unwrap());
        assert_eq!(again, asked);
        // And once more from the listing made of the lists just asked for.
        assert_eq!(shown(pool.list_tools(None).await.unwrap()), asked);
        asked.into_iter().map(|(id, ..)| id).collect::<Vec<_>>()
    };
    let first = shown(pool.list_tools(None).await.unwrap());
    let ids = check(pool.clone()).await;
    assert_eq!(ids, first.iter().map(|t| t.0.clone()).collect::<Vec<_>>());
    assert!(ids.contains(&"mcp__a_b__echo".to_string()), "{ids:?}");
    assert_eq!(
        ids.iter()
            .filter(|i| i.starts_with("mcp__a_b__echo"))
            .count(),
        2
    );

    register_set_theme(&pool);
    assert!(check(pool.clone()).await.contains(&"set_theme".to_string()));

    let patch = mcpmux::ServerPatch {
        disabled_tools: Some(vec!["sleep".into()]),
        ..Default::default()
    };
    pool.update_server("a.b", patch).await.unwrap();
    let ids = check(pool.clone()).await;
    assert_eq!(
        ids.iter()
            .filter(|i| i.starts_with("mcp__a_b__sleep"))
            .count(),
        1
    );

    let rename = mcpmux::ServerPatch {
        name: Some("c".into()),
        ..Default::default()
    };
    pool.update_server("a_b", rename).await.unwrap();
    let ids = check(pool.clone()).await;
    assert!(ids.contains(&"mcp__c__sleep".to_string()), "{ids:?}");
    // The new ids are known to calls.
    let echoed = pool
        .call_tool("mcp__c__echo", json!({"text": "hi"}), Default::default())
        .await
        .unwrap();
    assert_eq!(text(&echoed), "hi");

    set_active(&pool, "c", false).await;
    let ids = check(pool.clone()).await;
    assert!(!ids.iter().any(|i| i.starts_with("mcp__c__")), "{ids:?}");
    assert!(pool.unregister_tool("set_theme"));
    assert!(!check(pool.clone()).await.contains(&"set_theme".to_string()));
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_tools_are_listed_searched_validated_and_called_in_process() {
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    let mut events = pool.events();
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = calls.clone();
    pool.register_tool(mcpmux::HostTool {
        name: "set_theme".into(),
        description: "Switch the application between light and dark theme".into(),
        input_schema: json!({
            "type": "object",
            "properties": {"theme": {"type": "string", "enum": ["light", "dark"]}},
            "required": ["theme"]
        }),
        handler: Arc::new(move |args| {
            let seen = seen.clone();
            Box::pin(async move {
                seen.lock()
                    .unwrap()
                    .push(args["theme"].as_str().unwrap().to_string());
                Ok(mcpmux::model::CallToolResult::success(vec![
                    mcpmux::model::ContentBlock::text("theme set"),
                ]))
            })
        }),
    })
    .unwrap();
    assert!(
        wait_event(&mut events, Duration::from_secs(2), |e| {
            matches!(e, Event::ToolsChanged { server_id } if server_id == "local")
        })
        .await
        .is_some()
    );
    let tools = pool.list_tools(None).await.unwrap();
    assert!(
        tools
            .iter()
            .any(|t| t.id == "set_theme" && t.server_name == "local")
    );
    assert!(tools.iter().any(|t| t.id == "mcp__t__echo"));
    assert_eq!(pool.list_tools(Some("local")).await.unwrap().len(), 1);
    assert_eq!(
        pool.search_tools("dark theme", Some(1)).await.unwrap()[0].id,
        "set_theme"
    );

    let r = call_ok(&pool, "set_theme", json!({"theme": "dark"})).await;
    assert_eq!(text(&r), "theme set");
    let bad = call_ok(&pool, "set_theme", json!({"theme": "blue"})).await;
    assert_eq!(bad.is_error, Some(true));
    assert!(text(&bad).contains("expected schema"), "{}", text(&bad));
    assert_eq!(
        *calls.lock().unwrap(),
        ["dark"],
        "the handler must not run on invalid input"
    );

    let conv = pool.conversation();
    assert!(
        conv.tools()
            .iter()
            .any(|t| t.name == "local_local_list_tools")
    );
    conv.call("set_theme", json!({"theme": "light"}), Default::default())
        .await
        .unwrap();
    assert_eq!(conv.activated(), vec!["local".to_string()]);
    assert!(conv.tools().iter().any(|t| t.name == "set_theme"));

    assert!(pool.unregister_tool("set_theme"));
    let e = pool
        .call_tool("set_theme", json!({"theme": "dark"}), Default::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);

    // A host tool that never answers is bound by the call's timeout and cancellation, and
    // its future is dropped (which is how a binding learns to stop the host function).
    let dropped = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    struct Flag(Arc<std::sync::atomic::AtomicUsize>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let seen = dropped.clone();
    pool.register_tool(mcpmux::HostTool {
        name: "wait_forever".into(),
        description: "never answers".into(),
        input_schema: json!({"type": "object"}),
        handler: Arc::new(move |_args| {
            let flag = Flag(seen.clone());
            Box::pin(async move {
                let _flag = flag;
                std::future::pending().await
            })
        }),
    })
    .unwrap();
    let e = pool
        .call_tool(
            "wait_forever",
            json!({}),
            CallOptions {
                timeout: Some(Duration::from_millis(100)),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    let cancel = tokio_util::sync::CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let e = pool
        .call_tool(
            "wait_forever",
            json!({}),
            CallOptions {
                cancel: Some(cancel),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Cancelled, "{e}");
    assert_eq!(dropped.load(std::sync::atomic::Ordering::SeqCst), 2);
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recipes_widgets_and_the_canvas_through_a_conversation() {
    let pool = pool().await;
    pool.register_recipe(
        "---\nwidget: stat\ndescription: Key figure (KPI, counter)\nschema:\n  type: object\n  required: [label, value]\n  properties:\n    label: { type: string }\n    value: { type: string }\n    icon: { type: string }\n---\nCall widget_display('stat', {label, value}).\n",
    )
    .unwrap();
    let mut events = pool.events();
    let changes = Arc::new(Mutex::new(0));
    let counter = changes.clone();
    pool.canvas()
        .subscribe(move |_| *counter.lock().unwrap() += 1);
    let conv = pool.conversation();
    let listed = conv
        .call("local_local_list_recipes", json!({}), Default::default())
        .await
        .unwrap();
    assert_eq!(listed.structured_content.unwrap()[0]["name"], "stat");
    let found = conv
        .call(
            "local_local_search_recipes",
            json!({"query": "kpi"}),
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(found.structured_content.unwrap()[0]["name"], "stat");
    let recipe = conv
        .call(
            "local_local_get_recipe",
            json!({"name": "stat"}),
            Default::default(),
        )
        .await
        .unwrap();
    assert!(text(&recipe).contains("widget_display"));

    let bad = conv
        .call(
            "widget_display",
            json!({"name": "stat", "params": {"label": "Visitors"}}),
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    assert!(text(&bad).contains("expected schema"), "{}", text(&bad));
    let ok = conv
        .call(
            "widget_display",
            json!({"name": "stat", "params": {"label": "Visitors", "value": "1,234", "icon": "javascript:alert(1)"}}),
            Default::default(),
        )
        .await
        .unwrap();
    let shown = ok.structured_content.unwrap();
    let id = shown["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("w_"), "{shown}");
    assert_eq!(shown["droppedUrls"], json!(["/icon"]));
    let event = wait_event(&mut events, Duration::from_secs(2), |e| {
        matches!(e, Event::Widget { .. })
    })
    .await;
    assert!(
        matches!(event, Some(Event::Widget { ref name, .. }) if name == "stat"),
        "{event:?}"
    );
    conv.call(
        "canvas",
        json!({"action": "move", "id": id, "params": {"x": 1, "y": 2}}),
        Default::default(),
    )
    .await
    .unwrap();
    let widgets = pool.canvas().widgets();
    assert_eq!(widgets.len(), 1);
    assert_eq!(widgets[0].position, Some(json!({"x": 1, "y": 2})));
    assert_eq!(widgets[0].params["icon"], "");
    assert_eq!(*changes.lock().unwrap(), 2);
    assert_eq!(conv.activated(), vec!["local".to_string()]);
    pool.close().await;
}

/// How many `tools/list` requests the test server `server` has answered.
async fn tools_listed(pool: &mcpmux::Pool, server: &str) -> u64 {
    let r = call_ok(pool, &format!("mcp__{server}__tools_listed"), json!({})).await;
    text(&r).parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_ttl_shorter_than_the_pools_is_honoured() {
    // The pool trusts a list for 5 minutes; one server says 1 s for its own, the other, from
    // before 2026-07-28, nothing. (A 2026-07-28 rmcp server that sets no hint says 0 ms.)
    let pool = pool().await;
    add_test_server(&pool, "short", &["--tools-ttl-ms", "1000"]).await;
    add_test_server(&pool, "plain", &["--legacy"]).await;
    for server in ["short", "plain"] {
        pool.list_tools(Some(server)).await.unwrap();
    }
    let first = [
        tools_listed(&pool, "short").await,
        tools_listed(&pool, "plain").await,
    ];
    for server in ["short", "plain"] {
        pool.list_tools(Some(server)).await.unwrap();
    }
    let again = [
        tools_listed(&pool, "short").await,
        tools_listed(&pool, "plain").await,
    ];
    assert_eq!(again, first, "a fresh list was asked for again");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    for server in ["short", "plain"] {
        pool.list_tools(Some(server)).await.unwrap();
    }
    let later = [
        tools_listed(&pool, "short").await,
        tools_listed(&pool, "plain").await,
    ];
    assert_eq!(later, [first[0] + 1, first[1]], "after the server's 1 s");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_tool_list_without_oauth_is_saved_for_its_config() {
    // `cacheScope: private` allows reuse in the authorization context that got the list; a
    // server without OAuth is authorized by its config, which the catalog entry is keyed by.
    let pool = pool().await;
    let mine = add_test_server(&pool, "mine", &["--private-tools"]).await;
    pool.list_tools(None).await.unwrap();
    pool.close().await;
    let file = std::fs::read_to_string(pool.dir.path().join("servers.tools.json")).unwrap();
    assert!(file.contains(&mine.id), "{file}");
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

/// `mcpmux serve --stdio`'s runtime (`event_loop::current_thread_runtime`): requests held
/// in a turn go out when the runtime runs out of ready tasks, and also while a task keeps it
/// busy for good (it still polls for I/O every few dozen tasks), or the two past the eighth
/// held request would wait forever.
#[test]
fn a_current_thread_runtime_ends_its_turns_idle_or_busy() {
    use mcpmux::event_loop;
    let runtime = event_loop::current_thread_runtime().unwrap();
    runtime.block_on(async {
        let pool = pool().await;
        // Not connected yet, as for a new user: the first ten calls start the server.
        add_test_server(&pool, "t", &[]).await;
        let ten = |round: &str| {
            let pool = pool.clone();
            let calls: Vec<_> = (0..10)
                .map(|i| {
                    let (pool, sent) = (pool.clone(), format!("{round}{i}"));
                    tokio::spawn(async move {
                        let answer = pool
                            .call_tool("mcp__t__echo", json!({"text": sent}), Default::default())
                            .await;
                        (sent, answer)
                    })
                })
                .collect();
            async move {
                let answers =
                    tokio::time::timeout(Duration::from_secs(5), futures::future::join_all(calls))
                        .await
                        .expect("held requests were never sent");
                for answer in answers {
                    let (sent, answer) = answer.unwrap();
                    assert_eq!(text(&answer.unwrap()), sent);
                }
            }
        };
        ten("idle").await;

        // A task that is always ready: the runtime never parks.
        let busy = tokio::spawn(std::future::poll_fn(|cx| {
            cx.waker().wake_by_ref();
            std::task::Poll::<()>::Pending
        }));
        ten("busy").await;
        busy.abort();
        event_loop::stop_batching_on_this_thread();
        pool.close().await;
    });
}

/// As a binding's event loop does (Node's): the first request of a turn is written at once,
/// the others of that turn are held and written together when it ends (or eight are held).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_held_for_the_end_of_a_loop_turn_are_sent_together() {
    use mcpmux::event_loop;
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    call_ok(&pool, "mcp__t__echo", json!({"text": "connected"})).await;
    let holds = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let told = holds.clone();
    event_loop::batch_writes_on_this_thread(move || {
        told.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    });
    let mut calls: Vec<_> = (0..10)
        .map(|i| {
            let arguments = json!({"text": format!("n{i}")});
            Box::pin(pool.call_tool("mcp__t__echo", arguments, Default::default()))
        })
        .collect();
    for call in &mut calls {
        assert!(futures::poll!(call.as_mut()).is_pending());
    }
    let first = calls.remove(0).await.unwrap();
    assert_eq!(text(&first), "n0");
    // Eight held requests fill the buffer, which then goes without waiting for the turn.
    let mut last = calls.pop().unwrap();
    let eight = tokio::time::timeout(Duration::from_secs(5), futures::future::join_all(calls))
        .await
        .expect("a full buffer was not sent");
    for (i, r) in eight.into_iter().enumerate() {
        assert_eq!(text(&r.unwrap()), format!("n{}", i + 1));
    }
    // The turn has not ended: the last is still held, so nothing answers it.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(futures::poll!(last.as_mut()).is_pending());
    event_loop::end_of_turn();
    assert_eq!(text(&last.await.unwrap()), "n9");
    // The loop was told once that the turn held requests, when it first did.
    assert_eq!(holds.load(std::sync::atomic::Ordering::SeqCst), 1);

    // A held request given up on before its turn ends still reaches the server before its
    // cancellation: the server stops it (rather than running a cancellation it never knew).
    let mut first =
        Box::pin(pool.call_tool("mcp__t__echo", json!({"text": "a"}), Default::default()));
    assert!(futures::poll!(first.as_mut()).is_pending());
    let mut held =
        Box::pin(pool.call_tool("mcp__t__sleep", json!({"ms": 10_000}), Default::default()));
    assert!(futures::poll!(held.as_mut()).is_pending());
    drop(held);
    assert_eq!(text(&first.await.unwrap()), "a");
    // The loop stops batching (what follows is not polled in turns).
    event_loop::stop_batching_on_this_thread();
    let deadline = Instant::now() + Duration::from_secs(5);
    while text(&call_ok(&pool, "mcp__t__cancelled", json!({})).await) != "1" {
        assert!(Instant::now() < deadline, "the server saw no cancellation");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Held requests to a server that died get its error, not a hang.
    let pid = pid_of(&pool, "mcp__t__pid").await;
    event_loop::batch_writes_on_this_thread(|| {});
    let mut first =
        Box::pin(pool.call_tool("mcp__t__sleep", json!({"ms": 10_000}), Default::default()));
    assert!(futures::poll!(first.as_mut()).is_pending());
    let mut held =
        Box::pin(pool.call_tool("mcp__t__echo", json!({"text": "b"}), Default::default()));
    assert!(futures::poll!(held.as_mut()).is_pending());
    // SAFETY: kills the test's own child process.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    tokio::time::sleep(Duration::from_millis(100)).await;
    event_loop::end_of_turn();
    let (first, held) =
        tokio::time::timeout(Duration::from_secs(5), futures::future::join(first, held))
            .await
            .expect("the calls to a dead server hang");
    for err in [first.unwrap_err(), held.unwrap_err()] {
        assert!(err.to_string().contains("the server exited"), "{err}");
    }
    event_loop::stop_batching_on_this_thread();
    pool.close().await;
}
