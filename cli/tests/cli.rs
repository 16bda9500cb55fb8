//! The `mcpmux` command line, run as a user would run it.

use std::path::Path;
use std::process::{Command, Output};

fn mcpmux(config: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpmux"))
        .arg("--config")
        .arg(config)
        .args(args)
        .env_remove("MCPMUX_CONFIG")
        .output()
        .expect("run mcpmux")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn demo_runs_with_nothing_installed() {
    let out = Command::new(env!("CARGO_BIN_EXE_mcpmux"))
        .arg("demo")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("hello from mcpmux"), "{text}");
    assert!(text.contains("42"), "{text}");
    assert!(text.contains("server:connected"), "{text}");

    let out = Command::new(env!("CARGO_BIN_EXE_mcpmux"))
        .args(["--json", "demo"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tools"].as_array().unwrap().len(), 3);
    assert_eq!(v["calls"][1]["result"]["content"][0]["text"], "42");
    assert!(v["progress"].as_array().unwrap().len() >= 3);
    let kinds: Vec<_> = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect();
    for k in [
        "servers:changed",
        "connection:state",
        "server:connected",
        "tool:called",
        "progress",
    ] {
        assert!(kinds.iter().any(|x| x == k), "{k} missing from {kinds:?}");
    }
}

#[test]
fn manage_servers_then_list_and_call_tools() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    let exe = env!("CARGO_BIN_EXE_mcpmux");
    let out = mcpmux(
        &config,
        &[
            "servers",
            "add",
            "demo",
            "--command",
            exe,
            "--arg",
            "demo-server",
            "--env",
            "SECRET=hunter2",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));

    let out = mcpmux(&config, &["--json", "servers", "list"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["name"], "demo");
    assert_eq!(v[0]["type"], "stdio");
    assert_eq!(v[0]["isActive"], true);
    let human = stdout(&mcpmux(&config, &["servers", "list"]));
    assert!(!human.contains("hunter2"), "{human}");

    let out = mcpmux(&config, &["--json", "tools"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let tools: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<_> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"mcp__demo__echo"), "{ids:?}");

    let out = mcpmux(
        &config,
        &["call", "mcp__demo__echo", r#"{"text":"via cli"}"#],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("via cli"));

    let out = mcpmux(&config, &["--json", "servers", "test", "demo"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["success"], true);

    for cmd in ["disable", "trust"] {
        assert!(mcpmux(&config, &["servers", cmd, "demo"]).status.success());
    }
    let v: serde_json::Value =
        serde_json::from_slice(&mcpmux(&config, &["--json", "servers", "list"]).stdout).unwrap();
    assert_eq!(v[0]["isActive"], false);
    assert_eq!(v[0]["isTrusted"], true);

    let import = dir.path().join("claude.json");
    std::fs::write(
        &import,
        r#"{"mcpServers": {"other": {"command": "x"}, "bad": 1}}"#,
    )
    .unwrap();
    let out = mcpmux(&config, &["servers", "import", import.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(stdout(&out).contains("added other"));

    assert!(
        mcpmux(&config, &["servers", "remove", "demo"])
            .status
            .success()
    );
    let v: serde_json::Value =
        serde_json::from_slice(&mcpmux(&config, &["--json", "servers", "list"]).stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
}

#[test]
fn errors_are_one_line_on_stderr_with_a_nonzero_exit() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    std::fs::write(&config, "{ not json").unwrap();
    let out = mcpmux(&config, &["servers", "list"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains(config.to_str().unwrap()) && err.contains("line 1"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "{ not json");

    let config = dir.path().join("ok.json");
    let out = mcpmux(&config, &["call", "mcp__nope__tool"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let out = mcpmux(&config, &["call", "mcp__nope__tool", "[1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not valid JSON"));
}

#[test]
fn tool_search_answers_from_the_catalog_without_starting_servers() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    let exe = env!("CARGO_BIN_EXE_mcpmux");
    assert!(
        mcpmux(
            &config,
            &[
                "servers",
                "add",
                "demo",
                "--command",
                exe,
                "--arg",
                "demo-server"
            ]
        )
        .status
        .success()
    );
    // Before any listing the catalog is empty.
    let out = mcpmux(&config, &["--json", "tools", "--search", "echo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap(),
        serde_json::json!([])
    );
    assert!(mcpmux(&config, &["tools"]).status.success());
    assert!(dir.path().join("servers.tools.json").exists());

    // Now the server's command is broken: a search that started it would fail.
    let records = std::fs::read_to_string(&config)
        .unwrap()
        .replace(exe, "/nonexistent/mcpmux");
    std::fs::write(&config, records).unwrap();
    let out = mcpmux(
        &config,
        &[
            "--json",
            "tools",
            "--search",
            "send text back",
            "--limit",
            "2",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let hits: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hits[0]["id"], "mcp__demo__echo", "{hits}");
    assert!(hits[0]["score"].as_f64().unwrap() > 0.0);
    assert!(hits[0]["description"].as_str().unwrap().contains("back"));
    assert!(hits.as_array().unwrap().len() <= 2);
    let human = stdout(&mcpmux(&config, &["tools", "--search", "count"]));
    assert!(human.contains("mcp__demo__countdown"), "{human}");
}
