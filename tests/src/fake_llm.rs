//! A stand-in for an OpenAI-compatible Chat Completions service on 127.0.0.1: no LLM service
//! can be reached from here, so tests script the model's turns and this server plays them
//! back in the exact wire format, streamed as SSE chunks with `tool_calls` deltas.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// Which service's wire format the fake speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `POST /v1/chat/completions`, SSE chunks with `tool_calls` deltas.
    OpenAi,
    /// `POST /v1/messages`, the Messages event stream.
    Anthropic,
    /// `POST /api/chat`, NDJSON.
    Ollama,
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Turn {
    /// The model writes this text.
    Text(String),
    /// The model calls tools: `(name, arguments)`.
    Tools(Vec<(String, Value)>),
    /// The service fails with this HTTP status.
    Status(u16),
    /// This body, sent as it is with the service's content type (a malformed reply).
    Raw(String),
    /// The model starts writing this text, then the stream stalls and never ends.
    Stall(String),
    /// The model calls the tool named `name` that the last tool result of the conversation
    /// lists (by the `id` given there, as a model reading a search answer would), with these
    /// arguments; when no tool result lists it, the model says so in text instead.
    CallFound { name: String, arguments: Value },
}

impl Turn {
    /// What a [`Turn::CallFound`] amounts to for this request; other turns are as they are.
    fn resolve(self, request: &Value) -> Turn {
        let Turn::CallFound { name, arguments } = self else {
            return self;
        };
        let last = request["messages"]
            .as_array()
            .and_then(|m| m.iter().rev().find(|m| m["role"] != "assistant"))
            .cloned()
            .unwrap_or(Value::Null);
        match found_id(&last, &name) {
            Some(id) => Turn::Tools(vec![(id, arguments)]),
            None => Turn::Text(format!("No tool named {name} was found.")),
        }
    }
}

/// The `id` of an entry named `name` in any JSON text inside `message` (tool results carry
/// the discovery tools' answers as JSON text, whatever the wire format).
fn found_id(message: &Value, name: &str) -> Option<String> {
    fn walk(v: &Value, name: &str) -> Option<String> {
        match v {
            Value::Object(map) => {
                if map.get("name").and_then(Value::as_str) == Some(name)
                    && let Some(id) = map.get("id").and_then(Value::as_str)
                {
                    return Some(id.to_string());
                }
                map.values().find_map(|v| walk(v, name))
            }
            Value::Array(items) => items.iter().find_map(|v| walk(v, name)),
            Value::String(text) => serde_json::from_str::<Value>(text)
                .ok()
                .filter(|v| v.is_object() || v.is_array())
                .and_then(|v| walk(&v, name)),
            _ => None,
        }
    }
    walk(message, name)
}

/// Turns as JSON, for the `mcpmux-fake-llm` program: `{"text": ...}`, `{"tools": [[name,
/// args], ...]}`, `{"status": 503}`, `{"raw": ...}`, `{"stall": ...}`, or `{"callFound": name,
/// "arguments": {...}}`.
pub fn turns_from_json(value: &Value) -> Result<Vec<Turn>, String> {
    let items = value.as_array().ok_or("the turns must be a JSON array")?;
    items
        .iter()
        .map(|t| {
            let text = |k: &str| t[k].as_str().map(str::to_string);
            if let Some(s) = text("text") {
                Ok(Turn::Text(s))
            } else if let Some(calls) = t["tools"].as_array() {
                calls
                    .iter()
                    .map(|c| match (c[0].as_str(), c.get(1)) {
                        (Some(n), Some(a)) => Ok((n.to_string(), a.clone())),
                        _ => Err(format!("a tool call must be [name, arguments]: {c}")),
                    })
                    .collect::<Result<_, _>>()
                    .map(Turn::Tools)
            } else if let Some(code) = t["status"].as_u64() {
                Ok(Turn::Status(code as u16))
            } else if let Some(s) = text("raw") {
                Ok(Turn::Raw(s))
            } else if let Some(s) = text("stall") {
                Ok(Turn::Stall(s))
            } else if let Some(name) = text("callFound") {
                let arguments = t.get("arguments").cloned().unwrap_or_else(|| json!({}));
                Ok(Turn::CallFound { name, arguments })
            } else {
                Err(format!("not a turn: {t}"))
            }
        })
        .collect()
}

