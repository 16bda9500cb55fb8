//! Managing servers: update, disable and remove; importing JSON, testing and discovering;
//! local servers seen only from their project.

use std::time::Duration;

use crate::common::*;
use mcpmux::{ErrorKind, PoolOptions, ServerPatch};
use mcpmux_tests::wait_for_pid_exit;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_reconnects_disable_hides_and_remove_stops_the_server() {
    let pool = pool().await;
    let rec = add_test_server(&pool, "t", &[]).await;
    let pid = pid_of(&pool, "mcp__t__pid").await;

    let updated = pool
        .update_server(
            "t",
            ServerPatch {
                is_trusted: Some(true),
                disabled_tools: Some(vec!["add".into()]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.id, rec.id);
    assert!(updated.updated_at.is_some());
    assert_eq!(
        pid_of(&pool, "mcp__t__pid").await,
        pid,
        "no reconnect expected"
    );
    let tools = pool.list_tools(None).await.unwrap();
    assert!(
        !tools.iter().any(|t| t.name == "add"),
        "disabled tool listed"
    );
    let err = pool
        .call_tool("mcp__t__add", json!({"a": 1, "b": 1}), Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");

    let mut config = updated.config.clone();
    config.args = vec!["--name".into(), "renamed".into()];
    pool.update_server(
        &rec.id,
        ServerPatch {
            config: Some(config),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert!(wait_for_pid_exit(pid, Duration::from_secs(5)));
    let new_pid = pid_of(&pool, "mcp__t__pid").await;
    assert_ne!(new_pid, pid);

    set_active(&pool, "t", false).await;
    assert!(wait_for_pid_exit(new_pid, Duration::from_secs(5)));
    assert!(pool.list_tools(None).await.unwrap().is_empty());
    set_active(&pool, "t", true).await;
    let last_pid = pid_of(&pool, "mcp__t__pid").await;
    pool.remove_server("t").await.unwrap();
    assert!(wait_for_pid_exit(last_pid, Duration::from_secs(5)));
    assert!(pool.list_servers().await.unwrap().is_empty());
    let err = pool
        .call_tool("mcp__t__pid", json!({}), Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_discover_and_add_json() {
    let pool = pool().await;
    let import = format!(
        r#"{{"mcpServers": {{
            "good": {{"command": "{bin}"}},
            "broken": {{"args": "not-a-list"}}
        }}}}"#,
        bin = env!("CARGO_BIN_EXE_mcpmux-test-server")
    );
    let results = pool.add_json(&import).await.unwrap();
    assert_eq!(results.len(), 2);
    let good = results.iter().find(|r| r.name == "good").unwrap();
    assert!(good.success && !good.already_there, "{good:?}");
    assert!(!results.iter().find(|r| r.name == "broken").unwrap().success);
    // The same import again (a setup run twice) finds the good one there.
    let again = pool.add_json(&import).await.unwrap();
    let good_again = again.iter().find(|r| r.name == "good").unwrap();
    assert!(
        good_again.success && good_again.already_there,
        "{good_again:?}"
    );
    assert_eq!(good_again.record, good.record);
    // Imported: it waits for the user's approval before anything of it runs.
    assert!(good.record.as_ref().unwrap().pending);
    pool.approve_server("good").await.unwrap();

    let t = pool.test_server("good").await.unwrap();
    assert!(t.success, "{t:?}");
    assert!(t.tools.contains(&"echo".to_string()));
    let bad = pool
        .test_config(stdio("x", "/nonexistent/thing", &[]))
        .await
        .unwrap();
    assert!(!bad.success);
    assert!(bad.error.is_some());

    let d = pool.discover("good").await.unwrap();
    assert!(d.tools.iter().any(|t| t.name == "echo"));
    assert!(d.prompts.iter().any(|p| p.name == "greet"));
    assert!(d.resources.iter().any(|r| r.uri == "test://hello"));
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_servers_are_seen_only_from_their_project() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    let open = |project: Option<&str>| {
        let config = config.clone();
        let project = project.map(str::to_string);
        async move {
            mcpmux::Pool::open(PoolOptions {
                config_path: Some(config),
                project_path: project,
                ..options()
            })
            .await
            .unwrap()
        }
    };
    let p = open(Some("/work/p")).await;
    let mut local = test_server("db", &[]);
    local.scope = Some(mcpmux::Scope::Local);
    local.project_path = Some("/work/p".into());
    p.add_server(local.clone()).await.unwrap();
    p.add_server(test_server("global", &[])).await.unwrap();
    let q = open(Some("/work/q")).await;
    let names = |v: Vec<mcpmux::ServerRecord>| {
        let mut n: Vec<_> = v.into_iter().map(|r| r.name).collect();
        n.sort();
        n
    };
    assert_eq!(names(p.list_servers().await.unwrap()), ["db", "global"]);
    assert_eq!(names(q.list_servers().await.unwrap()), ["global"]);
    // Another project may use the same name for its own local server.
    local.project_path = Some("/work/q".into());
    q.add_server(local).await.unwrap();
    assert_eq!(names(q.list_servers().await.unwrap()), ["db", "global"]);
    let none = open(None).await;
    assert_eq!(names(none.list_servers().await.unwrap()), ["global"]);
}
