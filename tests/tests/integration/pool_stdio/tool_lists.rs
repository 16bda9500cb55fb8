//! Tool lists: ids of servers whose names clash, a listing made again after each change,
//! a server's own time-to-live for its list.

use std::time::Duration;

use super::register_set_theme;
use crate::common::*;
use serde_json::json;

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
