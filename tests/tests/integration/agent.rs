//! The agent loop end to end: a scripted OpenAI-compatible service on 127.0.0.1 (the exact
//! streaming wire format) driving real MCP servers through the pool.

use std::sync::{Arc, Mutex};

use crate::common::*;
use mcpmux::ErrorKind;
use mcpmux::agent::{Agent, AgentOptions, Approval, Block, RunOptions, Stop};
use mcpmux_tests::fake_llm::{FakeOpenAi, Turn};
use serde_json::json;

fn tools_offered(request: &serde_json::Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

async fn trusted_test_server(pool: &TestPool) {
    add_test_server(pool, "t", &[]).await;
    trust(pool, "t").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_then_activation_then_a_real_call_then_the_answer() {
    let pool = pool().await;
    trusted_test_server(&pool).await;
    let (fake, agent) = agent_on(
        &pool,
        vec![
            Turn::Tools(vec![(
                "t_mcp_search_tools".into(),
                json!({"query": "return text unchanged"}),
            )]),
            Turn::Tools(vec![("mcp__t__echo".into(), json!({"text": "hello"}))]),
            Turn::Text("The server said hello.".into()),
        ],
    )
    .await;
    let (result, streamed) = run_streamed(&agent, "Echo hello").await;
    assert_eq!(result.stop, Stop::Finished);
    assert_eq!(result.text, "The server said hello.");
    assert_eq!(streamed, "The server said hello.");
    assert_eq!(result.iterations, 3);
    assert_eq!(result.usage.input_tokens, 300);

    let requests = fake.requests();
    assert_eq!(requests[0]["model"], "gpt-test");
    assert!(
        requests[0]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("STEP 1")
    );
    let first = tools_offered(&requests[0]);
    assert!(first.contains(&"t_mcp_search_tools".to_string()));
    assert!(!first.iter().any(|t| t.starts_with("mcp__")), "{first:?}");
    // The search result reached the model, then the real call activated the server.
    let search_result = &requests[1]["messages"].as_array().unwrap().last().unwrap()["content"];
    assert!(
        search_result.as_str().unwrap().contains("mcp__t__echo"),
        "{search_result}"
    );
    let third = tools_offered(&requests[2]);
    assert!(third.contains(&"mcp__t__echo".to_string()), "{third:?}");
    let echo_result = requests[2]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(echo_result["role"], "tool");
    assert_eq!(echo_result["content"], "hello");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untrusted_tools_need_approval_and_a_denial_reaches_the_model() {
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    pool.list_tools(None).await.unwrap();
    let (_fake, agent) = agent_on(
        &pool,
        vec![
            Turn::Tools(vec![("mcp__t__echo".into(), json!({"text": "x"}))]),
            Turn::Text("Denied, fine.".into()),
            Turn::Tools(vec![("mcp__t__echo".into(), json!({"text": "y"}))]),
            Turn::Text("Done.".into()),
        ],
    )
    .await;
    let result = agent.run("echo x", RunOptions::default()).await.unwrap();
    let denied = result.transcript.iter().flat_map(|m| m.content.iter()).any(|b| {
        matches!(b, Block::ToolResult { content, is_error: true, .. } if content.contains("denied"))
    });
    assert!(denied, "{:?}", result.transcript);

    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let result = agent
        .run(
            "echo y",
            RunOptions {
                approve: Some(Arc::new(move |req| {
                    log.lock().unwrap().push(req.tool_id.clone());
                    Box::pin(async { Approval::AllowOnce })
                })),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(*asked.lock().unwrap(), ["mcp__t__echo"]);
    let ran =
        result.transcript.iter().flat_map(|m| m.content.iter()).any(
            |b| matches!(b, Block::ToolResult { content, is_error: false, .. } if content == "y"),
        );
    assert!(ran, "{:?}", result.transcript);
    pool.close().await;
}

/// The message of the connection error a run with `provider` ends with.
async fn provider_error(
    pool: &TestPool,
    provider: std::sync::Arc<mcpmux::agent::OpenAiProvider>,
) -> String {
    let agent = Agent::new(pool.pool.clone(), provider, AgentOptions::default());
    let e = agent.run("hi", RunOptions::default()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Connection, "{e}");
    e.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_iterations_retries_and_cancellation() {
    let pool = pool().await;
    trusted_test_server(&pool).await;
    // The iteration limit ends the run with a clear reason.
    let fake = FakeOpenAi::start(vec![
        Turn::Tools(vec![("search_tools".into(), json!({"query": "a"}))]),
        Turn::Tools(vec![("search_tools".into(), json!({"query": "b"}))]),
        Turn::Tools(vec![("search_tools".into(), json!({"query": "c"}))]),
    ])
    .await;
    let agent = Agent::new(
        pool.pool.clone(),
        openai_provider(&fake, 0),
        AgentOptions {
            max_iterations: 2,
            ..Default::default()
        },
    );
    let r = agent.run("loop", RunOptions::default()).await.unwrap();
    assert_eq!(r.stop, Stop::MaxIterations);
    assert!(r.text.contains("limit"), "{}", r.text);
    assert_eq!(fake.remaining(), 1);

    // 429 and 500 are retried with backoff; then the answer comes through.
    let fake = FakeOpenAi::start(vec![
        Turn::Status(429),
        Turn::Status(500),
        Turn::Text("ok".into()),
    ])
    .await;
    let agent = Agent::new(
        pool.pool.clone(),
        openai_provider(&fake, 3),
        AgentOptions::default(),
    );
    assert_eq!(
        agent.run("hi", RunOptions::default()).await.unwrap().text,
        "ok"
    );
    // Past the retries the error is clear.
    let fake = FakeOpenAi::start(vec![
        Turn::Status(503),
        Turn::Status(503),
        Turn::Status(503),
    ])
    .await;
    let e = provider_error(&pool, openai_provider(&fake, 1)).await;
    assert!(e.contains("503") && e.contains("2 attempts"), "{e}");
    // A model service that is not running (Ollama not started) says the connection was
    // refused, not only that a request could not be sent.
    let nothing = mcpmux::agent::OpenAiConfig {
        base_url: format!("http://127.0.0.1:{}/v1", mcpmux_tests::free_port()),
        api_key: Some("sk-test".into()),
        model: "gpt-test".into(),
        headers: Default::default(),
        max_retries: 0,
    };
    let nothing = std::sync::Arc::new(mcpmux::agent::OpenAiProvider::new(nothing).unwrap());
    let e = provider_error(&pool, nothing).await;
    assert!(
        e.contains("Connection refused") && e.contains("(after 1 attempt)"),
        "{e}"
    );

    // Cancelling mid-run stops it, tool calls included.
    let (fake, agent) = agent_on(
        &pool,
        vec![
            Turn::Tools(vec![("mcp__t__sleep".into(), json!({"ms": 10_000}))]),
            Turn::Text("never".into()),
        ],
    )
    .await;
    let cancel = tokio_util::sync::CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let started = std::time::Instant::now();
    let r = agent
        .run(
            "sleep",
            RunOptions {
                cancel: Some(cancel),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(r.stop, Stop::Cancelled);
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
    assert_eq!(fake.remaining(), 1);
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_long_results_are_compressed_and_recall_brings_them_back() {
    let pool = pool().await;
    trusted_test_server(&pool).await;
    pool.list_tools(None).await.unwrap();
    let big = "lorem ipsum ".repeat(500);
    let (fake, agent) = agent_on(
        &pool,
        vec![
            Turn::Tools(vec![("mcp__t__echo".into(), json!({"text": big}))]),
            Turn::Tools(vec![("search_tools".into(), json!({"query": "a"}))]),
            Turn::Tools(vec![("search_tools".into(), json!({"query": "b"}))]),
            Turn::Tools(vec![("recall".into(), json!({"id": "call_1_0"}))]),
            Turn::Text("done".into()),
        ],
    )
    .await;
    let r = agent.run("big", RunOptions::default()).await.unwrap();
    assert_eq!(r.stop, Stop::Finished);
    let requests = fake.requests();
    let tool_messages = |i: usize| -> Vec<String> {
        requests[i]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap().to_string())
            .collect()
    };
    // Request 2 still has it whole; by request 4 it is two turns old and shortened.
    assert_eq!(tool_messages(1)[0], big);
    let shortened = &tool_messages(3)[0];
    assert!(
        shortened.len() < 400 && shortened.contains("recall(\"call_1_0\")"),
        "{shortened}"
    );
    // The recall answer is the full text.
    assert_eq!(tool_messages(4).last().unwrap(), &big);
    assert!(tools_offered(&requests[0]).contains(&"recall".to_string()));
    pool.close().await;
}

/// The same discovery → call → answer run through every built-in provider, each against a
/// fake speaking its service's wire format, made by `create_provider`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_and_ollama_providers_run_the_same_loop() {
    use mcpmux::agent::{ProviderConfig, create_provider};
    use mcpmux_tests::fake_llm::Dialect;
    let pool = pool().await;
    trusted_test_server(&pool).await;
    pool.list_tools(None).await.unwrap();
    for dialect in [Dialect::Anthropic, Dialect::Ollama, Dialect::OpenAi] {
        let fake = FakeOpenAi::start_as(
            dialect,
            vec![
                Turn::Tools(vec![("mcp__t__add".into(), json!({"a": 40, "b": 2}))]),
                Turn::Text("It is 42.".into()),
            ],
        )
        .await;
        let config: ProviderConfig = serde_json::from_value(match dialect {
            Dialect::Anthropic => json!({"type": "anthropic", "baseUrl": fake.base_url, "apiKey": "k", "model": "claude-test"}),
            Dialect::Ollama => json!({"type": "ollama", "baseUrl": fake.base_url, "model": "llama-test"}),
            Dialect::OpenAi => json!({"type": "remote", "proxyUrl": fake.base_url, "model": "proxied"}),
        })
        .unwrap();
        let provider = create_provider(config).unwrap();
        let agent = Agent::new(pool.pool.clone(), provider.clone(), AgentOptions::default());
        let (r, streamed) = run_streamed(&agent, "add").await;
        assert_eq!(r.text, "It is 42.", "{dialect:?}");
        assert_eq!(streamed, "It is 42.", "{dialect:?}");
        assert!(r.usage.input_tokens >= 200, "{dialect:?}: {:?}", r.usage);
        let added = r.transcript.iter().flat_map(|m| m.content.iter()).any(
            |b| matches!(b, Block::ToolResult { content, is_error: false, .. } if content == "42"),
        );
        assert!(added, "{dialect:?}: {:?}", r.transcript);
        let second = &fake.requests()[1];
        let carried = second.to_string();
        assert!(
            carried.contains("\"42\""),
            "{dialect:?}: the tool result did not reach the model: {carried}"
        );
        provider.set_model("other");
        assert_eq!(provider.model(), "other");
    }
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_mid_stream_in_every_dialect() {
    use mcpmux::agent::{ProviderConfig, create_provider};
    use mcpmux_tests::fake_llm::Dialect;
    let pool = pool().await;
    for (dialect, kind) in [
        (Dialect::OpenAi, "openai"),
        (Dialect::Anthropic, "anthropic"),
        (Dialect::Ollama, "ollama"),
    ] {
        let fake = FakeOpenAi::start_as(dialect, vec![Turn::Stall("Thinking about".into())]).await;
        let config: ProviderConfig = serde_json::from_value(
            json!({"type": kind, "baseUrl": fake.base_url, "model": "m", "apiKey": "k"}),
        )
        .unwrap();
        let agent = Agent::new(
            pool.pool.clone(),
            create_provider(config).unwrap(),
            AgentOptions::default(),
        );
        let tokens = Arc::new(Mutex::new(String::new()));
        let sink = tokens.clone();
        let cancel = tokio_util::sync::CancellationToken::new();
        // Cancel as soon as the first words have streamed in.
        let trigger = cancel.clone();
        let seen = tokens.clone();
        tokio::spawn(async move {
            while seen.lock().unwrap().is_empty() {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            trigger.cancel();
        });
        let r = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            agent.run(
                "think",
                RunOptions {
                    on_token: Some(Arc::new(move |t| sink.lock().unwrap().push_str(t))),
                    cancel: Some(cancel),
                    ..Default::default()
                },
            ),
        )
        .await
        .expect("cancelling a stalled stream must end the run")
        .unwrap();
        assert_eq!(r.stop, Stop::Cancelled, "{kind}");
        assert_eq!(*tokens.lock().unwrap(), "Thinking about", "{kind}");
    }
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_model_replies() {
    let pool = pool().await;
    trusted_test_server(&pool).await;
    pool.list_tools(None).await.unwrap();
    // Arguments that are not JSON go back to the model as an error it can correct.
    let broken_args = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",",
        "\"type\":\"function\",\"function\":{\"name\":\"mcp__t__echo\",\"arguments\":\"{\\\"text\\\": \"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n"
    );
    let (fake, agent) = agent_on(
        &pool,
        vec![
            Turn::Raw(broken_args.into()),
            Turn::Tools(vec![("mcp__t__echo".into(), json!({"text": "fixed"}))]),
            Turn::Text("done".into()),
        ],
    )
    .await;
    let r = agent.run("echo", RunOptions::default()).await.unwrap();
    assert_eq!(r.text, "done");
    let requests = fake.requests();
    let messages = requests[1]["messages"].as_array().unwrap();
    let call = &messages[messages.len() - 2];
    // The transcript carries an object, never the broken text, so any provider accepts it.
    assert_eq!(call["tool_calls"][0]["function"]["arguments"], "{}");
    let error = messages.last().unwrap()["content"].as_str().unwrap();
    assert!(
        error.starts_with("Error: The arguments for 'mcp__t__echo' are not a JSON object"),
        "{error}"
    );
    assert!(
        requests[2]["messages"].to_string().contains("fixed"),
        "{}",
        requests[2]
    );

    // A stream that is not SSE JSON at all is a clear protocol error, not a panic or a hang.
    let (_fake, agent) = agent_on(&pool, vec![Turn::Raw("data: {not json\n\n".into())]).await;
    let e = agent.run("x", RunOptions::default()).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
    // A stream that ends before it says it is done is an error too.
    let (_fake, agent) = agent_on(
        &pool,
        vec![Turn::Raw(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"half\"}}]}\n\n".into(),
        )],
    )
    .await;
    let r = agent.run("x", RunOptions::default()).await;
    assert!(r.is_err(), "{r:?}");
    pool.close().await;
}

/// The approval policy reads a trusted server's annotations (server-filesystem's): by default
/// a tool that says it destroys is asked about and shown with its title and hints; under the
/// read-only policy only read-only tools run without asking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_follow_the_policy_and_the_tools_annotations() {
    let Some((node, script)) = mcpmux_tests::filesystem_command() else {
        mcpmux_tests::skip_or_fail("@modelcontextprotocol/server-filesystem");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_string_lossy().into_owned();
    let file = format!("{root}/note.txt");
    std::fs::write(&file, "hello").unwrap();
    for (policy, not_auto_approved, asked_for) in [
        (
            mcpmux::agent::ApprovalPolicy::Trusted,
            vec![],
            vec![("write_file", "destructive")],
        ),
        (
            mcpmux::agent::ApprovalPolicy::ReadOnly,
            vec![],
            vec![
                ("write_file", "not_read_only"),
                ("create_directory", "not_read_only"),
            ],
        ),
        // Every tool, the read-only one too.
        (
            mcpmux::agent::ApprovalPolicy::Always,
            vec![],
            vec![
                ("write_file", "always"),
                ("read_text_file", "always"),
                ("create_directory", "always"),
            ],
        ),
        // The record names a read-only tool: it is asked about all the same.
        (
            mcpmux::agent::ApprovalPolicy::Trusted,
            vec!["read_text_file".to_string()],
            vec![
                ("write_file", "destructive"),
                ("read_text_file", "not_auto_approved"),
            ],
        ),
    ] {
        let pool = pool().await;
        #[allow(
            deprecated,
            reason = "server-filesystem takes its folders from the roots"
        )]
        let roots = vec![mcpmux::model::Root::new(format!("file://{root}"))];
        pool.set_roots(roots).await;
        let args: Vec<&str> = script
            .iter()
            .map(String::as_str)
            .chain([root.as_str()])
            .collect();
        pool.add_server(stdio("files", node.to_str().unwrap(), &args))
            .await
            .unwrap();
        trust(&pool, "files").await;
        let patch = mcpmux::ServerPatch {
            disabled_auto_approve_tools: Some(not_auto_approved),
            ..Default::default()
        };
        pool.update_server("files", patch).await.unwrap();
        let fake = FakeOpenAi::start(vec![
            Turn::Tools(vec![
                (
                    "mcp__files__write_file".into(),
                    json!({"path": file, "content": "bye"}),
                ),
                (
                    "mcp__files__create_directory".into(),
                    json!({"path": format!("{root}/sub")}),
                ),
                ("mcp__files__read_text_file".into(), json!({"path": file})),
            ]),
            Turn::Text("done".into()),
        ])
        .await;
        let agent = Agent::new(
            pool.pool.clone(),
            openai_provider(&fake, 0),
            AgentOptions {
                approval_policy: policy,
                ..Default::default()
            },
        );
        let asked = Arc::new(Mutex::new(Vec::new()));
        let seen = asked.clone();
        let options = RunOptions {
            approve: Some(Arc::new(move |req: mcpmux::agent::ApprovalRequest| {
                seen.lock().unwrap().push(req);
                Box::pin(async { Approval::AllowOnce })
            })),
            ..Default::default()
        };
        agent.run("edit the note", options).await.unwrap();
        let mut asked = asked.lock().unwrap().clone();
        asked.sort_by(|a, b| b.tool_id.cmp(&a.tool_id));
        let got: Vec<(String, String)> = asked
            .iter()
            .map(|r| (r.tool_id.replace("mcp__files__", ""), r.reason.clone()))
            .collect();
        let want: Vec<(String, String)> = asked_for
            .iter()
            .map(|(t, r)| (t.to_string(), r.to_string()))
            .collect();
        assert_eq!(got, want, "{policy:?}");
        let write = &asked[0];
        assert_eq!(write.title.as_deref(), Some("Write File"), "{write:?}");
        assert_eq!(write.annotations.as_ref().unwrap()["destructiveHint"], true);
        assert!(write.trusted && write.server_name == "files");
        assert_eq!(write.arguments["content"], "bye");
        let json = serde_json::to_value(write).unwrap();
        assert_eq!(json["reason"], write.reason.as_str());
        assert_eq!(json["annotations"]["readOnlyHint"], false);
        pool.close().await;
    }
}
