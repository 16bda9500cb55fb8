//! The host's own tools, recipes and widgets, run in process.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use mcpmux::{CallOptions, ErrorKind, Event};
use serde_json::json;

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
