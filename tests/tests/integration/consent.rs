//! Consent before a command first runs: a server imported from another host's file waits
//! for the user's approval, and nothing of it starts until then.

use std::time::Duration;

use crate::common::*;
use mcpmux::{ErrorKind, Event};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_server_starts_nothing_until_it_is_approved() {
    let dir = tempfile::tempdir().unwrap();
    // The server leaves a file behind in the folder it is given the moment its command runs.
    let started = dir.path().join("started");
    let script = "touch \"$1/started\"; exec \"$2\"";
    let folder = dir.path().display().to_string();
    let server = env!("CARGO_BIN_EXE_mcpmux-test-server");
    let claude_desktop = json!({"mcpServers": {"t": {
        "command": "sh",
        "args": ["-c", script, "sh", folder, server],
        "env": {"API_KEY": "sk-not-to-be-shown"},
    }}});
    let pool = pool().await;
    let mut events = pool.events();
    let results = pool.add_json(&claude_desktop.to_string()).await.unwrap();
    let record = results[0].record.clone().unwrap();
    assert!(results[0].success && record.pending, "{results:?}");

    // What the host shows in its dialog: the exact command, the environment by name only.
    let pending = wait_event(&mut events, Duration::from_secs(5), |e| {
        matches!(e, Event::ServerPending { .. })
    })
    .await
    .expect("a server:pending event");
    let Event::ServerPending { consent, .. } = &pending else {
        unreachable!()
    };
    assert_eq!(consent.command.as_deref(), Some("sh"));
    assert_eq!(consent.args, ["-c", script, "sh", &folder, server]);
    assert_eq!(consent.env_keys, ["API_KEY"]);
    // Its sandbox: the folder it is given, and the network; nothing else of the user's.
    let sandbox = consent
        .sandbox
        .as_ref()
        .expect("an imported server is sandboxed");
    assert_eq!(sandbox.write, std::slice::from_ref(&folder));
    assert_eq!(sandbox.network, mcpmux::config::sandbox::Network::All);
    assert!(!serde_json::to_string(&pending).unwrap().contains("sk-not"));

    // Nothing of it runs: not a listing, a call, a connect or a test.
    let tools = pool.list_tools(None).await.unwrap();
    assert!(tools.iter().all(|t| t.server_name != "t"), "{tools:?}");
    let call = pool.call_tool("mcp__t__echo", json!({"text": "hi"}), Default::default());
    assert!(call.await.is_err());
    let e = pool.connect("t").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let said = e.to_string();
    assert!(said.contains("waits for your approval"), "{said}");
    assert!(
        said.contains("servers approve t") && said.contains("runs: sh -c"),
        "{said}"
    );
    assert!(!said.contains("sk-not"), "{said}");
    let tested = pool.test_server("t").await.unwrap();
    assert!(!tested.success, "{tested:?}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!started.exists(), "the command ran before it was approved");

    // Approved, it runs; imported again, it stays approved.
    let approved = pool.approve_server("t").await.unwrap();
    assert!(!approved.pending);
    let echoed = pool
        .call_tool("mcp__t__echo", json!({"text": "hi"}), Default::default())
        .await
        .unwrap();
    assert_eq!(text(&echoed), "hi");
    assert!(started.exists());
    let again = pool.add_json(&claude_desktop.to_string()).await.unwrap();
    assert!(again[0].already_there, "{again:?}");
    assert!(!again[0].record.as_ref().unwrap().pending);
    pool.close().await;
}

/// A server a user (or a host on their behalf) adds by naming its command is approved by
/// that act, and a host may save one waiting for approval itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_added_by_its_command_runs_and_a_host_may_ask_first() {
    let pool = pool().await;
    let bin = env!("CARGO_BIN_EXE_mcpmux-test-server");
    let typed = pool.add_server(stdio("typed", bin, &[])).await.unwrap();
    assert!(!typed.pending);
    let mut asked = stdio("asked", bin, &[]);
    asked.pending = Some(true);
    assert!(pool.add_server(asked).await.unwrap().pending);
    let e = pool.connect("asked").await.unwrap_err();
    assert!(e.to_string().contains("waits for your approval"), "{e}");
    pool.connect("typed").await.unwrap();
    pool.close().await;
}
