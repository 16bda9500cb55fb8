//! OpenAI-compatible Chat Completions with streaming: OpenAI, Mistral, Qwen, vLLM, LM Studio,
//! llama.cpp's server, and WebMCP Auto-UI's proxy mode (a URL that adds the key, so the client
//! holds none).

use std::collections::BTreeMap;

use futures::StreamExt;
use serde_json::{Value, json};

use super::ChatRequest;
use super::http::{Api, BodyParts, HttpProvider, ToolShape, ToolsJson, bodies_from_parts};
use crate::agent::textcalls::parse_tool_calls;
use crate::error::{Error, Result};
use crate::message::{Block, Response, Role, StopReason, Usage};
use crate::wire::sse::SseParser;

/// Where and how to reach the service.
#[derive(Clone)]
pub struct OpenAiConfig {
    /// e.g. `https://api.openai.com/v1`, `http://127.0.0.1:8080/v1`, or a proxy's URL.
    pub base_url: String,
    /// `None` in proxy mode.
    pub api_key: Option<String>,
    pub model: String,
    pub headers: BTreeMap<String, String>,
    /// Retries on HTTP 429 and 5xx, with backoff.
    pub max_retries: u32,
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// The provider: an [`HttpProvider`] speaking this API.
pub type OpenAiProvider = HttpProvider<OpenAiConfig>;

/// The request body of a chat request, its tools apart (see `http::write_body`).
fn body_parts<'a>(model: &str, req: &'a ChatRequest) -> BodyParts<'a> {
    let mut messages = Vec::new();
    if let Some(system) = &req.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for m in &req.messages {
        match m.role {
            Role::User => {
                // Tool messages carry text only: images a tool returned follow in a user
                // message, the one place Chat Completions takes them.
                let mut images = Vec::new();
                for b in &m.content {
                    if let Block::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                        images: returned,
                    } = b
                    {
                        let content = if *is_error {
                            format!("Error: {content}")
                        } else {
                            content.clone()
                        };
                        messages.push(json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}));
                        images.extend(returned.iter().cloned());
                    }
                }
                let text = m.text();
                images.extend(m.content.iter().filter_map(|b| match b {
                    Block::Image(i) => Some(i.clone()),
                    _ => None,
                }));
                if images.is_empty() {
                    if !text.is_empty() {
                        messages.push(json!({"role": "user", "content": text}));
                    }
                } else {
                    let mut parts = Vec::new();
                    if !text.is_empty() {
                        parts.push(json!({"type": "text", "text": text}));
                    }
                    parts.extend(images.iter().map(|i| {
                        json!({"type": "image_url", "image_url": {"url": format!("data:{};base64,{}", i.mime_type, i.data)}})
                    }));
                    messages.push(json!({"role": "user", "content": parts}));
                }
            }
            Role::Assistant => {
                let calls: Vec<Value> = m
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        Block::ToolUse { id, name, input } => Some(json!({
                            "id": id, "type": "function",
                            "function": {"name": name, "arguments": input.to_string()}
                        })),
                        _ => None,
                    })
                    .collect();
                let text = m.text();
                let mut msg = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { Value::String(text) }});
                if !calls.is_empty() {
                    msg["tool_calls"] = Value::Array(calls);
                }
                messages.push(msg);
            }
        }
    }
    let mut body = json!({"model": model, "messages": messages, "stream": true, "stream_options": {"include_usage": true}});
    let mut tools = None;
    if !req.tools.is_empty() {
        tools = Some(ToolsJson {
            shape: ToolShape::Function,
            tools: &req.tools,
        });
        if let Some(choice) = req.tool_choice {
            body["tool_choice"] = json!(choice);
        }
    }
    if let Some(n) = req.max_tokens {
        body["max_tokens"] = json!(n);
    }
    if let Some(t) = req.temperature {
        body["temperature"] = json!(t);
    }
    (body, tools)
}

/// Accumulates a streamed answer.
#[derive(Default)]
pub(crate) struct Accumulator {
    text: String,
    /// index → (id, name, arguments so far)
    calls: BTreeMap<u64, (String, String, String)>,
    finish: Option<String>,
    usage: Usage,
}

