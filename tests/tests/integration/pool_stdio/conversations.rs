//! Conversations: discovery tools first, servers activated on first use, tools following
//! changes between turns.

use super::register_set_theme;
use crate::common::*;
use mcpmux::ErrorKind;
use serde_json::json;

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
