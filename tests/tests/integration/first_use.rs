//! A fresh config as a new user meets it: nothing listed yet, servers added and used at once.
//! Search, discovery and the agent must list what they do not know (and never answer from an
//! entry made from another config), adding a server connects it, and a broken server is
//! reported without holding up the others.

use std::time::{Duration, Instant};

use crate::common::*;
use mcpmux::agent::{Block, RunOptions, Stop};
use mcpmux::{ConnectionState, Event, PoolOptions, ServerConfig, ServerFilter, ServerPatch};
use mcpmux_tests::fake_llm::Turn;
use mcpmux_tests::{everything_command, require_or_skip};
use serde_json::{Value, json};

/// The pool a new user opens: the defaults (adding connects), on an empty config.
async fn fresh_pool() -> TestPool {
    pool_with(PoolOptions {
        connect_on_add: true,
        health_check_interval_ms: 0,
        ..PoolOptions::default()
    })
    .await
}

fn broken(name: &str) -> mcpmux::ServerInput {
    stdio(name, "/nonexistent/server", &[])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adding_a_server_connects_it_and_records_its_tools() {
    let pool = fresh_pool().await;
    let mut events = pool.events();
    let rec = add_test_server(&pool, "t", &[]).await;
    // No listing call: the add connected it and the catalog has its tools.
    assert!(
        mcpmux_tests::wait_until(Duration::from_secs(20), || pool.known_tools().len()
            == mcpmux_tests::TEST_SERVER_TOOLS),
        "the added server's tools never reached the catalog: {:?}",
        pool.known_tools()
    );
    assert_eq!(pool.server_states()[0].state, ConnectionState::Connected);
    let catalog = pool.dir.path().join("servers.tools.json");
    assert!(mcpmux_tests::wait_until(Duration::from_secs(5), || {
        std::fs::read_to_string(&catalog).is_ok_and(|t| t.contains(&rec.id))
    }));

    // A server that cannot start: the add still succeeds; the failure is its state, an
    // event, and its layer's error.
    let bad = pool.add_server(broken("bad")).await.unwrap();
    let failed = wait_event(&mut events, Duration::from_secs(10), |e| {
        matches!(e, Event::ConnectionState { server_id, state: ConnectionState::Error, .. } if *server_id == bad.id)
    })
    .await;
    assert!(failed.is_some(), "no error state for the broken server");
    // (`layers` waits for the listing the add started, which ends after that event.)
    let layers = pool.layers().await;
    let layer = layers.iter().find(|l| l.server_name == "bad").unwrap();
    let error = layer.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("cannot start `/nonexistent/server`"),
        "{layer:?}"
    );
    assert!(
        layers
            .iter()
            .find(|l| l.server_name == "t")
            .unwrap()
            .error
            .is_none()
    );
    pool.close().await;
}

/// A remote server's secrets (a header's value, a key in its URL) reach neither the error of
/// a failed connection nor any event the pool emits about it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_servers_header_and_url_secrets_reach_no_error_or_event() {
    let pool = pool().await;
    let mut events = pool.events();
    let url = format!(
        "http://user:s3cret-pw@127.0.0.1:{}/mcp?key=s3cret-url",
        mcpmux_tests::free_port()
    );
    let mut input = remote("remote", url, None);
    input
        .config
        .headers
        .insert("Authorization".into(), "Bearer s3cret-hdr".into());
    pool.add_server(input).await.unwrap();
    let e = pool.list_tools(Some("remote")).await.unwrap_err();
    let mut said = vec![e.to_string(), format!("{e:?}")];
    said.extend(drain(&mut events).iter().map(|e| format!("{e:?}")));
    said.push(format!("{:?}", pool.get_server("remote").await.unwrap()));
    said.push(serde_json::to_string(&pool.server_states()).unwrap());
    for text in &said {
        for secret in ["s3cret-hdr", "s3cret-url", "s3cret-pw"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
    }
    pool.close().await;
}