impl Accumulator {
    /// Takes one chunk; returns the text it added (for `on_token`).
    pub fn chunk(&mut self, chunk: &Value) -> Option<String> {
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Usage {
                input_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
                output_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
            };
        }
        let choice = chunk.get("choices")?.get(0)?;
        if let Some(f) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish = Some(f.to_string());
        }
        // Non-streaming answers carry `message`; streamed ones `delta`.
        let delta = choice.get("delta").or_else(|| choice.get("message"))?;
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = call
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(self.calls.len() as u64);
            let entry = self.calls.entry(index).or_default();
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                entry.0 = id.to_string();
            }
            if let Some(f) = call.get("function") {
                if let Some(n) = f.get("name").and_then(Value::as_str) {
                    entry.1.push_str(n);
                }
                if let Some(a) = f.get("arguments").and_then(Value::as_str) {
                    entry.2.push_str(a);
                }
            }
        }
        let text = delta.get("content").and_then(Value::as_str)?;
        self.text.push_str(text);
        Some(text.to_string())
    }

    pub fn finish(self) -> Result<Response> {
        let mut content = Vec::new();
        let mut calls = Vec::new();
        for (i, (id, name, args)) in self.calls {
            let input = if args.trim().is_empty() {
                json!({})
            } else {
                // Kept raw: the loop tells the model its arguments were unreadable, so it can
                // try again instead of the run failing.
                serde_json::from_str(&args).unwrap_or(Value::String(args))
            };
            let id = if id.is_empty() {
                format!("call_{i}")
            } else {
                id
            };
            calls.push(Block::ToolUse { id, name, input });
        }
        let mut text = self.text;
        // Models without native tool calling write calls as text.
        if calls.is_empty() {
            let parsed = parse_tool_calls(&text);
            if !parsed.calls.is_empty() {
                text = parsed.text;
                calls = parsed
                    .calls
                    .into_iter()
                    .enumerate()
                    .map(|(i, c)| Block::ToolUse {
                        id: format!("call_text_{i}"),
                        name: c.name,
                        input: c.arguments,
                    })
                    .collect();
            }
        }
        if !text.is_empty() {
            content.push(Block::Text { text });
        }
        let has_calls = !calls.is_empty();
        content.extend(calls);
        let stop_reason = match self.finish.as_deref() {
            _ if has_calls => StopReason::ToolUse,
            Some("length") => StopReason::MaxTokens,
            Some("stop") | None => StopReason::EndTurn,
            Some(other) => StopReason::Other(other.to_string()),
        };
        Ok(Response {
            content,
            stop_reason,
            usage: self.usage,
        })
    }
}

impl Api for OpenAiConfig {
    const NAME: &'static str = "openai";
    const PATH: &'static str = "/chat/completions";

    fn settings(&self) -> (&str, &str, u32) {
        (&self.base_url, &self.model, self.max_retries)
    }

    bodies_from_parts!();

    fn headers(&self, mut builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        if let Some(key) = &self.api_key {
            builder = builder.bearer_auth(key);
        }
        for (k, v) in &self.headers {
            builder = builder.header(k, v);
        }
        builder
    }

    async fn read(&self, response: reqwest::Response, req: &ChatRequest) -> Result<Response> {
        let mut acc = Accumulator::default();
        let streamed = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !streamed {
            let whole: Value = response
                .json()
                .await
                .map_err(|e| Error::connection(Self::NAME, format!("bad response: {e}")))?;
            acc.chunk(&whole);
            return acc.finish();
        }
        let mut parser = SseParser::new(16 * 1024 * 1024);
        let mut stream = response.bytes_stream();
        let mut done = false;
        'read: while let Some(bytes) = stream.next().await {
            let bytes =
                bytes.map_err(|e| Error::connection(Self::NAME, format!("stream broke: {e}")))?;
            for event in parser.feed(&bytes) {
                let event = event.map_err(|e| Error::connection(Self::NAME, e))?;
                if event.data.trim() == "[DONE]" {
                    done = true;
                    break 'read;
                }
                let chunk: Value =
                    serde_json::from_str(&event.data).map_err(|e| Error::Protocol {
                        server: Self::NAME.into(),
                        message: format!("a stream chunk is not JSON ({e})"),
                    })?;
                if let Some(err) = chunk.get("error") {
                    return Err(Error::Protocol {
                        server: Self::NAME.into(),
                        message: err.to_string(),
                    });
                }
                if let Some(text) = acc.chunk(&chunk)
                    && let Some(f) = &req.on_token
                {
                    f(&text);
                }
            }
        }
        // Servers that omit `[DONE]` still send a finish reason; with neither, the answer
        // was cut off and must not pass for a whole one.
        if !done && acc.finish.is_none() {
            return Err(Error::connection(
                Self::NAME,
                "the stream ended before the model finished its answer",
            ));
        }
        acc.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;

