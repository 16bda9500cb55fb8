//! The pool against third-party MCP servers, installed by scripts/test-deps.sh:
//! `@modelcontextprotocol/server-everything` (TypeScript SDK) over stdio and Streamable HTTP,
//! `mcp-server-time` (Python SDK) over stdio, and a Python SDK 2.3 `MCPServer` of our own
//! (`tests/servers/python_sdk_server.py`) on protocol 2026-07-28.

use std::process::Command;
use std::time::Duration;

use crate::common::*;
use mcpmux::{CallOptions, ServerConfig, ServerInput};
use mcpmux_tests::{
    ChildGuard, everything_command, free_port, python_sdk_server_command, require_or_skip,
    time_server_command, wait_for_port,
};
use serde_json::json;

fn everything_stdio() -> Option<ServerInput> {
    let (node, mut args) = everything_command()?;
    args.push("stdio".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Some(stdio("everything", node.to_str()?, &args))
}

/// Starts server-everything over Streamable HTTP on a free port of 127.0.0.1.
fn everything_http() -> Option<(ChildGuard, u16)> {
    let port = free_port();
    Some((
        mcpmux_tests::start_everything("streamableHttp", port)?,
        port,
    ))
}

async fn exercise_everything(pool: &TestPool) {
    let tools = pool.list_tools(Some("everything")).await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in ["echo", "get-sum", "trigger-long-running-operation"] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let r = call_ok(pool, "mcp__everything__echo", json!({"message": "hello"})).await;
    assert!(text(&r).contains("hello"), "{r:?}");
    let r = call_ok(pool, "mcp__everything__get-sum", json!({"a": 2, "b": 3})).await;
    assert!(text(&r).contains('5'), "{r:?}");

    let operation = "mcp__everything__trigger-long-running-operation";
    let steps = json!({"duration": 1, "steps": 3});
    let (r, progress) = call_with_progress(pool, operation, steps, Default::default()).await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    assert!(progress.len() >= 2, "progress updates: {progress:?}");

    let resources = pool.list_resources(Some("everything")).await.unwrap();
    assert!(!resources.is_empty());
    let first = resources[0].resource.uri.clone();
    let read = pool.read_resource("everything", &first).await.unwrap();
    assert!(!read.contents.is_empty());
    let prompts = pool.list_prompts(Some("everything")).await.unwrap();
    assert!(!prompts.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_stdio() {
    let input = require_or_skip!(
        everything_stdio(),
        "@modelcontextprotocol/server-everything"
    );
    let pool = pool().await;
    pool.add_server(input).await.unwrap();
    exercise_everything(&pool).await;
    let status = &pool.server_states()[0];
    assert_eq!(
        status.protocol_version.as_deref(),
        Some("2025-11-25"),
        "{status:?}"
    );
    let pid = status.pid.unwrap();
    pool.close().await;
    assert!(mcpmux_tests::wait_for_pid_exit(pid, Duration::from_secs(5)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_streamable_http_with_headers() {
    let (mut server, port) =
        require_or_skip!(everything_http(), "@modelcontextprotocol/server-everything");
    let pool = pool_with(mcpmux::PoolOptions {
        request_timeout_ms: 3_000,
        ..options()
    })
    .await;
    let mut config = ServerConfig {
        url: Some(format!("http://127.0.0.1:{port}/mcp")),
        ..Default::default()
    };
    config.headers.insert("X-Mcpmux-Test".into(), "yes".into());
    pool.add_server(ServerInput {
        name: "everything".into(),
        config,
        ..Default::default()
    })
    .await
    .unwrap();
    exercise_everything(&pool).await;

    // The server goes away and comes back on the same port: its sessions are gone, and the
    // pool must recover (session re-initialization or reconnect) without the caller's help.
    server.kill();
    let (node, mut args) = everything_command().unwrap();
    args.push("streamableHttp".into());
    let mut cmd = Command::new(node);
    cmd.args(&args)
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let _server = ChildGuard::spawn(&mut cmd).unwrap();
    assert!(wait_for_port(port, mcpmux_tests::SERVER_START));
    let mut ok = false;
    for _ in 0..8 {
        match pool
            .call_tool(
                "mcp__everything__echo",
                json!({"message": "again"}),
                CallOptions::default(),
            )
            .await
        {
            Ok(r) if text(&r).contains("again") => {
                ok = true;
                break;
            }
            other => {
                eprintln!("after restart: {other:?}");
                tokio::time::sleep(Duration::from_millis(500)).await
            }
        }
    }
    assert!(ok, "the pool did not recover after the server restarted");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_time_from_pypi_over_stdio() {
    let bin = require_or_skip!(time_server_command(), "mcp-server-time (PyPI)");
    let pool = pool().await;
    pool.add_server(stdio(
        "time",
        bin.to_str().unwrap(),
        &["--local-timezone", "UTC"],
    ))
    .await
    .unwrap();
    let tools = pool.list_tools(None).await.unwrap();
    assert!(
        tools.iter().any(|t| t.id == "mcp__time__get_current_time"),
        "{tools:?}"
    );
    let r = call_ok(
        &pool,
        "mcp__time__get_current_time",
        json!({"timezone": "UTC"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    assert!(text(&r).contains("UTC"), "{r:?}");
    let e = pool
        .call_tool(
            "mcp__time__convert_time",
            json!({"nonsense": 1}),
            CallOptions::default(),
        )
        .await;
    assert!(
        e.as_ref().is_err() || e.as_ref().unwrap().is_error == Some(true),
        "{e:?}"
    );
    let status = pool.server_states().remove(0);
    eprintln!(
        "mcp-server-time spoke protocol {:?}",
        status.protocol_version
    );
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_sdk_server_asks_through_input_rounds_for_prompts_and_resources() {
    let (python, args) = require_or_skip!(python_sdk_server_command(), "mcp 2.3 (PyPI)");
    let pool = pool().await;
    pool.set_elicitation_handler(Some(std::sync::Arc::new(|req| {
        let asked = serde_json::to_value(&req.params).unwrap();
        Box::pin(async move {
            assert_eq!(asked["message"], "Your name?", "{asked}");
            Ok(
                mcpmux::model::ElicitResult::new(mcpmux::model::ElicitationAction::Accept)
                    .with_content(json!({"name": "Ada"})),
            )
        })
    })));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    pool.add_server(stdio("py", python.to_str().unwrap(), &args))
        .await
        .unwrap();
    assert_eq!(prompt_text(&pool, "py", "greet_asked").await, "Hello, Ada!");
    assert_eq!(
        resource_text(&pool, "py", "asked://tea").await,
        "tea for Ada"
    );
    assert_eq!(
        pool.server_states()[0].protocol_version.as_deref(),
        Some("2026-07-28")
    );
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_sdk_server_tells_of_a_new_tool_and_a_resource_update_on_its_listen_stream() {
    let (python, args) = require_or_skip!(python_sdk_server_command(), "mcp 2.3 (PyPI)");
    let pool = pool().await;
    let mut events = pool.events();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let rec = pool
        .add_server(stdio("py", python.to_str().unwrap(), &args))
        .await
        .unwrap();
    let before = pool.list_tools(Some("py")).await.unwrap();
    assert!(!before.iter().any(|t| t.name == "late"), "{before:?}");
    call_ok(&pool, "mcp__py__add_tool", json!({"name": "late"})).await;
    let changed = wait_event(
        &mut events,
        Duration::from_secs(2),
        |e| matches!(e, mcpmux::Event::ToolsChanged { server_id } if *server_id == rec.id),
    )
    .await;
    assert!(changed.is_some(), "no tools:changed within 2 s");
    let late = call_ok(&pool, "mcp__py__late", json!({})).await;
    assert_eq!(text(&late), "late was added later");

    pool.subscribe_resource("py", "note://a").await.unwrap();
    call_ok(&pool, "mcp__py__touch", json!({"uri": "note://a"})).await;
    let updated = wait_event(
        &mut events,
        Duration::from_secs(2),
        |e| matches!(e, mcpmux::Event::ResourceUpdated { uri, .. } if uri == "note://a"),
    )
    .await;
    assert!(updated.is_some(), "no resource:updated within 2 s");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_sdk_server_logs_only_at_the_level_asked_for() {
    let (python, args) = require_or_skip!(python_sdk_server_command(), "mcp 2.3 (PyPI)");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    for (asked, heard) in [(None, false), (Some(mcpmux::LogLevel::Warning), true)] {
        let pool = pool_with(mcpmux::PoolOptions {
            log_level: asked,
            ..options()
        })
        .await;
        let mut events = pool.events();
        pool.add_server(stdio("py", python.to_str().unwrap(), &args))
            .await
            .unwrap();
        call_ok(&pool, "mcp__py__say", json!({"message": "careful"})).await;
        let line = wait_event(&mut events, Duration::from_secs(2), |e| {
            matches!(e, mcpmux::Event::Log { message, source, .. }
                if message == "[py] careful" && source == "notification")
        })
        .await;
        assert_eq!(line.is_some(), heard, "logLevel {asked:?}");
        pool.close().await;
    }
}

/// What server-everything says of itself (its name, capabilities and instructions) is in its
/// status, is known to the next pool before it connects, and its instructions reach an
/// agent's system prompt, cut to the agent's bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_instructions_reach_the_status_and_the_agent() {
    let input = require_or_skip!(
        everything_stdio(),
        "@modelcontextprotocol/server-everything"
    );
    let pool = pool().await;
    pool.add_server(input).await.unwrap();
    let before = pool.server_info("everything").unwrap();
    assert!(before.is_none(), "{before:?}");
    let status = pool.connect("everything").await.unwrap();
    let instructions = status.instructions.clone().unwrap_or_default();
    assert!(instructions.contains("Everything Server"), "{instructions}");
    assert!(
        status.capabilities.as_ref().unwrap()["tools"].is_object(),
        "{status:?}"
    );
    let name = status.server_info.as_ref().unwrap()["name"].clone();
    assert!(
        name.as_str().is_some_and(|n| n.contains("everything")),
        "{name}"
    );
    let json = serde_json::to_value(&status).unwrap();
    assert_eq!(json["instructions"], instructions.as_str());

    // A new pool on the same config knows it before connecting (from the catalog).
    let config = pool.dir.path().join("servers.json");
    pool.close().await;
    let again = mcpmux::Pool::open(mcpmux::PoolOptions {
        config_path: Some(config),
        ..options()
    })
    .await
    .unwrap();
    let known = again.server_states();
    assert_eq!(known[0].state, mcpmux::ConnectionState::Disconnected);
    assert_eq!(
        known[0].instructions.as_deref(),
        Some(instructions.as_str())
    );

    // The agent's system prompt carries them, after the servers, cut to its bound.
    let fake = mcpmux_tests::fake_llm::FakeOpenAi::start(vec![mcpmux_tests::fake_llm::Turn::Text(
        "done".into(),
    )])
    .await;
    let agent = mcpmux::agent::Agent::new(
        again.clone(),
        openai_provider(&fake, 0),
        mcpmux::agent::AgentOptions {
            server_instructions_chars: 60,
            ..Default::default()
        },
    );
    agent.run("hello", Default::default()).await.unwrap();
    let system = fake.requests()[0]["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        system.contains("## everything\n# Everything Server"),
        "{system}"
    );
    assert!(system.contains("[instructions cut]"), "{system}");
    assert!(!system.contains("Cross-Feature Relationships"), "{system}");
    again.close().await;
}
