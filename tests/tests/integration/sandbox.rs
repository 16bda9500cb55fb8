//! Sandboxed stdio servers: a hostile server of the tests' own tries what a server turned
//! against its user would, once in a sandbox and once without (so that what fails is shown to
//! be the sandbox's doing, not the server's), and real servers work sandboxed.

use std::net::TcpListener;

use crate::common::*;
use mcpmux::config::sandbox::{Network, Sandbox};
use mcpmux::{ErrorKind, ServerInput};
use mcpmux_tests::{everything_command, filesystem_command, require_or_skip, time_server_command};
use serde_json::{Value, json};

const PROBE: &str = env!("CARGO_BIN_EXE_mcpmux-probe-server");

/// A home folder as a user's: a private key where every attacker looks first, and a project.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".ssh")).unwrap();
        std::fs::write(dir.path().join(".ssh/id_rsa"), "-----BEGIN FAKE KEY-----").unwrap();
        std::fs::create_dir_all(dir.path().join("project/out")).unwrap();
        std::fs::write(dir.path().join("project/notes.md"), "# notes").unwrap();
        Home { dir }
    }

    fn path(&self, relative: &str) -> String {
        self.dir.path().join(relative).display().to_string()
    }

    /// The probe server, living in this home, in `sandbox` or none.
    fn probe(&self, name: &str, sandbox: Option<Sandbox>) -> ServerInput {
        let mut input = stdio(name, PROBE, &[]);
        input
            .config
            .env
            .insert("HOME".into(), self.dir.path().display().to_string());
        input.config.sandbox = sandbox;
        input
    }
}

/// What the probe said, and whether it worked.
async fn probe(pool: &TestPool, server: &str, arguments: Value) -> (bool, String) {
    let result = pool
        .call_tool(
            &format!("mcp__{server}__probe"),
            arguments,
            Default::default(),
        )
        .await
        .unwrap();
    (!result.is_error.unwrap_or(false), text(&result))
}

fn project_sandbox() -> Sandbox {
    Sandbox {
        read: vec!["~/project".into()],
        write: vec!["~/project/out".into()],
        ..Default::default()
    }
}

#[tokio::test]
async fn a_hostile_server_is_kept_to_its_sandbox_and_is_not_without_one() {
    let home = Home::new();
    let pool = pool().await;
    pool.add_server(home.probe("jailed", Some(project_sandbox())))
        .await
        .unwrap();
    pool.add_server(home.probe("free", None)).await.unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // A daemon's socket, as Docker's at /run/docker.sock.
    let socket = home.path("daemon.sock");
    let _daemon = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let attempts = [
        json!({"connectUnix": socket}),
        json!({"read": home.path(".ssh/id_rsa")}),
        json!({"write": home.path("planted.sh")}),
        json!({"write": home.path("project/notes.md")}),
        json!({"connect": format!("127.0.0.1:{port}")}),
        json!({"parentEnviron": "yes"}),
    ];
    for attempt in &attempts {
        let (worked, said) = probe(&pool, "free", attempt.clone()).await;
        assert!(worked, "without a sandbox, {attempt} works: {said}");
        let (worked, said) = probe(&pool, "jailed", attempt.clone()).await;
        assert!(!worked, "in the sandbox, {attempt} fails: {said}");
        let refused = ["Permission denied", "Network is unreachable"];
        assert!(
            refused.iter().any(|r| said.contains(r)),
            "{attempt}: {said}"
        );
    }
    // What the record grants, it gets.
    let granted = [
        json!({"read": home.path("project/notes.md")}),
        json!({"write": home.path("project/out/report.md")}),
    ];
    for attempt in granted {
        let (worked, said) = probe(&pool, "jailed", attempt.clone()).await;
        assert!(worked, "{attempt}: {said}");
    }
    pool.close().await;
}

#[tokio::test]
async fn a_sandbox_with_the_network_keeps_the_files_and_lets_the_connection_through() {
    let home = Home::new();
    let pool = pool().await;
    let sandbox = Sandbox {
        network: Network::All,
        ..project_sandbox()
    };
    pool.add_server(home.probe("online", Some(sandbox)))
        .await
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let (worked, said) = probe(&pool, "online", json!({"connect": address})).await;
    assert!(worked, "{said}");
    let (worked, said) = probe(&pool, "online", json!({"read": home.path(".ssh/id_rsa")})).await;
    assert!(!worked && said.contains("Permission denied"), "{said}");
    pool.close().await;
}