/// A server that dies as it starts (a token not set, a module not installed) is the most
/// common first failure: its error says how it exited and what it wrote to stderr, the only
/// place that says why. A URL nothing listens on says the connection was refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_as_it_starts_says_why() {
    let pool = pool().await;
    let unset = "echo 'starting'; echo 'Error: GITHUB_TOKEN is not set' >&2; exit 3";
    pool.add_server(stdio("token", "sh", &["-c", unset]))
        .await
        .unwrap();
    // A refused token is named in errors as every config env value is: redacted.
    let refused = "echo \"token $GITHUB_TOKEN was refused\" >&2; exit 1";
    let mut input = stdio("refused", "sh", &["-c", refused]);
    input
        .config
        .env
        .insert("GITHUB_TOKEN".into(), "ghp_not_a_real_token".into());
    pool.add_server(input).await.unwrap();
    // Its error on stdout, where a server should write only JSON-RPC (a `print` in Python).
    let wrong_stream = "echo 'Error: OPENAI_API_KEY is not set'; exit 2";
    pool.add_server(stdio("stdout", "sh", &["-c", wrong_stream]))
        .await
        .unwrap();
    pool.add_server(stdio(
        "module",
        "python3",
        &["-c", "import mcp_module_not_installed"],
    ))
    .await
    .unwrap();
    // A key in the URL's query stays out of the error, as the record's other secrets do.
    let nothing = format!(
        "http://127.0.0.1:{}/mcp?key=s3cret",
        mcpmux_tests::free_port()
    );
    pool.add_server(remote("closed", nothing, None))
        .await
        .unwrap();
    let pool_ref = &pool;
    let error = |name: &'static str| async move {
        let e = pool_ref.connect(name).await.unwrap_err();
        assert_eq!(e.kind(), mcpmux::ErrorKind::Connection, "{e}");
        e.to_string()
    };
    let token = error("token").await;
    assert!(
        token.contains(
            "the server exited (exit status: 3) before it answered, having written to stdout \
             (where only JSON-RPC belongs):\nstarting\nand its stderr ending with:\n"
        ) && token.ends_with("Error: GITHUB_TOKEN is not set"),
        "{token}"
    );
    let wrong_stream = error("stdout").await;
    assert!(
        wrong_stream.ends_with(
            "the server exited (exit status: 2) before it answered, having written to stdout \
             (where only JSON-RPC belongs):\nError: OPENAI_API_KEY is not set"
        ),
        "{wrong_stream}"
    );
    let mut events = pool.events();
    let refused = error("refused").await;
    assert!(
        refused.ends_with("token <redacted> was refused") && !refused.contains("ghp_"),
        "{refused}"
    );
    // And so is the line as a `log` event, which a host may show or store.
    let logged = wait_event(&mut events, Duration::from_secs(5), |e| {
        matches!(e, Event::Log { source, message, .. } if source == "stderr" && message.contains("was refused"))
    })
    .await;
    assert!(
        matches!(&logged, Some(Event::Log { message, .. }) if message == "token <redacted> was refused"),
        "{logged:?}"
    );
    let module = error("module").await;
    assert!(
        module.contains("exit status: 1")
            && module.contains("Traceback")
            && module.ends_with("ModuleNotFoundError: No module named 'mcp_module_not_installed'"),
        "{module}"
    );
    let closed = error("closed").await;
    assert!(
        closed.contains("Connection refused")
            && !closed.contains("rmcp::")
            && !closed.contains("s3cret"),
        "{closed}"
    );
    // The status a host shows says the same.
    let states = pool.server_states();
    let state = states.iter().find(|s| s.name == "token").unwrap();
    assert!(
        state
            .error
            .as_deref()
            .is_some_and(|e| e.contains("GITHUB_TOKEN")),
        "{state:?}"
    );
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_lists_new_servers_at_once_and_one_broken_or_hanging_holds_up_nothing() {
    // Adding does not connect here: the search must list all three itself.
    let pool = pool_with(PoolOptions {
        connect_timeout_ms: 3_000,
        ..options()
    })
    .await;
    add_test_server(&pool, "t", &[]).await;
    pool.add_server(broken("bad")).await.unwrap();
    add_test_server(&pool, "mute", &["--silent"]).await;
    let started = Instant::now();
    let hits = pool
        .search_tools("return the text unchanged", Some(3))
        .await
        .unwrap();
    let took = started.elapsed();
    assert_eq!(hits[0].id, "mcp__t__echo", "{hits:?}");
    // Listed side by side: the hanging one costs its connect timeout once, not in turn.
    assert!(took < Duration::from_secs(6), "{took:?}");
    let layers = pool.layers().await;
    let error = |name: &str| {
        let layer = layers.iter().find(|l| l.server_name == name).unwrap();
        layer.error.clone().unwrap_or_default()
    };
    assert!(error("bad").contains("cannot start"), "{layers:?}");
    assert!(error("mute").contains("timed out"), "{layers:?}");
    assert!(error("t").is_empty());
    // A failure is remembered for a moment: asking again answers at once.
    let started = Instant::now();
    let unlisted = pool.ensure_catalog(&ServerFilter::default()).await;
    assert!(started.elapsed() < Duration::from_secs(1));
    let names: Vec<_> = unlisted.iter().map(|u| u.server_name.as_str()).collect();
    assert_eq!(names, ["bad", "mute"]);
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_catalog_entry_made_from_another_config_is_never_answered_from() {
    let (node, mut args) = require_or_skip!(everything_command(), "server-everything");
    args.push("stdio".into());
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    pool.list_tools(None).await.unwrap();
    pool.close().await;
    let catalog = pool.dir.path().join("servers.tools.json");
    assert!(mcpmux_tests::wait_until(Duration::from_secs(5), || {
        std::fs::read_to_string(&catalog).is_ok_and(|t| t.contains("find_recipe_by_keyword"))
    }));

    // Another pool (as another process would) answers from the saved list, then changes the
    // server's config: to a command that does not exist, then to server-everything.
    let again = mcpmux::Pool::open(PoolOptions {
        config_path: Some(pool.dir.path().join("servers.json")),
        ..options()
    })
    .await
    .unwrap();
    let hits = again
        .search_tools("add two integers", Some(3))
        .await
        .unwrap();
    assert_eq!(hits[0].id, "mcp__t__add", "{hits:?}");
    let point_to = |command: &str, args: &[String]| ServerPatch {
        config: Some(ServerConfig {
            command: Some(command.into()),
            args: args.to_vec(),
            ..Default::default()
        }),
        ..Default::default()
    };
    again
        .update_server("t", point_to("/nonexistent/server", &[]))
        .await
        .unwrap();
    let hits = again
        .search_tools("add two integers", Some(3))
        .await
        .unwrap();
    assert!(hits.is_empty(), "answered from the stale entry: {hits:?}");
    assert!(again.known_tools().is_empty());

    again
        .update_server("t", point_to(node.to_str().unwrap(), &args))
        .await
        .unwrap();
    let hits = again
        .search_tools("sum of two numbers", Some(5))
        .await
        .unwrap();
    assert!(hits.iter().all(|h| h.name != "add"), "{hits:?}");
    assert!(hits.iter().any(|h| h.id == "mcp__t__get-sum"), "{hits:?}");
    again.close().await;
}

/// The text of the tool result answering call `n` of the run.
fn tool_result(result: &mcpmux::agent::AgentResult, n: usize) -> String {
    let results: Vec<&String> = result
        .transcript
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match b {
            Block::ToolResult { content, .. } => Some(content),
            _ => None,
        })
        .collect();
    results[n].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_fresh_config_the_agent_finds_the_tool_it_searches_for_and_calls_it() {
    let (node, mut args) = require_or_skip!(everything_command(), "server-everything");
    args.push("stdio".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    for with_broken in [false, true] {
        let pool = fresh_pool().await;
        pool.add_server(stdio("everything", node.to_str().unwrap(), &args))
            .await
            .unwrap();
        if with_broken {
            pool.add_server(broken("broken")).await.unwrap();
        }
        for name in ["everything", "broken"]
            .iter()
            .take(1 + with_broken as usize)
        {
            trust(&pool, name).await;
        }
        // At once, with no listing: the model searches, then calls what the search found.
        let (fake, agent) = agent_on(
            &pool,
            vec![
                Turn::Tools(vec![("search_tools".into(), json!({"query": "echo"}))]),
                Turn::CallFound {
                    name: "echo".into(),
                    arguments: json!({"message": "hi"}),
                },
                Turn::Text("It said hi.".into()),
            ],
        )
        .await;
        let result = agent
            .run("Use the echo tool and say hi", RunOptions::default())
            .await;
        let result = result.unwrap();
        assert_eq!(result.stop, Stop::Finished, "{result:?}");
        assert_eq!(result.text, "It said hi.");
        let search: Value = serde_json::from_str(&tool_result(&result, 0)).unwrap();
        let ids: Vec<&str> = search["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_str().unwrap())
            .collect();
        assert!(ids.contains(&"mcp__everything__echo"), "{search}");
        assert!(tool_result(&result, 1).contains("Echo: hi"), "{result:?}");
        let requests = fake.requests();
        let system = requests[0]["messages"][0]["content"].as_str().unwrap();
        if with_broken {
            assert_eq!(search["unavailable"][0]["server"], "broken", "{search}");
            let error = search["unavailable"][0]["error"].as_str().unwrap();
            assert!(
                error.contains("cannot start `/nonexistent/server`"),
                "{error}"
            );
            assert!(system.contains("- broken (mcp, unavailable:"), "{system}");
        } else {
            assert!(search.get("unavailable").is_none(), "{search}");
        }
        assert!(system.contains("- everything (mcp, "), "{system}");
        assert!(!system.contains("everything (mcp, 0 tools)"), "{system}");
        pool.close().await;
    }
}
