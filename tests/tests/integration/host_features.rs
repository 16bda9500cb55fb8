//! What a host asks of servers and answers for them beyond the basics, in both protocol eras
//! (the test server, 2026-07-28 and `--legacy`): lists asked for again past every cache
//! (`ListOptions::refresh`), a URL the user must open before a server answers (error -32042,
//! then `elicitation:complete`), and sampling with tools answered by an agent's model.
#![allow(
    deprecated,
    reason = "sampling is deprecated by SEP-2577 but servers still use it"
)]

use std::time::Duration;

use crate::common::*;
use mcpmux::{ErrorKind, Event, ListOptions, Pool};
use mcpmux_tests::fake_llm::{FakeOpenAi, Turn};
use serde_json::json;

/// The test server's flags for each protocol era. The 2026-07-28 one gives its lists a
/// minute of `ttlMs`, so that rmcp's response cache keeps them too.
const ERAS: [(&str, &[&str]); 2] = [
    ("modern", &["--tools-ttl-ms", "60000"]),
    ("legacy", &["--legacy"]),
];

fn names(tools: &[mcpmux::ToolInfo]) -> Vec<String> {
    tools.iter().map(|t| t.name.clone()).collect()
}

async fn resource_uris(pool: &Pool, server: &str, options: ListOptions) -> Vec<String> {
    let listed = pool.list_resources_with(Some(server), options).await;
    let listed = listed.unwrap_or_else(|e| panic!("{server}: {e}"));
    listed.into_iter().map(|r| r.resource.uri.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_lists_what_a_server_changed_without_saying() {
    let pool = pool().await;
    for (era, args) in ERAS {
        let record = add_test_server(&pool, era, args).await;
        let mut events = pool.events();
        let before = pool.list_tools(Some(era)).await.unwrap();
        let resources_before = resource_uris(&pool, era, ListOptions::default()).await;
        let quiet = format!("quiet_{era}");
        call_ok(
            &pool,
            &format!("mcp__{era}__add_tool"),
            json!({"name": quiet, "quiet": true}),
        )
        .await;

        // The cached lists are what a server that says nothing leaves a client with: the
        // pool's tool list, and rmcp's copy of a 2026-07-28 list within its ttlMs...
        let cached = pool.list_tools(Some(era)).await.unwrap();
        assert_eq!(names(&cached), names(&before), "{era}");
        let added = format!("test://added/{quiet}");
        let cached = resource_uris(&pool, era, ListOptions::default()).await;
        if era == "modern" {
            assert_eq!(cached, resources_before, "rmcp's cache answered");
        }
        // ...until a refresh asks again, and the caches take the new lists.
        let fresh = resource_uris(&pool, era, ListOptions::refresh()).await;
        assert!(fresh.contains(&added), "{era}: {fresh:?}");
        let fresh = pool
            .list_tools_with(Some(era), ListOptions::refresh())
            .await
            .unwrap();
        assert!(names(&fresh).contains(&quiet), "{era}: {:?}", names(&fresh));
        // Found by the pool, not said by the server: told by the pool, once.
        let told = std::iter::from_fn(|| events.try_recv())
            .filter(|e| matches!(e, Event::ToolsChanged { server_id } if *server_id == record.id))
            .count();
        assert_eq!(
            told, 1,
            "{era}: tools:changed events for a change found by a refresh"
        );
        let after = pool.list_tools(None).await.unwrap();
        assert!(
            after.iter().any(|t| t.id == format!("mcp__{era}__{quiet}")),
            "{era}: {:?}",
            names(&after)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_elicitation_is_an_error_naming_the_url_then_an_event() {
    let pool = pool().await;
    for (era, args) in ERAS {
        let record = add_test_server(&pool, era, args).await;
        let mut events = pool.events();
        let tool = format!("mcp__{era}__connect_account");
        let e = pool
            .call_tool(&tool, json!({}), Default::default())
            .await
            .expect_err("the server needs the user first");
        assert_eq!(e.kind(), ErrorKind::UrlElicitationRequired, "{era}: {e}");
        let url = "https://example.test/connect?elicitation=connect-example-account";
        let message = e.to_string();
        assert!(
            message.contains(url) && message.contains("Connect your example.test account"),
            "{message}"
        );
        assert_eq!(
            e.data().unwrap(),
            json!({"elicitations": [{
                "elicitationId": "connect-example-account",
                "url": url,
                "message": "Connect your example.test account."
            }]})
        );
        let done = wait_event(&mut events, Duration::from_secs(5), |e| {
            matches!(e, Event::ElicitationComplete { server_id, .. } if *server_id == record.id)
        })
        .await
        .unwrap_or_else(|| panic!("{era}: no elicitation:complete event"));
        assert!(
            matches!(&done, Event::ElicitationComplete { elicitation_id, .. }
                if elicitation_id == "connect-example-account"),
            "{done:?}"
        );
        let again = call_ok(&pool, &tool, json!({})).await;
        assert_eq!(text(&again), "account connected");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_with_tools_reaches_the_model_and_its_tool_call_the_server() {
    for (era, args) in ERAS {
        let pool = pool().await;
        let fake = FakeOpenAi::start(vec![Turn::Tools(vec![(
            "get_weather".into(),
            json!({"city": "Paris"}),
        )])])
        .await;
        let agent = mcpmux::agent::Agent::new(
            pool.pool.clone(),
            openai_provider(&fake, 0),
            Default::default(),
        );
        // Before connecting: servers learn what the client supports when it connects.
        agent.handle_sampling(None);
        add_test_server(&pool, era, args).await;
        let answer = call_ok(&pool, &format!("mcp__{era}__sample_with_tools"), json!({})).await;
        assert_eq!(
            text(&answer),
            r#"stop=toolUse tool_use:get_weather({"city":"Paris"})"#,
            "{era}"
        );
        let asked = fake.requests();
        assert_eq!(asked.len(), 1, "{era}: {asked:?}");
        assert_eq!(asked[0]["tools"][0]["function"]["name"], "get_weather");
        assert_eq!(
            asked[0]["tools"][0]["function"]["parameters"]["required"],
            json!(["city"])
        );
        assert_eq!(asked[0]["tool_choice"], "required", "{era}");
        pool.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sampling_handler_without_tools_is_not_sent_any() {
    for (era, args) in ERAS {
        let pool = pool().await;
        pool.set_sampling_handler(Some(std::sync::Arc::new(|_req| {
            Box::pin(async { Err("this handler takes no tools".to_string()) })
        })));
        add_test_server(&pool, era, args).await;
        let e = pool
            .call_tool(
                &format!("mcp__{era}__sample_with_tools"),
                json!({}),
                Default::default(),
            )
            .await
            .expect_err("the server must not send tools to this client");
        let text = e.to_string();
        assert!(
            text.contains("sampling tools") || text.contains("sampling.tools"),
            "{era}: {text}"
        );
        pool.close().await;
    }
}

/// Methods mcpmux has no verb for go through by name, both ways: a request and its result, a
/// notification, and the server's own notification back as a `notification` event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn methods_without_a_verb_go_through_by_name() {
    let pool = pool().await;
    for (era, args) in ERAS {
        let record = add_test_server(&pool, era, args).await;
        let mut params = serde_json::Map::new();
        params.insert("x".into(), json!(1));
        let answer = pool
            .request(era, "test/echo", Some(params.clone()))
            .await
            .unwrap();
        assert_eq!(answer["method"], "test/echo", "{era}: {answer}");
        assert_eq!(answer["params"]["x"], 1, "{era}: {answer}");
        let e = pool.request(era, "test/nothing", None).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
        assert!(e.to_string().contains("test/nothing"), "{e}");
        let e = pool.request(era, " ", None).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");

        let mut events = pool.events();
        pool.notify(era, "test/ping", Some(params.clone()))
            .await
            .unwrap();
        let pong = wait_event(
            &mut events,
            Duration::from_secs(5),
            |e| matches!(e, Event::Notification { server_id, .. } if *server_id == record.id),
        )
        .await
        .unwrap_or_else(|| panic!("{era}: no notification event"));
        assert_eq!(
            serde_json::to_value(&pong).unwrap(),
            json!({"type": "notification", "serverId": record.id, "method": "test/pong",
                   "params": {"x": 1}})
        );
    }
}

/// server-everything completes its prompt's arguments, the second from the first (context); a
/// server that offers no completions says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_arguments_complete() {
    let Some((node, mut args)) = mcpmux_tests::everything_command() else {
        mcpmux_tests::skip_or_fail("@modelcontextprotocol/server-everything");
        return;
    };
    args.push("stdio".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let pool = pool().await;
    pool.add_server(stdio("everything", node.to_str().unwrap(), &args))
        .await
        .unwrap();
    let params = |argument: &str, value: &str, context: serde_json::Value| {
        serde_json::from_value::<mcpmux::model::CompleteRequestParams>(json!({
            "ref": {"type": "ref/prompt", "name": "completable-prompt"},
            "argument": {"name": argument, "value": value},
            "context": context,
        }))
        .unwrap()
    };
    let departments = pool
        .complete("everything", params("department", "S", json!({})))
        .await
        .unwrap();
    assert_eq!(departments.values, ["Sales", "Support"]);
    let names = pool
        .complete(
            "everything",
            params(
                "name",
                "",
                json!({"arguments": {"department": "Engineering"}}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(names.values, ["Alice", "Bob", "Charlie"]);

    add_test_server(&pool, "plain", &[]).await;
    let e = pool
        .complete("plain", params("name", "", json!({})))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("does not offer completions"), "{e}");
}

/// A result that breaks the promise of its tool's output schema is an `invalid_result` error
/// naming what is wrong, unless the caller takes results as they are; a kept promise passes,
/// and so does an agent's model learn of a broken one as an error result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_are_checked_against_the_output_schema() {
    let pool = pool().await;
    for (era, args) in ERAS {
        add_test_server(&pool, era, args).await;
        pool.list_tools(Some(era)).await.unwrap();
        let kept = call_ok(&pool, &format!("mcp__{era}__structured"), json!({})).await;
        assert_eq!(kept.structured_content.unwrap()["answer"], 42);

        let e = pool
            .call_tool(
                &format!("mcp__{era}__mismatch"),
                json!({}),
                Default::default(),
            )
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidResult, "{era}: {e}");
        let message = e.to_string();
        assert!(
            message.contains("'mismatch'")
                && message.contains("/answer")
                && message.contains("validate"),
            "{message}"
        );
        assert_eq!(
            e.data().unwrap()["problems"][0]
                .as_str()
                .unwrap()
                .split(':')
                .next(),
            Some("/answer")
        );
        let e = pool
            .call_tool(
                &format!("mcp__{era}__unstructured"),
                json!({}),
                Default::default(),
            )
            .await
            .unwrap_err();
        assert!(e.to_string().contains("no structuredContent"), "{e}");

        let as_is = mcpmux::CallOptions {
            validate: Some(false),
            ..Default::default()
        };
        let taken = pool
            .call_tool(&format!("mcp__{era}__mismatch"), json!({}), as_is)
            .await
            .unwrap();
        assert_eq!(taken.structured_content.unwrap()["answer"], 42);
    }
}

/// An agent's model learns of a result that breaks its tool's output schema as an error
/// result, which says what is wrong, so it can try again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_gets_a_broken_promise_as_an_error_result() {
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    trust(&pool, "t").await;
    let (fake, agent) = agent_on(
        &pool,
        vec![
            Turn::Tools(vec![("mcp__t__mismatch".into(), json!({}))]),
            Turn::Text("noted".into()),
        ],
    )
    .await;
    agent.run("check", Default::default()).await.unwrap();
    let second = &fake.requests()[1];
    let tool_message = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap_or_default();
    let content = tool_message["content"].as_str().unwrap_or_default();
    assert!(
        content.contains("Error")
            && content.contains("outputSchema")
            && content.contains("/answer"),
        "{tool_message}"
    );
}

/// A caller's `_meta` keys (trace context, its own) reach the server on every path a call
/// takes (written straight to a stdio session, or through rmcp when it wants progress).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callers_meta_reaches_the_server() {
    let pool = pool().await;
    for (era, args) in ERAS {
        add_test_server(&pool, era, args).await;
        let mut meta = serde_json::Map::new();
        meta.insert(
            "traceparent".into(),
            json!("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
        );
        meta.insert("com.example/tenant".into(), json!("acme"));
        for with_progress in [false, true] {
            let options = mcpmux::CallOptions {
                meta: Some(meta.clone()),
                on_progress: with_progress
                    .then(|| std::sync::Arc::new(|_p: mcpmux::Progress| {}) as mcpmux::ProgressFn),
                ..Default::default()
            };
            let r = pool
                .call_tool(&format!("mcp__{era}__meta"), json!({}), options)
                .await
                .unwrap();
            let seen: serde_json::Value = serde_json::from_str(&text(&r)).unwrap();
            assert_eq!(
                seen["traceparent"], meta["traceparent"],
                "{era}, progress {with_progress}: {seen}"
            );
            assert_eq!(seen["com.example/tenant"], "acme", "{seen}");
        }
    }
}

/// `max_total` caps a call that progress would otherwise keep alive, and cancels it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_total_caps_a_call_that_keeps_reporting_progress() {
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    let options = mcpmux::CallOptions {
        timeout: Some(Duration::from_millis(400)),
        max_total: Some(Duration::from_millis(900)),
        on_progress: Some(std::sync::Arc::new(|_p: mcpmux::Progress| {})),
        ..Default::default()
    };
    let started = std::time::Instant::now();
    let e = pool
        .call_tool("mcp__t__sleep", json!({"ms": 5000}), options)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.to_string().contains("whole call"), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // The server was told: its sleep stopped early.
    let mut cancelled = String::new();
    for _ in 0..50 {
        cancelled = text(&call_ok(&pool, "mcp__t__cancelled", json!({})).await);
        if cancelled != "0" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(cancelled, "1");
}

/// A server record's per-tool time limit applies to that tool alone; an agent's tool time
/// limit reaches the model as an error result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_limits_per_tool_and_per_agent() {
    let pool = pool().await;
    let mut input = test_server("t", &[]);
    input.timeouts = mcpmux::Timeouts {
        tools: [("hang".to_string(), 300)].into(),
        ..Default::default()
    };
    pool.add_server(input).await.unwrap();
    trust(&pool, "t").await;
    let started = std::time::Instant::now();
    let e = pool
        .call_tool("mcp__t__hang", json!({"ms": 3000}), Default::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(started.elapsed() < Duration::from_secs(2));
    call_ok(&pool, "mcp__t__sleep", json!({"ms": 500})).await;

    let fake = FakeOpenAi::start(vec![
        Turn::Tools(vec![("mcp__t__sleep".into(), json!({"ms": 3000}))]),
        Turn::Text("too slow".into()),
    ])
    .await;
    let agent = mcpmux::agent::Agent::new(
        pool.pool.clone(),
        openai_provider(&fake, 0),
        mcpmux::agent::AgentOptions {
            tool_max_total_ms: Some(400),
            ..Default::default()
        },
    );
    let started = std::time::Instant::now();
    agent.run("wait", Default::default()).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    let told = fake.requests()[1]["messages"].to_string();
    assert!(told.contains("timed out"), "{told}");
}
