//! The agent's own cost per turn (`scale agent`): an agent over every tool of the pool, with
//! discovery on (mcpmux's default), asks a model that answers at once, and each run is one
//! turn: building the request from the known tools, compressing the old results of a long
//! history, writing the body, reading the streamed reply. The model is a server on 127.0.0.1
//! speaking OpenAI's streamed Chat Completions, so the turn includes one loopback HTTP
//! exchange; `model_rtt_p50_us` is that exchange alone (the same request bytes on a raw
//! socket), the floor under `turn_p50_us`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcpmux::agent::{Agent, AgentOptions, Block, Message, OpenAiConfig, OpenAiProvider, Role};
use mcpmux::agent::{RunOptions, RunParams};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use crate::{fail, quantile};

/// Turns run before the measured ones.
const WARM_UP: usize = 20;
/// Earlier tool calls in the history, each with a result long enough to be compressed.
const OLD_CALLS: usize = 12;

/// Measures `turns` turns of `pool`'s agent and adds the figures to `line`.
pub(crate) async fn measure(pool: &mcpmux::Pool, turns: usize, line: &mut Value) {
    let model = FakeModel::start().await;
    let provider = OpenAiProvider::new(OpenAiConfig {
        base_url: format!("http://{}/v1", model.addr),
        api_key: Some("bench".into()),
        model: "bench-model".into(),
        headers: Default::default(),
        max_retries: 0,
    })
    .unwrap_or_else(|e| fail(&format!("provider: {e}")));
    let agent = Agent::new(pool.clone(), Arc::new(provider), AgentOptions::default());
    let options = RunOptions {
        params: RunParams {
            history: history(),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut samples = Vec::with_capacity(turns);
    for i in 0..turns + WARM_UP {
        let started = Instant::now();
        let result = agent
            .run("What is the weather in Paris?", options.clone())
            .await
            .unwrap_or_else(|e| fail(&format!("agent run: {e}")));
        let took = started.elapsed();
        if result.iterations != 1 || result.text != ANSWER {
            fail(&format!(
                "the run took {} turns and answered {:?}",
                result.iterations, result.text
            ));
        }
        if i >= WARM_UP {
            samples.push(took);
        }
    }
    samples.sort();
    let request = model.last_request();
    let tools = request["tools"].as_array().map_or(0, Vec::len);
    if tools == 0 || request["messages"].as_array().map_or(0, Vec::len) < OLD_CALLS {
        fail("the model's request has no tools or lost the history");
    }
    line["agent_tools_offered"] = json!(tools);
    line["agent_request_kb"] = json!(model.last_request_len() as f64 / 1024.0);
    line["turn_p50_us"] = json!(quantile(&samples, 0.5).as_secs_f64() * 1e6);
    line["turn_p99_us"] = json!(quantile(&samples, 0.99).as_secs_f64() * 1e6);
    line["model_rtt_p50_us"] = json!(model.round_trip_p50().await.as_secs_f64() * 1e6);
}

/// A conversation's earlier turns: the user's question, then the model's calls to a tool, each
/// answered by a result of 6,000 characters (past `compress_over_chars`).
fn history() -> Vec<Message> {
    let mut out = vec![Message::user("Plan a trip to Paris.")];
    for i in 0..OLD_CALLS {
        let id = format!("call-{i}");
        out.push(Message {
            role: Role::Assistant,
            content: vec![Block::ToolUse {
                id: id.clone(),
                name: "search_tools".into(),
                input: json!({"query": format!("weather forecast day {i}")}),
            }],
        });
        out.push(Message {
            role: Role::User,
            content: vec![Block::ToolResult {
                tool_use_id: id,
                content: format!("result {i}: ") + &"sunny with a light breeze. ".repeat(230),
                is_error: false,
                images: Vec::new(),
            }],
        });
    }
    out.push(Message {
        role: Role::Assistant,
        content: vec![Block::Text {
            text: "Here is the plan.".into(),
        }],
    });
    out
}

const ANSWER: &str = "It is sunny in Paris.";

/// The streamed answer OpenAI sends for a reply without tool calls, with usage.
fn answer_body() -> String {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
               "model": "bench-model",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let usage = json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
        "model": "bench-model", "choices": [],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 6, "total_tokens": 1006}});
    [
        chunk(json!({"role": "assistant", "content": ANSWER}), Value::Null),
        chunk(json!({}), json!("stop")),
        usage,
    ]
    .iter()
    .map(|c| format!("data: {c}\n\n"))
    .chain(["data: [DONE]\n\n".to_string()])
    .collect()
}

/// A model service on 127.0.0.1 that answers every request at once (HTTP/1.1, keep-alive).
struct FakeModel {
    addr: std::net::SocketAddr,
    last: Arc<std::sync::Mutex<Vec<u8>>>,
}

impl FakeModel {
    async fn start() -> FakeModel {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| fail(&format!("bind: {e}")));
        let addr = listener.local_addr().unwrap();
        let last = Arc::new(std::sync::Mutex::new(Vec::new()));
        let response = Arc::new(http_response(&answer_body()));
        let kept = last.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(serve(socket, response.clone(), kept.clone()));
            }
        });
        FakeModel { addr, last }
    }

    fn last_request(&self) -> Value {
        serde_json::from_slice(&self.last.lock().unwrap()).unwrap_or(Value::Null)
    }

    fn last_request_len(&self) -> usize {
        self.last.lock().unwrap().len()
    }

    /// One exchange of the last request's bytes on a kept-alive raw socket, p50 of 200.
    async fn round_trip_p50(&self) -> Duration {
        let body = self.last.lock().unwrap().clone();
        let mut request = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
             content-length: {}\r\n\r\n",
            self.addr,
            body.len()
        )
        .into_bytes();
        request.extend_from_slice(&body);
        let socket = TcpStream::connect(self.addr).await.unwrap();
        socket.set_nodelay(true).unwrap();
        let mut socket = BufReader::new(socket);
        let mut samples = Vec::new();
        for _ in 0..220 {
            let started = Instant::now();
            socket.get_mut().write_all(&request).await.unwrap();
            let length = read_head(&mut socket)
                .await
                .unwrap_or_else(|| fail("the fake model closed the connection"));
            let mut answer = vec![0; length];
            socket.read_exact(&mut answer).await.unwrap();
            samples.push(started.elapsed());
        }
        samples.sort();
        quantile(&samples[20..], 0.5)
    }
}

fn http_response(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Answers each request of one connection, keeping the last request's body.
async fn serve(socket: TcpStream, response: Arc<Vec<u8>>, last: Arc<std::sync::Mutex<Vec<u8>>>) {
    let _ = socket.set_nodelay(true);
    let mut socket = BufReader::new(socket);
    while let Some(length) = read_head(&mut socket).await {
        let mut body = vec![0; length];
        if socket.read_exact(&mut body).await.is_err() {
            return;
        }
        *last.lock().unwrap() = body;
        if socket.get_mut().write_all(&response).await.is_err() {
            return;
        }
    }
}

/// Reads an HTTP/1.1 head (request or response) and returns its `content-length`; `None` at
/// the end of the stream.
async fn read_head(socket: &mut BufReader<TcpStream>) -> Option<usize> {
    let mut length = 0;
    let mut line = String::new();
    loop {
        line.clear();
        if socket.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let header = line.trim_end();
        if header.is_empty() {
            return Some(length);
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
}
