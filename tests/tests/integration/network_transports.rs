//! The network transports beyond Streamable HTTP: legacy HTTP+SSE (server-everything's `sse`
//! mode) and WebSocket (the Python `mcp` 1.x WebSocket server), with their faults.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use mcpmux::{ConnectionState, ErrorKind, Event, ServerInput, TransportType};
use mcpmux_tests::{ChildGuard, free_port, require_or_skip, wait_for_port};
use serde_json::json;

fn start_everything_sse(port: u16) -> Option<ChildGuard> {
    mcpmux_tests::start_everything("sse", port)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_sse_server_lists_calls_and_reports_progress() {
    let port = free_port();
    let _server = require_or_skip!(start_everything_sse(port), "server-everything");
    let pool = pool().await;
    pool.add_server(remote(
        "sse",
        format!("http://127.0.0.1:{port}/sse"),
        Some(TransportType::Sse),
    ))
    .await
    .unwrap();
    let tools = pool.list_tools(None).await.unwrap();
    assert!(tools.iter().any(|t| t.id == "mcp__sse__echo"), "{tools:?}");
    let r = call_ok(&pool, "mcp__sse__echo", json!({"message": "over sse"})).await;
    assert!(text(&r).contains("over sse"));
    let operation = "mcp__sse__trigger-long-running-operation";
    let steps = json!({"duration": 1, "steps": 3});
    let (_, progress) = call_with_progress(&pool, operation, steps, Default::default()).await;
    assert!(progress.len() >= 2, "{progress:?}");
    assert!(!pool.list_prompts(None).await.unwrap().is_empty());
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_falls_back_to_sse_unless_strict() {
    let port = free_port();
    let _server = require_or_skip!(start_everything_sse(port), "server-everything");
    let pool = pool().await;
    let mut events = pool.events();
    let url = format!("http://127.0.0.1:{port}/sse");
    pool.add_server(remote("auto", url.clone(), None))
        .await
        .unwrap();
    assert_eq!(
        pool.get_server("auto").await.unwrap().transport,
        TransportType::Http
    );
    let r = call_ok(&pool, "mcp__auto__echo", json!({"message": "fallback"})).await;
    assert!(text(&r).contains("fallback"));
    let notice = drain(&mut events)
        .into_iter()
        .any(|e| matches!(e, Event::Log { message, .. } if message.contains("legacy HTTP+SSE")));
    assert!(notice, "no event saying the transport fell back");

    let mut strict = remote("strict", url, None);
    strict.config.strict_transport = true;
    pool.add_server(strict).await.unwrap();
    let e = pool.list_tools(Some("strict")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Connection, "{e}");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_server_stopping_mid_call_fails_fast_then_reconnects_when_back() {
    let port = free_port();
    let mut server = require_or_skip!(start_everything_sse(port), "server-everything");
    let pool = pool().await;
    let mut events = pool.events();
    pool.add_server(remote(
        "sse",
        format!("http://127.0.0.1:{port}/sse"),
        Some(TransportType::Sse),
    ))
    .await
    .unwrap();
    pool.connect("sse").await.unwrap();
    let call = {
        let pool = pool.pool.clone();
        tokio::spawn(async move {
            pool.call_tool(
                "mcp__sse__trigger-long-running-operation",
                json!({"duration": 20, "steps": 20}),
                Default::default(),
            )
            .await
        })
    };
    fails_fast_when_killed(call, KILL_AFTER, || server.kill(), FAIL_WITHIN, "sse").await;
    let _back = start_everything_sse(port).unwrap();
    // Skip the first connect's event; the next one is the reconnect.
    let is_connected = |e: &Event| matches!(e, Event::ServerConnected { .. });
    assert!(
        wait_event(&mut events, Duration::from_secs(5), is_connected)
            .await
            .is_some()
    );
    let reconnected = wait_event(&mut events, Duration::from_secs(20), is_connected).await;
    assert!(
        reconnected.is_some(),
        "did not reconnect after the server came back"
    );
    assert_eq!(pool.server_states()[0].state, ConnectionState::Connected);
    let r = call_ok(&pool, "mcp__sse__echo", json!({"message": "back"})).await;
    assert!(text(&r).contains("back"));
    pool.close().await;
}

/// The Python SDK 1.x WebSocket server on `port`.
fn start_ws(port: u16) -> Option<ChildGuard> {
    let (python, args) = mcpmux_tests::ws_server_command()?;
    let mut cmd = Command::new(python);
    cmd.args(&args)
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let guard = ChildGuard::spawn(&mut cmd).expect("start the WebSocket server");
    assert!(
        wait_for_port(port, mcpmux_tests::SERVER_START),
        "no listener on {port}"
    );
    Some(guard)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_server_tools_sampling_and_restart() {
    let port = free_port();
    let mut server = require_or_skip!(start_ws(port), "mcp[ws] 1.x (Python)");
    let pool = pool().await;
    pool.set_sampling_handler(Some(std::sync::Arc::new(|req| {
        Box::pin(async move {
            #[allow(deprecated)]
            let asked = serde_json::to_string(&req.params.messages).unwrap();
            let result = serde_json::from_value(json!({
                "role": "assistant",
                "content": {"type": "text", "text": format!("host saw {}", asked.len())},
                "model": "m"
            }))
            .unwrap();
            Ok(result)
        })
    })));
    let mut events = pool.events();
    pool.add_server(remote("ws", format!("ws://127.0.0.1:{port}/ws"), None))
        .await
        .unwrap();
    assert_eq!(
        pool.get_server("ws").await.unwrap().transport,
        TransportType::Websocket
    );
    let tools = pool.list_tools(None).await.unwrap();
    assert!(tools.iter().any(|t| t.id == "mcp__ws__echo"), "{tools:?}");
    let r = call_ok(&pool, "mcp__ws__echo", json!({"text": "over ws"})).await;
    assert_eq!(text(&r), "over ws");
    let r = call_ok(&pool, "mcp__ws__ask_host", json!({"prompt": "hi"})).await;
    assert!(text(&r).starts_with("host saw"), "{r:?}");

    // The server restarts: the pool notices the closed socket and reconnects with backoff.
    server.kill();
    let _server = start_ws(port).unwrap();
    let is_connected = |e: &Event| matches!(e, Event::ServerConnected { .. });
    assert!(
        wait_event(&mut events, Duration::from_secs(5), is_connected)
            .await
            .is_some()
    );
    assert!(
        wait_event(&mut events, Duration::from_secs(20), is_connected)
            .await
            .is_some(),
        "no reconnect after the WebSocket server restarted"
    );
    let r = call_ok(&pool, "mcp__ws__echo", json!({"text": "again"})).await;
    assert_eq!(text(&r), "again");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_message_is_a_clear_error_on_every_transport() {
    let port = free_port();
    let _server = require_or_skip!(start_ws(port), "mcp[ws] 1.x (Python)");
    let pool = pool_with(mcpmux::PoolOptions {
        max_message_bytes: 64 * 1024,
        ..options()
    })
    .await;
    let mut events = pool.events();
    pool.add_server(remote("ws", format!("ws://127.0.0.1:{port}/ws"), None))
        .await
        .unwrap();
    let e = pool
        .call_tool(
            "mcp__ws__big",
            json!({"size": 1_000_000}),
            Default::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MessageTooLarge, "{e}");
    assert!(e.to_string().contains("65536 bytes"), "{e}");
    let reported = drain(&mut events).into_iter().any(|e| {
        matches!(e, Event::Log { level, message, .. } if level == "error" && message.contains("maxMessageBytes"))
    });
    assert!(reported, "no error event naming the size limit");
    // Smaller messages still go through (on a new connection).
    let r = call_ok(&pool, "mcp__ws__big", json!({"size": 1000})).await;
    assert_eq!(text(&r).len(), 1000);

    // stdio: the test server's echo of a large text.
    add_test_server(&pool, "t", &[]).await;
    let big = "y".repeat(200_000);
    let mut events = pool.events();
    let e = pool
        .call_tool(
            "mcp__t__echo",
            json!({"text": big}),
            mcpmux::CallOptions {
                timeout: Some(Duration::from_secs(2)),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MessageTooLarge, "{e}");
    let reported = drain(&mut events).into_iter().any(
        |e| matches!(e, Event::Log { message, .. } if message.contains("larger than 65536 bytes")),
    );
    assert!(reported, "no error event for the oversized stdio line");
    let r = call_ok(&pool, "mcp__t__echo", json!({"text": "small"})).await;
    assert_eq!(text(&r), "small");
    pool.close().await;
}

fn start_everything_http(port: u16) -> Option<ChildGuard> {
    mcpmux_tests::start_everything("streamableHttp", port)
}

/// How far into a long call a network server is killed, and how soon after the kill the call
/// must fail (a network transport notices a closed stream, not a dead process).
const KILL_AFTER: Duration = Duration::from_millis(500);
const FAIL_WITHIN: Duration = Duration::from_secs(2);

/// Kills the server during a long call: the call must fail fast, and the pool must be back
/// once the server is.
async fn stop_mid_call(
    input: ServerInput,
    slow_tool: &str,
    slow_args: serde_json::Value,
    mut server: ChildGuard,
    restart: impl FnOnce() -> ChildGuard,
) {
    let pool = pool().await;
    let name = input.name.clone();
    pool.add_server(input).await.unwrap();
    pool.connect(&name).await.unwrap();
    let call = {
        let pool = pool.pool.clone();
        let tool = slow_tool.to_string();
        tokio::spawn(async move { pool.call_tool(&tool, slow_args, Default::default()).await })
    };
    fails_fast_when_killed(call, KILL_AFTER, || server.kill(), FAIL_WITHIN, &name).await;
    let _back = restart();
    let mut ok = false;
    for _ in 0..40 {
        if pool.server_states()[0].state == ConnectionState::Connected {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(ok, "{name}: no reconnect after the server came back");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_and_http_servers_stopping_mid_call_fail_fast_then_reconnect() {
    let port = free_port();
    let server = require_or_skip!(start_ws(port), "mcp[ws] 1.x (Python)");
    stop_mid_call(
        remote("ws", format!("ws://127.0.0.1:{port}/ws"), None),
        "mcp__ws__sleep",
        json!({"seconds": 30}),
        server,
        || start_ws(port).unwrap(),
    )
    .await;

    let port = free_port();
    let server = require_or_skip!(start_everything_http(port), "server-everything");
    stop_mid_call(
        remote(
            "http",
            format!("http://127.0.0.1:{port}/mcp"),
            Some(TransportType::Http),
        ),
        "mcp__http__trigger-long-running-operation",
        json!({"duration": 30, "steps": 30}),
        server,
        || start_everything_http(port).unwrap(),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_messages_over_sse_and_http_are_clear_errors() {
    let sse_port = free_port();
    let _sse = require_or_skip!(start_everything_sse(sse_port), "server-everything");
    let http_port = free_port();
    let _http = start_everything_http(http_port).unwrap();
    // server-everything's tool list alone is several kilobytes.
    let pool = pool_with(mcpmux::PoolOptions {
        max_message_bytes: 1024,
        request_timeout_ms: 5_000,
        connect_timeout_ms: 5_000,
        ..options()
    })
    .await;
    pool.add_server(remote(
        "sse",
        format!("http://127.0.0.1:{sse_port}/sse"),
        Some(TransportType::Sse),
    ))
    .await
    .unwrap();
    let mut http = remote("http", format!("http://127.0.0.1:{http_port}/mcp"), None);
    http.config.strict_transport = true;
    pool.add_server(http).await.unwrap();
    for name in ["sse", "http"] {
        let started = Instant::now();
        let e = pool.list_tools(Some(name)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::MessageTooLarge, "{name}: {e}");
        assert!(
            e.to_string().contains("over the limit of 1024 bytes"),
            "{e}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{name}: {:?}",
            started.elapsed()
        );
    }
    pool.close().await;
}

/// A 40 MB reply under the default limit (16 MiB): the call gets `message_too_large`, naming
/// the server, the size seen, the limit and the option to raise; memory stays bounded, the
/// connection is opened anew, and the next call works. On stdio the size is exact (the
/// transport reads the whole line to skip it); Streamable HTTP stops reading at the limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_40_mb_reply_is_message_too_large_on_stdio_and_streamable_http() {
    const FORTY_MB: usize = 40_000_000;
    let (_http, url) = mcpmux_tests::start_test_server_http();
    let pool = pool().await;
    assert_eq!(pool.options().max_message_bytes, 16 * 1024 * 1024);
    add_test_server(&pool, "piped", &[]).await;
    pool.add_server(remote("web", url, Some(TransportType::Http)))
        .await
        .unwrap();
    for server in ["piped", "web"] {
        let tool = format!("mcp__{server}__big");
        let e = pool
            .call_tool(&tool, json!({"size": FORTY_MB}), Default::default())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::MessageTooLarge, "{server}: {e}");
        let message = e.to_string();
        for part in [
            format!("server '{server}'"),
            "over the limit of 16777216 bytes (16 MiB)".into(),
            "maxMessageBytes".into(),
        ] {
            assert!(message.contains(&part), "{server}: {message}");
        }
        match (&e, server) {
            (mcpmux::Error::MessageTooLarge { size: Some(n), .. }, "piped") => {
                assert!(*n > FORTY_MB as u64, "{message}")
            }
            (mcpmux::Error::MessageTooLarge { size: None, .. }, "web") => {}
            _ => panic!("{server}: {e:?}"),
        }
        let r = call_ok(&pool, &tool, json!({"size": 10})).await;
        assert_eq!(
            text(&r),
            "x".repeat(10),
            "{server}: after the refused reply"
        );
    }
    pool.close().await;
}

/// Over Streamable HTTP (rmcp's session, not the stdio direct path), a call cancelled or
/// dropped reaches the server as `notifications/cancelled` for its request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_or_dropped_call_over_http_is_cancelled_at_the_server() {
    let (_http, url) = mcpmux_tests::start_test_server_http();
    let pool = pool().await;
    pool.add_server(remote("web", url, Some(TransportType::Http)))
        .await
        .unwrap();
    let cancel = tokio_util::sync::CancellationToken::new();
    let options = mcpmux::CallOptions {
        cancel: Some(cancel.clone()),
        ..Default::default()
    };
    let call = pool.call_tool("mcp__web__sleep", json!({"ms": 10_000}), options);
    let (ended, ()) = tokio::join!(call, async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    assert_eq!(ended.unwrap_err().kind(), ErrorKind::Cancelled);
    let _ = tokio::time::timeout(
        Duration::from_millis(300),
        pool.call_tool("mcp__web__sleep", json!({"ms": 10_000}), Default::default()),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let heard = text(&call_ok(&pool, "mcp__web__cancelled", json!({})).await);
        if heard == "2" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the server heard {heard} cancellations"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    pool.close().await;
}

/// A site that moved, behind a real nginx: `/moved` answers 307 to `/mcp` on the same origin,
/// `/found` 302 to it, and `/away` 307 to another port of 127.0.0.1 (another origin).
fn moved_site(dir: &std::path::Path, server: &str, away: u16) -> Option<(ChildGuard, u16)> {
    let Some(nginx) = mcpmux_tests::nginx::nginx() else {
        mcpmux_tests::skip_or_fail("nginx (Debian's package)");
        return None;
    };
    let upstream = server.trim_end_matches("/mcp");
    let http = format!(
        "    server {{\n        listen 127.0.0.1:{{port}};\n\
         location = /moved {{ return 307 /mcp; }}\n\
         location = /found {{ return 302 /mcp; }}\n\
         location = /away {{ return 307 http://127.0.0.1:{away}/mcp; }}\n\
         location / {{\n            proxy_pass {upstream};\n\
         proxy_http_version 1.1;\n            proxy_set_header Connection \"\";\n\
         proxy_buffering off;\n        }}\n    }}"
    );
    Some(mcpmux_tests::nginx::start(&nginx, dir, &http))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_follows_only_same_origin_307_and_308_redirects() {
    let (_server, url) = mcpmux_tests::start_test_server_http();
    // The other origin: a listener that must never be connected to.
    let away = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let away_port = away.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let Some((_nginx, port)) = moved_site(dir.path(), &url, away_port) else {
        return;
    };
    let pool = pool().await;
    let site = |name: &str, path: &str| {
        let mut input = remote(
            name,
            format!("http://127.0.0.1:{port}{path}"),
            Some(TransportType::Http),
        );
        input.config.strict_transport = true;
        input
    };

    // 307 keeps the method and the body: followed on the same origin, every request.
    pool.add_server(site("moved", "/moved")).await.unwrap();
    let r = call_ok(&pool, "mcp__moved__echo", json!({"text": "followed"})).await;
    assert_eq!(text(&r), "followed");

    // 302 would turn the POST into a GET without its message; another origin would be sent
    // the request's headers: neither is followed, and the error says where the server went.
    for (name, path, to) in [
        ("found", "/found", format!("http://127.0.0.1:{port}/mcp")),
        ("away", "/away", format!("http://127.0.0.1:{away_port}/mcp")),
    ] {
        pool.add_server(site(name, path)).await.unwrap();
        let e = pool.list_tools(Some(name)).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Connection, "{name}: {e}");
        assert!(e.to_string().contains(&to), "{name}: {e}");
    }
    away.set_nonblocking(true).unwrap();
    let reached = away.accept();
    assert!(
        matches!(&reached, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the redirect to another origin was followed: {reached:?}"
    );
    pool.close().await;
}
