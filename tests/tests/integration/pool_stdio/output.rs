//! What a server writes besides JSON-RPC: stderr as log events, other stdout lines as errors
//! (the config's secrets redacted).

use std::time::Duration;

use crate::common::*;
use mcpmux::Event;
use serde_json::json;

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