/// The running fake service.
pub struct FakeOpenAi {
    pub base_url: String,
    turns: Arc<Mutex<VecDeque<Turn>>>,
    requests: Arc<Mutex<Vec<Value>>>,
    /// The `authorization` or `x-api-key` header of each request.
    credentials: Arc<Mutex<Vec<Option<String>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeOpenAi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The SSE body of a turn, chunked the way OpenAI streams: text in pieces, each tool call's
/// arguments split across deltas, then the finish reason and usage.
fn sse(turn: &Turn, n: usize) -> String {
    let mut chunks = Vec::new();
    let finish = match turn {
        Turn::Text(text) => {
            let words: Vec<&str> = text.split_inclusive(' ').collect();
            for w in words {
                chunks.push(json!({"choices": [{"index": 0, "delta": {"content": w}}]}));
            }
            "stop"
        }
        Turn::Tools(calls) => {
            for (i, (name, args)) in calls.iter().enumerate() {
                let args = args.to_string();
                let (a, b) = args.split_at(args.len() / 2);
                chunks.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                    {"index": i, "id": format!("call_{n}_{i}"), "type": "function", "function": {"name": name, "arguments": a}}
                ]}}]}));
                chunks.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                    {"index": i, "function": {"arguments": b}}
                ]}}]}));
            }
            "tool_calls"
        }
        Turn::Status(_) | Turn::Raw(_) | Turn::Stall(_) | Turn::CallFound { .. } => {
            unreachable!("played as they are, or resolved first")
        }
    };
    chunks.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}));
    chunks.push(json!({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 10}}));
    let mut out: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

/// Anthropic's event stream for a turn.
fn anthropic_sse(turn: &Turn, n: usize) -> String {
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": format!("msg_{n}"), "role": "assistant", "usage": {"input_tokens": 100, "output_tokens": 0}}}),
    ];
    let stop = match turn {
        Turn::Text(text) => {
            events.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}));
            for w in text.split_inclusive(' ') {
                events.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": w}}));
            }
            events.push(json!({"type": "content_block_stop", "index": 0}));
            "end_turn"
        }
        Turn::Tools(calls) => {
            for (i, (name, args)) in calls.iter().enumerate() {
                let args = args.to_string();
                let (a, b) = args.split_at(args.len() / 2);
                events.push(json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": format!("toolu_{n}_{i}"), "name": name, "input": {}}}));
                for part in [a, b] {
                    events.push(json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": part}}));
                }
                events.push(json!({"type": "content_block_stop", "index": i}));
            }
            "tool_use"
        }
        Turn::Status(_) | Turn::Raw(_) | Turn::Stall(_) | Turn::CallFound { .. } => {
            unreachable!("played as they are, or resolved first")
        }
    };
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 10}}));
    events.push(json!({"type": "message_stop"}));
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

/// Ollama's NDJSON lines for a turn.
fn ollama_ndjson(turn: &Turn) -> String {
    let mut lines = Vec::new();
    match turn {
        Turn::Text(text) => {
            for w in text.split_inclusive(' ') {
                lines.push(json!({"model": "m", "message": {"role": "assistant", "content": w}, "done": false}));
            }
        }
        Turn::Tools(calls) => {
            let calls: Vec<Value> = calls
                .iter()
                .map(|(name, args)| json!({"function": {"name": name, "arguments": args}}))
                .collect();
            lines.push(json!({"model": "m", "message": {"role": "assistant", "content": "", "tool_calls": calls}, "done": false}));
        }
        Turn::Status(_) | Turn::Raw(_) | Turn::Stall(_) | Turn::CallFound { .. } => {
            unreachable!("played as they are, or resolved first")
        }
    }
    lines.push(json!({"model": "m", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 100, "eval_count": 10}));
    lines.iter().map(|l| format!("{l}\n")).collect()
}

impl FakeOpenAi {
    /// Starts on a free port of 127.0.0.1 with the turns to play, in order.
    pub async fn start(turns: Vec<Turn>) -> FakeOpenAi {
        Self::start_as(Dialect::OpenAi, turns).await
    }

