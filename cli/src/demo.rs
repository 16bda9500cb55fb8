//! `mcpmux demo`: the README's main job. Starts the built-in demo server in a throw-away
//! config, lists its tools, calls a few, and prints the events the pool reported.

use std::sync::Arc;

use mcpmux::{CallOptions, Event, Pool, PoolOptions, ServerConfig, ServerInput};
use serde_json::json;

use crate::commands::{CliError, print_result};

pub async fn run(json_out: bool) -> Result<(), CliError> {
    let dir = tempfile::tempdir().map_err(|e| CliError::failed(format!("no temp dir: {e}")))?;
    let exe = std::env::current_exe()
        .map_err(|e| CliError::failed(format!("cannot find this program: {e}")))?;
    let pool = Pool::open(PoolOptions {
        config_path: Some(dir.path().join("servers.json")),
        connect_on_add: false,
        health_check_interval_ms: 0,
        ..PoolOptions::default()
    })
    .await?;
    let mut receiver = pool.events();
    let collector = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(e) = receiver.recv().await {
            if !json_out {
                println!("  event  {}", describe(&e));
            }
            seen.push(e);
        }
        seen
    });
    let say = |s: &str| {
        if !json_out {
            println!("{s}");
        }
    };

    say("== adding the built-in demo server (stdio)");
    pool.add_server(ServerInput {
        name: "demo".into(),
        config: ServerConfig {
            command: Some(exe.to_string_lossy().into_owned()),
            args: vec!["demo-server".into()],
            ..Default::default()
        },
        ..Default::default()
    })
    .await?;

    say("== listing tools (connects on first use)");
    let tools = pool.list_tools(None).await?;
    for t in &tools {
        say(&format!(
            "  {}  {}",
            t.id,
            t.description.as_deref().unwrap_or("")
        ));
    }

    let mut calls = Vec::new();
    let progress_lines = Arc::new(std::sync::Mutex::new(Vec::new()));
    for (tool, args) in [
        ("mcp__demo__echo", json!({"text": "hello from mcpmux"})),
        ("mcp__demo__add", json!({"a": 2, "b": 40})),
        ("mcp__demo__countdown", json!({"steps": 3})),
    ] {
        say(&format!("== calling {tool} {args}"));
        let lines = progress_lines.clone();
        let options = CallOptions {
            on_progress: Some(Arc::new(move |p: mcpmux::Progress| {
                let line = format!(
                    "progress {}/{} {}",
                    p.progress,
                    p.total.unwrap_or(0.0),
                    p.message.unwrap_or_default()
                );
                if !json_out {
                    println!("  {line}");
                }
                lines.lock().unwrap().push(line);
            })),
            ..Default::default()
        };
        let result = pool.call_tool(tool, args.clone(), options).await?;
        if !json_out {
            print_result(&result);
        }
        calls.push(json!({"tool": tool, "arguments": args, "result": result}));
    }

    say("== reading resource demo://readme");
    let readme = pool.read_resource("demo", "demo://readme").await?;
    if !json_out {
        for c in &readme.contents {
            if let Ok(v) = serde_json::to_value(c)
                && let Some(t) = v.get("text").and_then(|t| t.as_str())
            {
                println!("  {t}");
            }
        }
    }

    say("== closing the pool (the demo server is stopped)");
    pool.close().await;
    drop(pool);
    let events = collector.await.unwrap_or_default();
    if json_out {
        let out = json!({
            "tools": tools,
            "calls": calls,
            "progress": *progress_lines.lock().unwrap(),
            "resource": readme,
            "events": events,
        });
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    } else {
        println!(
            "== done: {} tools, {} calls, {} events",
            tools.len(),
            calls.len(),
            events.len()
        );
    }
    Ok(())
}

fn describe(e: &Event) -> String {
    match e {
        Event::ConnectionState {
            server_name,
            state,
            phase,
            error,
            ..
        } => format!(
            "connection:state  {server_name} {state:?} ({phase:?}){}",
            error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ),
        Event::ServerConnected {
            server_name,
            protocol_version,
            ..
        } => format!("server:connected  {server_name} (protocol {protocol_version})"),
        Event::ToolCalled {
            tool_name,
            duration_ms,
            success,
            ..
        } => format!("tool:called  {tool_name} in {duration_ms} ms, success={success}"),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}
