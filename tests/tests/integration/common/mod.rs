//! Shared by the integration tests: opening pools on temp configs and adding servers.
#![allow(dead_code)]

use std::time::Duration;

use mcpmux::{Event, EventReceiver, Pool, PoolOptions, ServerConfig, ServerInput, ServerRecord};

pub struct TestPool {
    pub pool: Pool,
    pub dir: tempfile::TempDir,
}

impl std::ops::Deref for TestPool {
    type Target = Pool;
    fn deref(&self) -> &Pool {
        &self.pool
    }
}

pub fn options() -> PoolOptions {
    PoolOptions {
        connect_on_add: false,
        health_check_interval_ms: 0,
        connect_timeout_ms: 20_000,
        request_timeout_ms: 20_000,
        ..PoolOptions::default()
    }
}

pub async fn pool_with(options: PoolOptions) -> TestPool {
    let dir = tempfile::tempdir().unwrap();
    let pool = Pool::open(PoolOptions {
        config_path: Some(dir.path().join("servers.json")),
        ..options
    })
    .await
    .unwrap();
    TestPool { pool, dir }
}

pub async fn pool() -> TestPool {
    pool_with(options()).await
}

pub fn stdio(name: &str, command: &str, args: &[&str]) -> ServerInput {
    ServerInput {
        name: name.into(),
        config: ServerConfig {
            command: Some(command.into()),
            args: args.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// A server at `url` (`transport` `None`: as the pool finds out).
pub fn remote(name: &str, url: String, transport: Option<mcpmux::TransportType>) -> ServerInput {
    ServerInput {
        name: name.into(),
        transport,
        config: ServerConfig {
            url: Some(url),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The test server (`mcpmux-test-server`) over stdio, with extra arguments.
pub fn test_server(name: &str, args: &[&str]) -> ServerInput {
    let bin = env!("CARGO_BIN_EXE_mcpmux-test-server");
    stdio(name, bin, args)
}

pub async fn add_test_server(pool: &Pool, name: &str, args: &[&str]) -> ServerRecord {
    pool.add_server(test_server(name, args)).await.unwrap()
}

/// Text of the first content block of a tool result.
pub fn text(result: &mcpmux::model::CallToolResult) -> String {
    let v = serde_json::to_value(&result.content[0]).unwrap();
    v["text"].as_str().unwrap_or_default().to_string()
}

/// Waits for an event matching `f`, up to `timeout`.
pub async fn wait_event(
    rx: &mut EventReceiver,
    timeout: Duration,
    mut f: impl FnMut(&Event) -> bool,
) -> Option<Event> {
    tokio::time::timeout(timeout, async {
        while let Some(e) = rx.recv().await {
            if f(&e) {
                return Some(e);
            }
        }
        None
    })
    .await
    .ok()
    .flatten()
}

/// Every event already received.
pub fn drain(rx: &mut EventReceiver) -> Vec<Event> {
    std::iter::from_fn(|| rx.try_recv()).collect()
}

pub async fn pid_of(pool: &Pool, tool_id: &str) -> u32 {
    let r = pool
        .call_tool(tool_id, serde_json::json!({}), Default::default())
        .await
        .unwrap();
    text(&r).trim().parse().unwrap()
}

/// Kills a server with `kill` once `call` (a long call of one of its tools) has been under way
/// for `after`: the call must fail with a connection error within `bound` of the kill.
pub async fn fails_fast_when_killed<T: std::fmt::Debug>(
    call: tokio::task::JoinHandle<mcpmux::Result<T>>,
    after: Duration,
    kill: impl FnOnce(),
    bound: Duration,
    name: &str,
) -> mcpmux::Error {
    tokio::time::sleep(after).await;
    let killed = std::time::Instant::now();
    kill();
    let err = call.await.unwrap().unwrap_err();
    assert!(
        killed.elapsed() < bound,
        "{name}: failed {:?} after the kill",
        killed.elapsed()
    );
    assert_eq!(err.kind(), mcpmux::ErrorKind::Connection, "{name}: {err}");
    err
}

/// Kills a stdio server's process (its pid from the tool `pid_tool`) and waits until the pool
/// noticed and reconnected; returns the killed pid.
pub async fn kill_and_wait_for_reconnect(
    pool: &Pool,
    events: &mut EventReceiver,
    pid_tool: &str,
) -> u32 {
    let pid = pid_of(pool, pid_tool).await;
    // SAFETY: kills the test's own child process.
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
    let lost = wait_event(events, Duration::from_secs(5), |e| {
        matches!(
            e,
            Event::ConnectionState {
                phase: mcpmux::ConnectionPhase::Lost,
                ..
            }
        )
    })
    .await;
    let Some(Event::ConnectionState { error, .. }) = lost else {
        panic!("no lost event after killing {pid}");
    };
    // Killed, the server says so (its exit comes from the OS, whatever the transport saw).
    let error = error.unwrap_or_default();
    assert!(
        error.contains("the server exited (signal: 9 (SIGKILL))"),
        "{error}"
    );
    let back = wait_event(events, Duration::from_secs(10), |e| {
        matches!(e, Event::ServerConnected { .. })
    })
    .await;
    assert!(back.is_some(), "did not reconnect after killing {pid}");
    pid
}

/// An OpenAI-compatible provider talking to the fake model service (no key, no retries
/// unless asked).
pub fn openai_provider(
    fake: &mcpmux_tests::fake_llm::FakeOpenAi,
    max_retries: u32,
) -> std::sync::Arc<mcpmux::agent::OpenAiProvider> {
    let config = mcpmux::agent::OpenAiConfig {
        base_url: fake.base_url.clone(),
        api_key: Some("sk-test".into()),
        model: "gpt-test".into(),
        headers: Default::default(),
        max_retries,
    };
    std::sync::Arc::new(mcpmux::agent::OpenAiProvider::new(config).unwrap())
}

/// Runs `agent` on `prompt` and gives the result with the text streamed to its token
/// callback.
pub async fn run_streamed(
    agent: &mcpmux::agent::Agent,
    prompt: &str,
) -> (mcpmux::agent::AgentResult, String) {
    let streamed = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let sink = streamed.clone();
    let options = mcpmux::agent::RunOptions {
        on_token: Some(std::sync::Arc::new(move |t| {
            sink.lock().unwrap().push_str(t)
        })),
        ..Default::default()
    };
    let result = agent.run(prompt, options).await.unwrap();
    let text = streamed.lock().unwrap().clone();
    (result, text)
}

/// The fake model service playing `turns`, and an agent with default options over `pool`
/// asking it (keep the service alive while the agent runs).
pub async fn agent_on(
    pool: &Pool,
    turns: Vec<mcpmux_tests::fake_llm::Turn>,
) -> (mcpmux_tests::fake_llm::FakeOpenAi, mcpmux::agent::Agent) {
    let fake = mcpmux_tests::fake_llm::FakeOpenAi::start(turns).await;
    let provider = openai_provider(&fake, 0);
    let agent = mcpmux::agent::Agent::new(pool.clone(), provider, Default::default());
    (fake, agent)
}

/// Calls `tool` with `arguments` and the default call options; the call must succeed.
pub async fn call_ok(
    pool: &Pool,
    tool: &str,
    arguments: serde_json::Value,
) -> mcpmux::model::CallToolResult {
    pool.call_tool(tool, arguments, Default::default())
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

/// Calls `tool` with `options` plus a progress callback; the call must succeed. Gives the
/// result and every progress notification it got, in order.
pub async fn call_with_progress(
    pool: &Pool,
    tool: &str,
    arguments: serde_json::Value,
    options: mcpmux::CallOptions,
) -> (mcpmux::model::CallToolResult, Vec<mcpmux::Progress>) {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let options = mcpmux::CallOptions {
        on_progress: Some(std::sync::Arc::new(move |p| sink.lock().unwrap().push(p))),
        ..options
    };
    let result = pool.call_tool(tool, arguments, options).await;
    let result = result.unwrap_or_else(|e| panic!("{tool}: {e}"));
    let seen = seen.lock().unwrap().clone();
    (result, seen)
}

/// Marks a server trusted (agents call its tools without asking).
pub async fn trust(pool: &Pool, name: &str) {
    let patch = mcpmux::ServerPatch {
        is_trusted: Some(true),
        ..Default::default()
    };
    pool.update_server(name, patch).await.unwrap();
}

/// Enables or disables a server.
pub async fn set_active(pool: &Pool, name: &str, active: bool) {
    let patch = mcpmux::ServerPatch {
        is_active: Some(active),
        ..Default::default()
    };
    pool.update_server(name, patch).await.unwrap();
}

/// The text of the first message of a prompt (no arguments); the request must succeed.
pub async fn prompt_text(pool: &Pool, server: &str, name: &str) -> String {
    let prompt = pool.get_prompt(server, name, None).await.unwrap();
    let first = serde_json::to_value(&prompt.messages[0]).unwrap();
    first["content"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The text of the first contents of a resource; the read must succeed.
pub async fn resource_text(pool: &Pool, server: &str, uri: &str) -> String {
    let read = pool.read_resource(server, uri).await.unwrap();
    let first = serde_json::to_value(&read.contents[0]).unwrap();
    first["text"].as_str().unwrap_or_default().to_string()
}