#[tokio::test]
async fn the_sandboxs_limits_hold_open_files_memory_and_processes() {
    let home = Home::new();
    let pool = pool().await;
    let files = Sandbox {
        open_files: Some(32),
        ..project_sandbox()
    };
    pool.add_server(home.probe("few-files", Some(files)))
        .await
        .unwrap();
    let (worked, said) = probe(&pool, "few-files", json!({"holdFiles": "8"})).await;
    assert!(worked, "under the limit: {said}");
    let (worked, said) = probe(&pool, "few-files", json!({"holdFiles": "64"})).await;
    assert!(!worked && said.contains("Too many open files"), "{said}");
    let memory = Sandbox {
        memory_mb: Some(64),
        ..project_sandbox()
    };
    pool.add_server(home.probe("small", Some(memory)))
        .await
        .unwrap();
    let (worked, said) = probe(&pool, "small", json!({"allocateMb": "16"})).await;
    assert!(worked, "under the limit: {said}");
    let (worked, said) = probe(&pool, "small", json!({"allocateMb": "256"})).await;
    assert!(!worked && said.contains("memory"), "over the limit: {said}");
    // A fork bomb stops at the limit, itself counted; the same without a sandbox does not.
    let processes = Sandbox {
        processes: Some(8),
        required: true,
        ..project_sandbox()
    };
    pool.add_server(home.probe("few-processes", Some(processes)))
        .await
        .unwrap();
    pool.add_server(home.probe("free", None)).await.unwrap();
    let (worked, said) = probe(&pool, "few-processes", json!({"spawn": "4"})).await;
    assert!(worked, "under the limit: {said}");
    let (worked, said) = probe(&pool, "few-processes", json!({"spawn": "32"})).await;
    let refused = "Resource temporarily unavailable";
    assert!(!worked && said.contains(refused), "over the limit: {said}");
    let (worked, said) = probe(&pool, "free", json!({"spawn": "32"})).await;
    assert!(worked, "without a sandbox: {said}");
    pool.close().await;
}

#[tokio::test]
async fn a_sandbox_is_refused_where_it_cannot_hold_and_a_denied_start_says_why() {
    let pool = pool().await;
    let mut remote = stdio("remote", "unused", &[]);
    remote.config.command = None;
    remote.config.url = Some("http://127.0.0.1:9/mcp".into());
    remote.config.sandbox = Some(Sandbox::default());
    let e = pool.add_server(remote).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("only a stdio server"), "{e}");
    let mut zero = Home::new().probe(
        "zero",
        Some(Sandbox {
            open_files: Some(0),
            ..Default::default()
        }),
    );
    zero.config.env.clear();
    let e = pool.add_server(zero).await.unwrap_err();
    assert!(e.to_string().contains("openFiles must be 1 or more"), "{e}");
    pool.close().await;
}

/// The folder server-filesystem serves, granted; its parent not.
#[tokio::test]
async fn server_filesystem_sandboxed_sees_only_its_folder() {
    let (node, script) = require_or_skip!(filesystem_command(), "server-filesystem (npm)");
    let home = Home::new();
    let project = home.path("project");
    let mut input = stdio("fs", &node.display().to_string(), &[]);
    input.config.args = script.into_iter().chain([project.clone()]).collect();
    input.config.sandbox = Some(Sandbox {
        write: vec![project.clone()],
        ..Default::default()
    });
    let pool = pool().await;
    pool.add_server(input).await.unwrap();
    let read = |path: String| {
        let pool = &pool;
        async move {
            pool.call_tool(
                "mcp__fs__read_text_file",
                json!({"path": path}),
                Default::default(),
            )
            .await
            .unwrap()
        }
    };
    let notes = read(format!("{project}/notes.md")).await;
    assert_eq!(text(&notes), "# notes");
    // The server refuses this itself; the sandbox would too, had it been fooled.
    let key = read(home.path(".ssh/id_rsa")).await;
    assert!(key.is_error.unwrap_or(false), "{}", text(&key));
    pool.close().await;
}

/// Real servers from npm and PyPI start and answer in the default sandbox: no network, no
/// files but what they need to run.
#[tokio::test]
async fn real_servers_answer_in_the_default_sandbox() {
    let (node, args) = require_or_skip!(everything_command(), "server-everything (npm)");
    let time = require_or_skip!(time_server_command(), "mcp-server-time (PyPI)");
    let pool = pool().await;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut everything = stdio("everything", &node.display().to_string(), &args);
    everything.config.sandbox = Some(Sandbox {
        required: true,
        ..Default::default()
    });
    pool.add_server(everything).await.unwrap();
    let mut time = stdio("time", &time.display().to_string(), &[]);
    time.config.sandbox = Some(Sandbox {
        required: true,
        ..Default::default()
    });
    pool.add_server(time).await.unwrap();
    let echoed = pool
        .call_tool(
            "mcp__everything__echo",
            json!({"message": "boxed"}),
            Default::default(),
        )
        .await
        .unwrap();
    assert!(text(&echoed).contains("boxed"), "{}", text(&echoed));
    let now = pool
        .call_tool(
            "mcp__time__get_current_time",
            json!({"timezone": "Europe/Berlin"}),
            Default::default(),
        )
        .await
        .unwrap();
    assert!(text(&now).contains("Europe/Berlin"), "{}", text(&now));
    pool.close().await;
}
