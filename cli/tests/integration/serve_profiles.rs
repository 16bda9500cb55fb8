//! Profiles of `mcpmux serve`: named views of the fleet written in the config file beside the
//! servers, as a user would, and served at `/mcp/p/NAME` (or with `--profile` on stdio): a
//! subset of servers, tools allowed and denied, a description overridden, the mode, and one
//! server passed through under its own names. Driven by mcpmux's own pool (a 2026-07-28
//! client) over HTTP.

use std::path::Path;

use mcpmux::CallOptions;
use serde_json::json;

#[allow(dead_code)]
use crate::support::*;

const TOKEN: &str = "pr0files-test-token";

/// Adds `profiles` to the config file, beside what `mcpmux servers add` wrote.
fn write_profiles(config: &Path, profiles: serde_json::Value) {
    let mut file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(config).unwrap()).unwrap();
    file["profiles"] = profiles;
    std::fs::write(config, serde_json::to_string_pretty(&file).unwrap()).unwrap();
}

async fn tool_names(pool: &mcpmux::Pool) -> Vec<String> {
    let mut names: Vec<String> = pool
        .list_tools(Some("fleet"))
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_profile_is_its_own_view_at_its_own_url() {
    let (dir, config) = fleet(false).unwrap();
    write_profiles(
        &config,
        json!({
            "demo": {"servers": ["demo"], "passThrough": true, "mode": "direct"},
            "tests": {
                "servers": ["test", "demo"],
                "allow": ["test__*", "demo__echo"],
                "deny": ["test__s*"],
                "mode": "direct",
                "tools": {"demo__echo": {"description": "Say it back"}}
            }
        }),
    );
    let (_server, url) = serve_http(&config, &["--token", TOKEN, "--mode", "search"]);

    // One server passed through: its own tool, prompt and resource names.
    let demo_dir = dir.path().join("demo-client");
    std::fs::create_dir(&demo_dir).unwrap();
    let demo = client_pool(&demo_dir, &format!("{url}/p/demo"), TOKEN).await;
    assert_eq!(tool_names(&demo).await, ["add", "countdown", "echo"]);
    let echoed = demo
        .call_tool(
            "mcp__fleet__echo",
            json!({"text": "passed through"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text(&echoed), "passed through");
    let resources = demo.list_resources(Some("fleet")).await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.resource.uri.as_str()).collect();
    assert_eq!(uris, ["demo://readme"]);
    let read = demo.read_resource("fleet", "demo://readme").await.unwrap();
    assert!(format!("{read:?}").contains("demo server"), "{read:?}");
    let prompts = demo.list_prompts(Some("fleet")).await.unwrap();
    let prompts: Vec<&str> = prompts.iter().map(|p| p.prompt.name.as_str()).collect();
    assert_eq!(prompts, ["greet"]);
    demo.close().await;

    // Two servers, some tools, one described otherwise, direct although serve says search.
    let tests_dir = dir.path().join("tests-client");
    std::fs::create_dir(&tests_dir).unwrap();
    let tests = client_pool(&tests_dir, &format!("{url}/p/tests"), TOKEN).await;
    let names = tool_names(&tests).await;
    assert!(names.contains(&"test__echo".to_string()), "{names:?}");
    assert!(names.contains(&"demo__echo".to_string()), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("test__s") || n == "demo__add" || n == "search_tools"),
        "{names:?}"
    );
    let listed = tests.list_tools(Some("fleet")).await.unwrap();
    let echo = listed.iter().find(|t| t.name == "demo__echo").unwrap();
    assert_eq!(echo.description.as_deref(), Some("Say it back"));
    let hidden = tests
        .call_tool(
            "mcp__fleet__test__sleep",
            json!({"ms": 1}),
            CallOptions::default(),
        )
        .await;
    assert!(
        hidden.is_err(),
        "a denied tool cannot be called: {hidden:?}"
    );
    tests.close().await;

    // /mcp itself is still the whole fleet, in the mode serve was started with.
    let all_dir = dir.path().join("all-client");
    std::fs::create_dir(&all_dir).unwrap();
    let all = client_pool(&all_dir, &url, TOKEN).await;
    assert_eq!(
        tool_names(&all).await,
        ["call_tool", "describe_tools", "search_tools"]
    );
    all.close().await;

    let auth = format!("Bearer {TOKEN}");
    let (status, body) = http_request(
        &url,
        "POST",
        "/mcp/p/nope",
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
        ],
        "{}",
    );
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("profiles"), "{body}");
}

#[test]
fn an_unknown_or_broken_profile_is_refused_with_what_to_change() {
    let (_dir, config) = fleet(false).unwrap();
    // A profile that names a server the config lacks is served, and its first line says so
    // (here the client, stdin, is gone at once: that ends serving without an error).
    write_profiles(&config, json!({"one": {"servers": ["demo", "tset"]}}));
    let out = mcpmux(&config, &["serve", "--stdio", "--profile", "one"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.starts_with("mcpmux serve: 1 server of profile 'one' from ")
            && stderr.contains("(not in the config: tset)"),
        "{stderr}"
    );

    write_profiles(&config, json!({"one": {"servers": ["demo"]}}));
    let out = mcpmux(&config, &["serve", "--stdio", "--profile", "two"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("no profile named 'two'") && stderr.contains("\"one\""),
        "{stderr}"
    );

    write_profiles(&config, json!({"one": {"passThrough": true}}));
    let out = mcpmux(
        &config,
        &["serve", "--http", "127.0.0.1:0", "--token", TOKEN],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("exactly one server"), "{stderr}");
}

/// Profiles edited while serving apply to connected clients (told with `list_changed`): a
/// tool allowed later shows up, one denied later can no longer be called, a profile added
/// gets its URL and a removed one's URL answers 404.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profiles_edited_while_serving_apply_to_connected_clients() {
    let (dir, config) = fleet(false).unwrap();
    let first = json!({"one": {"servers": ["demo"], "allow": ["demo__echo"], "mode": "direct"}});
    write_profiles(&config, first);
    let (_server, url) = serve_http(&config, &["--token", TOKEN]);
    let one = client_pool(dir.path(), &format!("{url}/p/one"), TOKEN).await;
    assert_eq!(tool_names(&one).await, ["demo__echo"]);

    let edited = json!({
        "one": {"servers": ["demo"], "allow": ["demo__add"], "mode": "direct"},
        "two": {"servers": ["demo"], "passThrough": true, "mode": "direct"}
    });
    write_profiles(&config, edited);
    // The client relists when it is told the list changed.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while tool_names(&one).await != ["demo__add"] {
        assert!(
            std::time::Instant::now() < deadline,
            "the edited profile never showed: {:?}",
            tool_names(&one).await
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let hidden = one
        .call_tool(
            "mcp__fleet__demo__echo",
            json!({"text": "x"}),
            CallOptions::default(),
        )
        .await;
    assert!(hidden.is_err(), "a tool no longer allowed: {hidden:?}");

    let two_dir = dir.path().join("two-client");
    std::fs::create_dir(&two_dir).unwrap();
    let two = client_pool(&two_dir, &format!("{url}/p/two"), TOKEN).await;
    assert_eq!(tool_names(&two).await, ["add", "countdown", "echo"]);
    two.close().await;

    write_profiles(
        &config,
        json!({"two": {"servers": ["demo"], "passThrough": true}}),
    );
    let auth = format!("Bearer {TOKEN}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
    ];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while http_request(&url, "POST", "/mcp/p/one", &headers, "{}").0 != 404 {
        assert!(
            std::time::Instant::now() < deadline,
            "profile one still served"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    one.close().await;
}
