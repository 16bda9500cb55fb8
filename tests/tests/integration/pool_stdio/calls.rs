//! Tools, resources and prompts listed and called; many calls at once; what a bad request
//! is told.

use std::time::{Duration, Instant};

use crate::common::*;
use mcpmux::{ConnectionState, ErrorKind, Event};
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
