//! Input rounds of 2026-07-28 servers (`input_required`): answered by the host's handlers,
//! for tools, prompts and resources, all of a round's at once, up to the pool's cap.

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use mcpmux::{ErrorKind, PoolOptions};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(
    deprecated,
    reason = "sampling and roots (SEP-2577) are what this test exercises"
)]
async fn input_required_rounds_of_2026_servers_are_answered_by_the_host() {
    let pool = pool().await;
    pool.set_sampling_handler(Some(Arc::new(|_req| {
        Box::pin(async {
            Ok(serde_json::from_value(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "hi from host"},
                "model": "m"
            }))
            .unwrap())
        })
    })));
    pool.set_elicitation_handler(Some(Arc::new(|_req| {
        Box::pin(async {
            Ok(
                mcpmux::model::ElicitResult::new(mcpmux::model::ElicitationAction::Accept)
                    .with_content(json!({"name": "Grace"})),
            )
        })
    })));
    pool.set_roots(vec![
        mcpmux::model::Root::new("file:///a"),
        mcpmux::model::Root::new("file:///b"),
    ])
    .await;
    add_test_server(&pool, "t", &[]).await;
    let r = call_ok(&pool, "mcp__t__ask", json!({})).await;
    assert_eq!(text(&r), r#"name="Grace" sample="hi from host" roots=2"#);
    assert_eq!(
        pool.server_states()[0].protocol_version.as_deref(),
        Some("2026-07-28")
    );
    pool.close().await;
}

/// An elicitation handler answering `name` and counting the questions.
fn answer_name(pool: &mcpmux::Pool, name: &'static str) -> Arc<std::sync::atomic::AtomicUsize> {
    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = asked.clone();
    pool.set_elicitation_handler(Some(Arc::new(move |_req| {
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move {
            Ok(
                mcpmux::model::ElicitResult::new(mcpmux::model::ElicitationAction::Accept)
                    .with_content(json!({"name": name})),
            )
        })
    })));
    asked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_and_resources_complete_through_input_rounds() {
    let pool = pool().await;
    let asked = answer_name(&pool, "Ada");
    add_test_server(&pool, "t", &[]).await;
    assert_eq!(prompt_text(&pool, "t", "ask").await, "Hello, Ada!");
    assert_eq!(
        resource_text(&pool, "t", "test://ask").await,
        "asked for Ada"
    );
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 2);
    // Rounds that carry only the server's state are sent again without asking the host.
    assert_eq!(
        resource_text(&pool, "t", "test://wait").await,
        "waited two rounds"
    );
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 2);
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_rounds_stop_at_the_pools_cap() {
    let pool = pool_with(PoolOptions {
        max_input_rounds: 3,
        ..options()
    })
    .await;
    add_test_server(&pool, "t", &[]).await;
    let err = pool
        .read_resource("t", "test://ask-forever")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol, "{err}");
    assert!(
        err.to_string()
            .contains("resources/read: still asking for input after 3 rounds"),
        "{err}"
    );
    // Without an elicitation handler the question is declined, and the server says so.
    let prompt = pool.get_prompt("t", "ask", None).await.unwrap();
    let greeting = serde_json::to_value(&prompt.messages[0]).unwrap();
    assert_eq!(
        greeting["content"]["text"], "Hello, declined!",
        "{greeting}"
    );
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(deprecated, reason = "sampling (SEP-2577) is what this test exercises")]
async fn the_input_requests_of_one_round_are_answered_at_once() {
    // The elicitation waits for the sampling request to arrive: answered one after the
    // other, the round would never finish.
    let pool = pool().await;
    let both = Arc::new(tokio::sync::Barrier::new(2));
    let meet = both.clone();
    pool.set_sampling_handler(Some(Arc::new(move |_req| {
        let meet = meet.clone();
        Box::pin(async move {
            meet.wait().await;
            Ok(serde_json::from_value(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "together"},
                "model": "m"
            }))
            .unwrap())
        })
    })));
    let meet = both.clone();
    pool.set_elicitation_handler(Some(Arc::new(move |_req| {
        let meet = meet.clone();
        Box::pin(async move {
            meet.wait().await;
            Ok(
                mcpmux::model::ElicitResult::new(mcpmux::model::ElicitationAction::Accept)
                    .with_content(json!({"name": "Lin"})),
            )
        })
    })));
    add_test_server(&pool, "t", &[]).await;
    let r = tokio::time::timeout(
        Duration::from_secs(10),
        call_ok(&pool, "mcp__t__ask", json!({})),
    )
    .await
    .expect("the round's requests were answered one after the other");
    assert!(
        text(&r).starts_with(r#"name="Lin" sample="together""#),
        "{}",
        text(&r)
    );
    pool.close().await;
}
