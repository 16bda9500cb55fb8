//! The tool catalog saved next to the config: search answered from it without connecting,
//! a private list saved for its config.

use crate::common::*;
use mcpmux::{ConnectionState, PoolOptions, ServerPatch};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_lists_a_new_server_first_then_answers_from_the_catalog_without_connecting() {
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    // Never listed (and not connected on add in these tests): the search lists it first.
    assert!(pool.known_tools().is_empty());
    let hits = pool
        .search_tools("return the text unchanged", Some(3))
        .await
        .unwrap();
    assert_eq!(hits[0].id, "mcp__t__echo", "{hits:?}");
    pool.close().await;
    // The catalog is written in the background, and finished by the close.
    assert!(pool.dir.path().join("servers.tools.json").exists());

    let again = mcpmux::Pool::open(PoolOptions {
        config_path: Some(pool.dir.path().join("servers.json")),
        ..options()
    })
    .await
    .unwrap();
    let hits = again
        .search_tools("sleep milliseconds progress slept", Some(3))
        .await
        .unwrap();
    assert_eq!(hits[0].id, "mcp__t__sleep", "{hits:?}");
    assert_eq!(again.known_tools().len(), mcpmux_tests::TEST_SERVER_TOOLS);
    assert!(
        again
            .server_states()
            .iter()
            .all(|s| s.state == ConnectionState::Disconnected),
        "search connected a server"
    );
    // Disabling a tool hides it from search too.
    again
        .update_server(
            "t",
            ServerPatch {
                disabled_tools: Some(vec!["sleep".into()]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(
        again
            .search_tools("sleep", Some(3))
            .await
            .unwrap()
            .iter()
            .all(|h| h.name != "sleep")
    );
    again.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_tool_list_without_oauth_is_saved_for_its_config() {
    // `cacheScope: private` allows reuse in the authorization context that got the list; a
    // server without OAuth is authorized by its config, which the catalog entry is keyed by.
    let pool = pool().await;
    let mine = add_test_server(&pool, "mine", &["--private-tools"]).await;
    pool.list_tools(None).await.unwrap();
    pool.close().await;
    let file = std::fs::read_to_string(pool.dir.path().join("servers.tools.json")).unwrap();
    assert!(file.contains(&mine.id), "{file}");
}
