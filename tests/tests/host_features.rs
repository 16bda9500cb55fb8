//! What a host asks of servers and answers for them beyond the basics, in both protocol eras
//! (the test server, 2026-07-28 and `--legacy`): lists asked for again past every cache
//! (`ListOptions::refresh`), a URL the user must open before a server answers (error -32042,
//! then `elicitation:complete`), and sampling with tools answered by an agent's model.
#![allow(
    deprecated,
    reason = "sampling is deprecated by SEP-2577 but servers still use it"
)]

mod common;

use std::time::Duration;

use common::*;
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
        add_test_server(&pool, era, args).await;
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