    /// Like [`FakeOpenAi::start`], speaking another service's format.
    pub async fn start_as(dialect: Dialect, turns: Vec<Turn>) -> FakeOpenAi {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().unwrap();
        let base_url = match dialect {
            Dialect::Ollama => format!("http://{addr}"),
            _ => format!("http://{addr}/v1"),
        };
        let (path, content_type) = match dialect {
            Dialect::OpenAi => ("/v1/chat/completions", "text/event-stream"),
            Dialect::Anthropic => ("/v1/messages", "text/event-stream"),
            Dialect::Ollama => ("/api/chat", "application/x-ndjson"),
        };
        let turns = Arc::new(Mutex::new(VecDeque::from(turns)));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let credentials = Arc::new(Mutex::new(Vec::new()));
        let (t, r, c) = (turns.clone(), requests.clone(), credentials.clone());
        let task = tokio::spawn(async move {
            let served = Arc::new(Mutex::new(0usize));
            while let Ok((stream, _)) = listener.accept().await {
                let (t, r, c, served) = (t.clone(), r.clone(), c.clone(), served.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                        let (t, r, c, served) = (t.clone(), r.clone(), c.clone(), served.clone());
                        async move {
                            let ok_path = req.uri().path() == path;
                            let credential = ["authorization", "x-api-key"]
                                .iter()
                                .find_map(|h| req.headers().get(*h))
                                .and_then(|v| v.to_str().ok())
                                .map(str::to_string);
                            let body = req
                                .into_body()
                                .collect()
                                .await
                                .map(|b| b.to_bytes())
                                .unwrap_or_default();
                            if !ok_path {
                                return Ok::<Response<UnsyncBoxBody<Bytes, Infallible>>, Infallible>(
                                    Response::builder()
                                        .status(404)
                                        .body(Full::new(Bytes::from("no such path")).boxed_unsync())
                                        .unwrap(),
                                );
                            }
                            let request: Value =
                                serde_json::from_slice(&body).unwrap_or(Value::Null);
                            let turn = t.lock().unwrap().pop_front().map(|t| t.resolve(&request));
                            r.lock().unwrap().push(request);
                            c.lock().unwrap().push(credential);
                            let n = {
                                let mut s = served.lock().unwrap();
                                *s += 1;
                                *s
                            };
                            let full =
                                |b: Bytes| Full::new(b).map_err(|e| match e {}).boxed_unsync();
                            Ok(match turn {
                                None => Response::builder()
                                    .status(500)
                                    .body(full(Bytes::from("script exhausted")))
                                    .unwrap(),
                                Some(Turn::Status(code)) => Response::builder()
                                    .status(code)
                                    .header("retry-after", "0")
                                    .body(full(Bytes::from(format!(
                                        "{{\"error\": {{\"message\": \"status {code}\"}}}}"
                                    ))))
                                    .unwrap(),
                                Some(Turn::Raw(body)) => Response::builder()
                                    .header("content-type", content_type)
                                    .body(full(Bytes::from(body)))
                                    .unwrap(),
                                Some(Turn::Stall(text)) => {
                                    let first = match dialect {
                                        Dialect::OpenAi => format!(
                                            "data: {}\n\n",
                                            json!({"choices": [{"index": 0, "delta": {"content": text}}]})
                                        ),
                                        Dialect::Anthropic => format!(
                                            "event: message_start\ndata: {}\n\nevent: content_block_start\ndata: {}\n\nevent: content_block_delta\ndata: {}\n\n",
                                            json!({"type": "message_start", "message": {"id": "msg", "role": "assistant", "usage": {"input_tokens": 1, "output_tokens": 0}}}),
                                            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                                            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})
                                        ),
                                        Dialect::Ollama => format!(
                                            "{}\n",
                                            json!({"model": "m", "message": {"role": "assistant", "content": text}, "done": false})
                                        ),
                                    };
                                    let frames = futures::stream::once(async move {
                                        Ok::<_, Infallible>(hyper::body::Frame::data(Bytes::from(
                                            first,
                                        )))
                                    })
                                    .chain(futures::stream::pending())
                                    .boxed();
                                    Response::builder()
                                        .header("content-type", content_type)
                                        .body(BodyExt::boxed_unsync(StreamBody::new(frames)))
                                        .unwrap()
                                }
                                Some(turn) => {
                                    let body = match dialect {
                                        Dialect::OpenAi => sse(&turn, n),
                                        Dialect::Anthropic => anthropic_sse(&turn, n),
                                        Dialect::Ollama => ollama_ndjson(&turn),
                                    };
                                    Response::builder()
                                        .header("content-type", content_type)
                                        .body(full(Bytes::from(body)))
                                        .unwrap()
                                }
                            })
                        }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        FakeOpenAi {
            base_url,
            turns,
            requests,
            credentials,
            task,
        }
    }

    /// The JSON bodies received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }

    /// The credential header each request carried, in order.
    pub fn credentials(&self) -> Vec<Option<String>> {
        self.credentials.lock().unwrap().clone()
    }

    /// Turns not played yet.
    pub fn remaining(&self) -> usize {
        self.turns.lock().unwrap().len()
    }
}
