//! Server → client requests routed to the host: sampling, elicitation, roots; and server
//! notifications: logging, resource updates, tool list changes. Against server-everything.
#![allow(
    deprecated,
    reason = "sampling and roots are deprecated by SEP-2577 but still used"
)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use mcpmux::model::{CreateMessageResult, ElicitResult, ElicitationAction, Root};
use mcpmux::{Event, HostRequest, Pool, ServerInput, TransportType};
use mcpmux_tests::{ChildGuard, everything_command, free_port, require_or_skip};
use serde_json::json;

/// server-everything over `mode` (stdio, sse or streamableHttp): the server record, and the
/// process for the network modes.
fn everything(mode: &str) -> Option<(ServerInput, Option<ChildGuard>)> {
    let (node, mut args) = everything_command()?;
    args.push(mode.into());
    if mode == "stdio" {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        return Some((stdio("everything", node.to_str()?, &args), None));
    }
    let port = free_port();
    let guard = mcpmux_tests::start_everything(mode, port)?;
    let (path, transport) = match mode {
        "sse" => ("sse", TransportType::Sse),
        _ => ("mcp", TransportType::Http),
    };
    let input = ServerInput {
        name: "everything".into(),
        transport: Some(transport),
        config: mcpmux::ServerConfig {
            url: Some(format!("http://127.0.0.1:{port}/{path}")),
            ..Default::default()
        },
        ..Default::default()
    };
    Some((input, Some(guard)))
}

const MODES: [&str; 3] = ["stdio", "sse", "streamableHttp"];

/// A sampling handler standing in for the host's LLM; records what it was asked.
fn sampler(seen: Arc<Mutex<Vec<String>>>) -> mcpmux::SamplingHandler {
    Arc::new(
        move |req: HostRequest<mcpmux::model::CreateMessageRequestParams>| {
            let seen = seen.clone();
            Box::pin(async move {
                let asked = serde_json::to_string(&req.params.messages).unwrap();
                seen.lock()
                    .unwrap()
                    .push(format!("{}: {asked}", req.server_name));
                let result: CreateMessageResult = serde_json::from_value(json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": "sampled by the host"},
                    "model": "host-model",
                    "stopReason": "endTurn"
                }))
                .unwrap();
                Ok(result)
            })
        },
    )
}

/// Answers forms with a fixed name, and "opens" URL-mode requests by recording them.
fn elicitor(urls: Arc<Mutex<Vec<String>>>) -> mcpmux::ElicitationHandler {
    Arc::new(move |req| {
        let urls = urls.clone();
        Box::pin(async move {
            let params = serde_json::to_value(&req.params).unwrap();
            if params["mode"] == "url" {
                urls.lock()
                    .unwrap()
                    .push(params["url"].as_str().unwrap().to_string());
                return Ok(ElicitResult::new(ElicitationAction::Accept));
            }
            Ok(ElicitResult::new(ElicitationAction::Accept)
                .with_content(json!({"name": "Ada Lovelace", "check": true})))
        })
    })
}

