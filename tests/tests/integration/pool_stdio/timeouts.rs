//! Time limits: the connect and call timeouts, progress resetting a call's, limits kept by
//! one task per session.

use std::time::{Duration, Instant};

use crate::common::*;
use mcpmux::{CallOptions, ErrorKind, PoolOptions};
use serde_json::json;

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
async fn a_listing_that_never_comes_ends_in_the_request_timeout() {
    // A call of a tool the pool has not listed yet waits for its server's list, and one
    // listing at a time runs per server: a list that never comes (a server stuck in it, or
    // an answer lost with its session) must end in the request timeout, not hold that call
    // and every later one of the server. The background listing after `add_server` is the
    // first to wait here.
    let pool = pool_with(PoolOptions {
        request_timeout_ms: 500,
        connect_on_add: true,
        ..options()
    })
    .await;
    add_test_server(
        &pool,
        "mute",
        &["--mute", "tools/list", "--mute", "resources/list"],
    )
    .await;
    for _ in 0..2 {
        let started = Instant::now();
        let call = pool.call_tool(
            "mcp__mute__echo",
            json!({"text": "x"}),
            CallOptions::default(),
        );
        let err = tokio::time::timeout(Duration::from_secs(30), call)
            .await
            .expect("the call came back")
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
        assert!(err.to_string().contains("tools/list"), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }
    let listing = tokio::time::timeout(Duration::from_secs(30), pool.list_tools(Some("mute")));
    let err = listing.await.expect("the listing came back").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    // Every listing has the limit: resources too, alone or with the other servers'.
    let listing = tokio::time::timeout(Duration::from_secs(30), pool.list_resources(Some("mute")));
    let err = listing.await.expect("the listing came back").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert!(err.to_string().contains("resources/list"), "{err}");
    add_test_server(&pool, "t", &[]).await;
    let all = tokio::time::timeout(Duration::from_secs(30), pool.list_resources(None));
    let all = all.await.expect("the listing came back").unwrap();
    assert!(all.iter().any(|r| r.server_name == "t"), "{all:?}");
    assert!(all.iter().all(|r| r.server_name != "mute"), "{all:?}");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_that_never_comes_back_ends_in_the_request_timeout() {
    // Reading a resource, getting a prompt and an extension's request wait for one answer
    // each: a server stuck in one (or whose answer was lost) must not hold the caller.
    let pool = pool_with(PoolOptions {
        request_timeout_ms: 500,
        ..options()
    })
    .await;
    let muted = ["resources/read", "prompts/get", "test/echo"];
    let args: Vec<&str> = muted.iter().flat_map(|m| ["--mute", m]).collect();
    add_test_server(&pool, "mute", &args).await;
    let resources = pool.list_resources(Some("mute")).await.unwrap();
    let uri = resources[0].resource.uri.clone();
    let prompts = pool.list_prompts(Some("mute")).await.unwrap();
    let prompt = prompts[0].prompt.name.clone();
    for method in muted {
        let started = Instant::now();
        let asked = async {
            match method {
                "resources/read" => pool.read_resource("mute", &uri).await.map(|_| ()),
                "prompts/get" => pool.get_prompt("mute", &prompt, None).await.map(|_| ()),
                _ => pool.request("mute", method, None).await.map(|_| ()),
            }
        };
        let err = tokio::time::timeout(Duration::from_secs(30), asked)
            .await
            .expect("the request came back")
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Timeout, "{method}: {err}");
        assert!(err.to_string().contains(method), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{method}: {:?}",
            started.elapsed()
        );
    }
    // The connection stays: what the server does answer still comes.
    let echoed = pool
        .call_tool(
            "mcp__mute__echo",
            json!({"text": "x"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(!echoed.is_error.unwrap_or(false), "{echoed:?}");
    pool.close().await;
}
