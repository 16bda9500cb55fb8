//! A stand-in for an OpenAI-compatible Chat Completions service on 127.0.0.1: no LLM service
//! can be reached from here, so tests script the model's turns and this server plays them
//! back in the exact wire format, streamed as SSE chunks with `tool_calls` deltas.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Turn {
    /// The model writes this text.
    Text(String),
    /// The model calls tools: `(name, arguments)`.
    Tools(Vec<(String, Value)>),
    /// The service fails with this HTTP status.
    Status(u16),
}

/// The running fake service.
pub struct FakeOpenAi {
    pub base_url: String,
    turns: Arc<Mutex<VecDeque<Turn>>>,
    requests: Arc<Mutex<Vec<Value>>>,
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
        Turn::Status(_) => unreachable!("statuses have no body"),
    };
    chunks.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}));
    chunks.push(json!({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 10}}));
    let mut out: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

impl FakeOpenAi {
    /// Starts on a free port of 127.0.0.1 with the turns to play, in order.
    pub async fn start(turns: Vec<Turn>) -> FakeOpenAi {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let turns = Arc::new(Mutex::new(VecDeque::from(turns)));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (t, r) = (turns.clone(), requests.clone());
        let task = tokio::spawn(async move {
            let served = Arc::new(Mutex::new(0usize));
            while let Ok((stream, _)) = listener.accept().await {
                let (t, r, served) = (t.clone(), r.clone(), served.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                        let (t, r, served) = (t.clone(), r.clone(), served.clone());
                        async move {
                            let ok_path = req.uri().path() == "/v1/chat/completions";
                            let body = req
                                .into_body()
                                .collect()
                                .await
                                .map(|b| b.to_bytes())
                                .unwrap_or_default();
                            if !ok_path {
                                return Ok::<_, Infallible>(
                                    Response::builder()
                                        .status(404)
                                        .body(Full::new(Bytes::from("no such path")))
                                        .unwrap(),
                                );
                            }
                            r.lock()
                                .unwrap()
                                .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                            let turn = t.lock().unwrap().pop_front();
                            let n = {
                                let mut s = served.lock().unwrap();
                                *s += 1;
                                *s
                            };
                            Ok(match turn {
                                None => Response::builder()
                                    .status(500)
                                    .body(Full::new(Bytes::from("script exhausted")))
                                    .unwrap(),
                                Some(Turn::Status(code)) => Response::builder()
                                    .status(code)
                                    .header("retry-after", "0")
                                    .body(Full::new(Bytes::from(format!(
                                        "{{\"error\": {{\"message\": \"status {code}\"}}}}"
                                    ))))
                                    .unwrap(),
                                Some(turn) => Response::builder()
                                    .header("content-type", "text/event-stream")
                                    .body(Full::new(Bytes::from(sse(&turn, n))))
                                    .unwrap(),
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
            task,
        }
    }

    /// The JSON bodies received so far.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }

    /// Turns not played yet.
    pub fn remaining(&self) -> usize {
        self.turns.lock().unwrap().len()
    }
}