async fn call_text(pool: &Pool, tool: &str, args: serde_json::Value) -> String {
    let r = pool
        .call_tool(tool, args, Default::default())
        .await
        .unwrap();
    assert_ne!(r.is_error, Some(true), "{tool}: {r:?}");
    serde_json::to_string(&r.content).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_elicitation_and_roots_reach_the_host() {
    for mode in MODES {
        let (input, _server) =
            require_or_skip!(everything(mode), "@modelcontextprotocol/server-everything");
        eprintln!("=== host requests over {mode}");
        host_requests_over(input).await;
    }
}

async fn host_requests_over(input: ServerInput) {
    // Over Streamable HTTP the server announces its new tools while handling
    // `notifications/initialized`, before any client can have its GET stream open, so
    // nobody receives that announcement; over stdio and SSE it arrives.
    let expect_list_changed = input.transport != Some(TransportType::Http);
    let pool = pool().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    pool.set_sampling_handler(Some(sampler(seen.clone())));
    let opened = Arc::new(Mutex::new(Vec::new()));
    pool.set_elicitation_handler(Some(elicitor(opened.clone())));
    pool.set_roots(vec![
        Root::new("file:///tmp/mcpmux-first").with_name("first"),
    ])
    .await;
    let mut events = pool.events();
    pool.add_server(input).await.unwrap();
    pool.connect("everything").await.unwrap();
    // The server adds tools for the capabilities we declared, and says so.
    if expect_list_changed {
        let changed = wait_event(&mut events, Duration::from_secs(10), |e| {
            matches!(e, Event::ToolsChanged { .. })
        })
        .await;
        assert!(changed.is_some(), "no tools:changed event");
    }
    // Connecting (and each list change) refreshes the catalog: the pool knows the new tools
    // without anyone listing them.
    let found = mcpmux_tests::wait_until(Duration::from_secs(10), || {
        pool.known_tools()
            .iter()
            .any(|t| t.name == "trigger-sampling-request")
    });
    assert!(found, "search never saw the tools added after connecting");
    let tools = pool.list_tools(None).await.unwrap();
    for t in [
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "get-roots-list",
    ] {
        assert!(tools.iter().any(|x| x.name == t), "{t} missing");
    }

    let out = call_text(
        &pool,
        "mcp__everything__trigger-sampling-request",
        json!({"prompt": "what is mcpmux?", "maxTokens": 10}),
    )
    .await;
    assert!(out.contains("sampled by the host"), "{out}");
    let asked = seen.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0].starts_with("everything: ") && asked[0].contains("what is mcpmux?"),
        "{asked:?}"
    );

    let out = call_text(
        &pool,
        "mcp__everything__trigger-elicitation-request",
        json!({}),
    )
    .await;
    assert!(out.contains("Ada Lovelace"), "{out}");

    let out = call_text(&pool, "mcp__everything__get-roots-list", json!({})).await;
    assert!(out.contains("file:///tmp/mcpmux-first"), "{out}");
    pool.set_roots(vec![Root::new("file:///tmp/mcpmux-second")])
        .await;
    let mut updated = false;
    for _ in 0..50 {
        let out = call_text(&pool, "mcp__everything__get-roots-list", json!({})).await;
        if out.contains("mcpmux-second") {
            updated = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(updated, "the server never saw the new roots");

    // A roots handler answers instead of the lists, asked each time, per server.
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    pool.set_roots_handler(Some(Arc::new(move |req: HostRequest<()>| {
        log.lock().unwrap().push(req.server_name.clone());
        Box::pin(async move { Ok(vec![Root::new("file:///tmp/mcpmux-from-handler")]) })
    })));
    pool.notify_roots_changed().await;
    let mut answered = false;
    for _ in 0..50 {
        let out = call_text(&pool, "mcp__everything__get-roots-list", json!({})).await;
        if out.contains("mcpmux-from-handler") {
            answered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(answered, "the server never saw the handler's roots");
    assert!(asked.lock().unwrap().iter().all(|n| n == "everything"));
    pool.set_roots_handler(None);

    // Handlers removed after connecting: sampling is refused and elicitation declined,
    // cleanly, as results or errors the caller can read.
    pool.set_sampling_handler(None);
    pool.set_elicitation_handler(None);
    let r = pool
        .call_tool(
            "mcp__everything__trigger-sampling-request",
            json!({"prompt": "x"}),
            Default::default(),
        )
        .await;
    match r {
        Ok(r) => assert_eq!(r.is_error, Some(true), "{r:?}"),
        Err(e) => assert!(e.to_string().contains("sampling"), "{e}"),
    }
    let out = call_text(
        &pool,
        "mcp__everything__trigger-elicitation-request",
        json!({}),
    )
    .await;
    assert!(out.contains("declined"), "{out}");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_logs_and_resource_updates_become_events() {
    for mode in MODES {
        let (input, _server) =
            require_or_skip!(everything(mode), "@modelcontextprotocol/server-everything");
        eprintln!("=== notifications over {mode}");
        notifications_over(input).await;
    }
}

async fn notifications_over(input: ServerInput) {
    let pool = pool().await;
    pool.add_server(input).await.unwrap();
    let mut events = pool.events();
    let resources = pool.list_resources(Some("everything")).await.unwrap();
    let uri = resources[0].resource.uri.clone();
    pool.subscribe_resource("everything", &uri).await.unwrap();
    call_text(
        &pool,
        "mcp__everything__toggle-subscriber-updates",
        json!({}),
    )
    .await;
    call_text(
        &pool,
        "mcp__everything__toggle-simulated-logging",
        json!({}),
    )
    .await;
    let mut got_update = false;
    let mut got_log = false;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while !(got_update && got_log) {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match tokio::time::timeout(left, events.recv()).await {
            Ok(Some(Event::ResourceUpdated { uri: u, .. })) if u == uri => got_update = true,
            Ok(Some(Event::Log { source, level, .. })) if source == "notification" => {
                assert!(!level.is_empty());
                got_log = true;
            }
            Ok(Some(_)) => {}
            _ => break,
        }
    }
    assert!(got_update, "no resource:updated for {uri}");
    assert!(got_log, "no log event from notifications/message");
    pool.unsubscribe_resource("everything", &uri).await.unwrap();
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_filesystem_allows_the_roots_the_host_gives() {
    let (node, mut args) = require_or_skip!(
        mcpmux_tests::filesystem_command(),
        "@modelcontextprotocol/server-filesystem"
    );
    let from_command_line = tempfile::tempdir().unwrap();
    let from_roots = tempfile::tempdir().unwrap();
    std::fs::write(from_roots.path().join("note.txt"), "rooted").unwrap();
    args.push(from_command_line.path().to_string_lossy().into_owned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let pool = pool().await;
    let root_uri = format!("file://{}", from_roots.path().display());
    pool.set_roots(vec![Root::new(root_uri).with_name("project")])
        .await;
    pool.add_server(stdio("fs", node.to_str().unwrap(), &args))
        .await
        .unwrap();
    let mut allowed = String::new();
    for _ in 0..50 {
        allowed = call_text(&pool, "mcp__fs__list_allowed_directories", json!({})).await;
        if allowed.contains(from_roots.path().file_name().unwrap().to_str().unwrap()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let roots_dir = from_roots.path().file_name().unwrap().to_str().unwrap();
    let cli_dir = from_command_line
        .path()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap();
    assert!(allowed.contains(roots_dir), "{allowed}");
    assert!(!allowed.contains(cli_dir), "{allowed}");
    let note = from_roots.path().join("note.txt");
    let out = call_text(&pool, "mcp__fs__read_text_file", json!({"path": note})).await;
    assert!(out.contains("rooted"), "{out}");
    pool.close().await;
}
