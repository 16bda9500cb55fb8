//! The agent with what the host brings: attachments, images, sampling answered by the
//! agent's provider, a provider implemented by the host, text tool calls, per-conversation
//! server filters and the agent's events. Real MCP servers; the model is the scripted fake
//! service on 127.0.0.1 or a host closure.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::*;
use mcpmux::agent::{
    Agent, AgentOptions, Attachment, HostChat, HostProvider, RunOptions, RunParams, Stop,
    sampling_handler,
};
use mcpmux::{Event, ServerFilter};
use mcpmux_tests::fake_llm::{FakeOpenAi, Turn};
use mcpmux_tests::{everything_command, require_or_skip};
use serde_json::{Value, json};

/// The last message of a request's transcript.
fn last(request: &Value) -> Value {
    request["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone()
}

/// A run's options with one resource attached.
fn attaching(server: &str, uri: &str) -> RunOptions {
    RunOptions {
        params: RunParams {
            attachments: vec![Attachment {
                server: server.into(),
                uri: uri.into(),
            }],
            ..Default::default()
        },
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attachments_images_and_sampling_through_the_agents_provider() {
    let (node, args) = require_or_skip!(
        everything_command(),
        "@modelcontextprotocol/server-everything"
    );
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.push("stdio");
    let pool = pool().await;
    let fake = FakeOpenAi::start(vec![
        Turn::Tools(vec![(
            "everything_mcp_search_tools".into(),
            json!({"query": "tiny image"}),
        )]),
        Turn::Tools(vec![("mcp__everything__get-tiny-image".into(), json!({}))]),
        Turn::Tools(vec![(
            "mcp__everything__trigger-sampling-request".into(),
            json!({"prompt": "name a colour", "maxTokens": 20}),
        )]),
        // The server's sampling request, answered by the same model.
        Turn::Text("teal".into()),
        Turn::Text("All done.".into()),
    ])
    .await;
    let provider = openai_provider(&fake, 0);
    // Sampling goes to the agent's provider; set before connecting so the server sees the
    // capability.
    pool.set_sampling_handler(Some(sampling_handler(provider.clone(), None)));
    pool.add_server(stdio("everything", node.to_str().unwrap(), &args))
        .await
        .unwrap();
    trust(&pool, "everything").await;
    pool.connect("everything").await.unwrap();
    let found = mcpmux_tests::wait_until(Duration::from_secs(10), || {
        pool.known_tools()
            .iter()
            .any(|t| t.name == "trigger-sampling-request")
    });
    assert!(found, "server-everything never listed its sampling tool");

    let mut events = pool.events();
    let agent = Agent::new(pool.pool.clone(), provider, AgentOptions::default());
    let result = agent
        .run(
            "Describe the image and the document.",
            attaching("everything", "demo://resource/dynamic/text/1"),
        )
        .await
        .unwrap();
    assert_eq!(result.stop, Stop::Finished, "{result:?}");
    assert_eq!(result.text, "All done.");

    let mut requests = fake.requests();
    assert_eq!(requests.len(), 5, "{requests:#?}");
    // The attachment's text went with the prompt.
    let prompt = requests[0]["messages"][1]["content"].as_str().unwrap();
    assert!(
        prompt.contains("[attached resource demo://resource/dynamic/text/1]"),
        "{prompt}"
    );
    // Discovery first: the server's own tools are offered only once it is used.
    let offered = |r: &Value| r["tools"].to_string();
    assert!(offered(&requests[0]).contains("everything_mcp_search_tools"));
    assert!(!offered(&requests[0]).contains("mcp__everything__"));
    let hits = last(&requests[1]);
    assert!(
        hits["content"]
            .as_str()
            .unwrap()
            .contains("mcp__everything__get-tiny-image"),
        "{hits}"
    );
    assert!(offered(&requests[2]).contains("mcp__everything__get-tiny-image"));
    requests.remove(0);
    // The tool's image followed its tool message as an image part.
    let image = last(&requests[1]);
    assert_eq!(image["role"], "user");
    let url = image["content"][0]["image_url"]["url"].as_str().unwrap();
    assert!(url.starts_with("data:image/png;base64,"), "{url}");
    // The server's sampling request reached the model as a plain chat without tools.
    assert!(
        requests[2]["messages"]
            .to_string()
            .contains("name a colour"),
        "{}",
        requests[2]
    );
    assert!(requests[2].get("tools").is_none());
    // ... and the model's answer came back through the tool's result.
    let sampled = last(&requests[3]);
    assert_eq!(sampled["role"], "tool");
    assert!(
        sampled["content"].as_str().unwrap().contains("teal"),
        "{sampled}"
    );

    // Every turn and tool call was reported, under one run id.
    let seen = drain(&mut events);
    let names: Vec<&str> = seen
        .iter()
        .map(Event::name)
        .filter(|n| n.starts_with("agent:"))
        .collect();
    assert_eq!(
        names,
        [
            "agent:turn",
            "agent:tool_use",
            "agent:tool_result",
            "agent:turn",
            "agent:tool_use",
            "agent:tool_result",
            "agent:turn",
            "agent:tool_use",
            "agent:tool_result",
            "agent:turn"
        ]
    );
    let turn = seen
        .iter()
        .find(|e| matches!(e, Event::AgentTurn { .. }))
        .unwrap();
    let v = serde_json::to_value(turn).unwrap();
    assert_eq!(v["type"], "agent:turn");
    assert_eq!(v["toolUses"], 1);
    assert_eq!(v["inputTokens"], 100);

    // A second agent on the same pool attaches the same resource.
    let fake_again = FakeOpenAi::start(vec![Turn::Text("again".into())]).await;
    let agent = Agent::new(
        pool.pool.clone(),
        openai_provider(&fake_again, 0),
        AgentOptions::default(),
    );
    let r = agent
        .run(
            "again",
            attaching("everything", "demo://resource/dynamic/text/1"),
        )
        .await
        .unwrap();
    assert_eq!(r.text, "again");
    assert!(
        fake_again.requests()[0]["messages"]
            .to_string()
            .contains("[attached resource demo://resource/dynamic/text/1]")
    );
    // An attachment that does not exist fails the run with the server's error.
    let e = agent
        .run("x", attaching("nope", "demo://x"))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("nope"), "{e}");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_provider_writing_text_tool_calls_drives_real_tools() {
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    trust(&pool, "t").await;
    pool.list_tools(None).await.unwrap();
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let log = seen.clone();
    // A model without native tool calling: it writes a Hermes-style call, then answers
    // with what the tool returned.
    let chat = Arc::new(move |call: HostChat| {
        let log = log.clone();
        Box::pin(async move {
            let request = serde_json::to_value(&call.request).unwrap();
            log.lock().unwrap().push(request.clone());
            let messages = request["messages"].as_array().unwrap();
            let last = messages.last().unwrap();
            let answer = match last["content"][0]["type"].as_str() {
                Some("tool_result") => {
                    let text = format!("The tool said {}.", last["content"][0]["content"]);
                    if let Some(t) = &call.on_token {
                        t(&text);
                    }
                    json!({"content": [{"type": "text", "text": text}], "stopReason": "end_turn"})
                }
                _ => json!({
                    "content": [{"type": "text", "text": "Calling.\n<tool_call>{\"name\": \"mcp__t__echo\", \"arguments\": {\"text\": \"hi\"}}</tool_call>"}],
                    "usage": {"inputTokens": 7, "outputTokens": 3}
                }),
            };
            Ok(answer)
        }) as mcpmux::host::BoxFuture<_>
    });
    let agent = Agent::new(
        pool.pool.clone(),
        Arc::new(HostProvider::new("host", "my-model", chat)),
        AgentOptions::default(),
    );
    let (result, streamed) = run_streamed(&agent, "say hi").await;
    assert_eq!(result.stop, Stop::Finished);
    assert_eq!(result.text, "The tool said \"hi\".");
    assert_eq!(streamed, result.text);
    assert_eq!(result.usage.input_tokens, 7);
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests[0]["model"], "my-model");
    assert!(requests[0]["system"].as_str().unwrap().contains("STEP 1"));
    // The call became a tool_use block; the prose before it stayed text.
    let assistant = &requests[1]["messages"][1];
    assert_eq!(assistant["content"][0]["text"], "Calling.");
    assert_eq!(assistant["content"][1]["type"], "tool_use");
    assert_eq!(assistant["content"][1]["name"], "mcp__t__echo");

    // Switching the model applies to the next request.
    agent.set_model("other-model");
    agent.run("again", RunOptions::default()).await.unwrap();
    assert_eq!(seen.lock().unwrap().last().unwrap()["model"], "other-model");

    // A host answer that is not a response is a clear error, not a panic.
    let bad = Agent::new(
        pool.pool.clone(),
        Arc::new(HostProvider::new(
            "host",
            "m",
            Arc::new(|_call: HostChat| {
                Box::pin(async { Ok(json!({"reply": "hi"})) }) as mcpmux::host::BoxFuture<_>
            }),
        )),
        AgentOptions::default(),
    );
    let e = bad.run("x", RunOptions::default()).await.unwrap_err();
    assert!(e.to_string().contains("invalid response"), "{e}");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_uses_only_the_servers_it_enables() {
    let pool = pool().await;
    for name in ["t", "u"] {
        add_test_server(&pool, name, &[]).await;
        trust(&pool, name).await;
    }
    pool.list_tools(None).await.unwrap();
    let (fake, agent) = agent_on(
        &pool,
        vec![
            Turn::Tools(vec![
                ("mcp__u__echo".into(), json!({"text": "from u"})),
                ("mcp__t__echo".into(), json!({"text": "from t"})),
                // A slip near both servers' tools is offered only the enabled one's.
                ("mcp__v__echo".into(), json!({"text": "from v"})),
            ]),
            Turn::Tools(vec![("search_tools".into(), json!({"query": "echo"}))]),
            Turn::Text("ok".into()),
        ],
    )
    .await;
    let result = agent
        .run(
            "echo",
            RunOptions {
                params: serde_json::from_value::<RunParams>(
                    json!({"servers": {"disabled": ["u"]}}),
                )
                .unwrap(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(result.text, "ok");
    let requests = fake.requests();
    let offered = requests[0]["tools"].to_string();
    assert!(offered.contains("t_mcp_search_tools"), "{offered}");
    assert!(!offered.contains("u_mcp_"), "{offered}");
    let results: Vec<&Value> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    let (u, t, v) = (results[0], results[1], results[2]);
    assert!(
        u["content"]
            .as_str()
            .unwrap()
            .contains("disabled for this conversation"),
        "{u}"
    );
    assert_eq!(t["content"], "from t");
    assert!(
        v["content"]
            .as_str()
            .unwrap()
            .ends_with("tool not found: mcp__v__echo (did you mean mcp__t__echo?)"),
        "{v}"
    );
    // Search answers only with the conversation's servers.
    let hits = last(&requests[2])["content"].as_str().unwrap().to_string();
    assert!(
        hits.contains("mcp__t__echo") && !hits.contains("mcp__u__"),
        "{hits}"
    );

    // Only `enabled` servers, by name; unknown keys are refused.
    let only = ServerFilter {
        enabled: Some(vec!["u".into()]),
        disabled: vec![],
    };
    assert!(only.allows("anything", "u") && !only.allows("t", "t"));
    assert!(serde_json::from_value::<RunParams>(json!({"servers": {"enable": ["u"]}})).is_err());
    pool.close().await;
}