    #[test]
    fn tool_call_deltas_accumulate() {
        let mut acc = Accumulator::default();
        for chunk in [
            json!({"choices": [{"delta": {"role": "assistant", "content": "Let me "}}]}),
            json!({"choices": [{"delta": {"content": "check."}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "call_a", "function": {"name": "mcp__t__echo", "arguments": "{\"te"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "xt\":\"hi\"}"}}]}}]}),
            json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}}),
        ] {
            acc.chunk(&chunk);
        }
        let r = acc.finish().unwrap();
        assert_eq!(r.stop_reason, StopReason::ToolUse);
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: 10,
                output_tokens: 5
            }
        );
        assert_eq!(
            r.content[0],
            Block::Text {
                text: "Let me check.".into()
            }
        );
        assert_eq!(
            r.content[1],
            Block::ToolUse {
                id: "call_a".into(),
                name: "mcp__t__echo".into(),
                input: json!({"text": "hi"})
            }
        );
    }

    #[test]
    fn text_calls_become_tool_use_and_bad_arguments_stay_raw() {
        let mut acc = Accumulator::default();
        acc.chunk(&json!({"choices": [{"message": {"content": "<tool_call>{\"name\": \"x\", \"arguments\": {}}</tool_call>"}, "finish_reason": "stop"}]}));
        let r = acc.finish().unwrap();
        assert_eq!(r.stop_reason, StopReason::ToolUse);
        assert!(matches!(&r.content[0], Block::ToolUse { name, .. } if name == "x"));
        let mut acc = Accumulator::default();
        acc.chunk(&json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": "{broken"}}]}}]}));
        // Raw, for the loop to tell the model; not a failure of the whole request.
        let r = acc.finish().unwrap();
        assert!(matches!(&r.content[0], Block::ToolUse { input, .. } if input == "{broken"));
    }

    #[test]
    fn requests_carry_system_tools_and_tool_results() {
        let req = ChatRequest {
            system: Some("be brief".into()),
            messages: vec![
                Message::user("hi"),
                Message {
                    role: Role::Assistant,
                    content: vec![Block::ToolUse {
                        id: "c1".into(),
                        name: "f".into(),
                        input: json!({"a": 1}),
                    }],
                },
                Message {
                    role: Role::User,
                    content: vec![Block::ToolResult {
                        tool_use_id: "c1".into(),
                        content: "boom".into(),
                        is_error: true,
                        images: vec![crate::agent::Image {
                            data: "AA==".into(),
                            mime_type: "image/png".into(),
                        }],
                    }],
                },
            ],
            tools: vec![crate::pool::ToolDef {
                name: "f".into(),
                description: "d".into(),
                input_schema: json!({"type": "object"}).into(),
            }],
            ..Default::default()
        };
        let b = OpenAiConfig::body("m", &req);
        assert_eq!(b["messages"][0]["role"], "system");
        assert_eq!(
            b["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"a\":1}"
        );
        assert_eq!(
            b["messages"][3],
            json!({"role": "tool", "tool_call_id": "c1", "content": "Error: boom"})
        );
        // Chat Completions takes images only in user messages: the tool's image follows.
        assert_eq!(
            b["messages"][4]["content"][0]["image_url"]["url"],
            "data:image/png;base64,AA=="
        );
        assert_eq!(b["tools"][0]["function"]["name"], "f");
        assert_eq!(b["stream"], true);
    }
}
