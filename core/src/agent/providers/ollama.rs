//! Ollama's `/api/chat` with native tools, streamed as NDJSON (WebMCP Auto-UI's LocalLLMProvider).

use futures::StreamExt;
use serde_json::{Value, json};

use super::http::{Api, BodyParts, HttpProvider, ToolShape, ToolsJson, bodies_from_parts};
use super::{ChatRequest, ToolChoice};
use crate::error::{Error, Result};
use crate::message::{Block, Response, Role, StopReason, Usage};

#[derive(Debug, Clone)]
pub struct OllamaConfig {
    /// e.g. `http://localhost:11434`.
    pub base_url: String,
    pub model: String,
    pub max_retries: u32,
}

/// The provider: an [`HttpProvider`] speaking this API.
pub type OllamaProvider = HttpProvider<OllamaConfig>;

/// The request body of a chat request, its tools apart (see `http::write_body`).
fn body_parts<'a>(model: &str, req: &'a ChatRequest) -> BodyParts<'a> {
    let mut messages = Vec::new();
    if let Some(system) = &req.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for m in &req.messages {
        for b in &m.content {
            if let Block::ToolResult {
                content,
                is_error,
                images,
                ..
            } = b
            {
                let content = if *is_error {
                    format!("Error: {content}")
                } else {
                    content.clone()
                };
                let mut msg = json!({"role": "tool", "content": content});
                if !images.is_empty() {
                    msg["images"] = images.iter().map(|i| json!(i.data)).collect();
                }
                messages.push(msg);
            }
        }
        let calls: Vec<Value> = m
            .content
            .iter()
            .filter_map(|b| match b {
                Block::ToolUse { name, input, .. } => {
                    Some(json!({"function": {"name": name, "arguments": input}}))
                }
                _ => None,
            })
            .collect();
        let text = m.text();
        let images: Vec<Value> = m
            .content
            .iter()
            .filter_map(|b| match b {
                Block::Image(i) => Some(json!(i.data)),
                _ => None,
            })
            .collect();
        if text.is_empty() && calls.is_empty() && images.is_empty() {
            continue;
        }
        let role = match m.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let mut msg = json!({"role": role, "content": text});
        if !calls.is_empty() {
            msg["tool_calls"] = Value::Array(calls);
        }
        if !images.is_empty() {
            msg["images"] = Value::Array(images);
        }
        messages.push(msg);
    }
    let mut body = json!({"model": model, "messages": messages, "stream": true});
    // Ollama has no tool choice: "none" is a request without tools.
    let tools =
        (!req.tools.is_empty() && req.tool_choice != Some(ToolChoice::None)).then(|| ToolsJson {
            shape: ToolShape::Function,
            tools: &req.tools,
        });
    let mut options = serde_json::Map::new();
    if let Some(t) = req.temperature {
        options.insert("temperature".into(), json!(t));
    }
    if let Some(n) = req.max_tokens {
        options.insert("num_predict".into(), json!(n));
    }
    if !options.is_empty() {
        body["options"] = Value::Object(options);
    }
    (body, tools)
}

impl Api for OllamaConfig {
    const NAME: &'static str = "ollama";
    const PATH: &'static str = "/api/chat";

    fn settings(&self) -> (&str, &str, u32) {
        (&self.base_url, &self.model, self.max_retries)
    }

    bodies_from_parts!();

    async fn read(&self, response: reqwest::Response, req: &ChatRequest) -> Result<Response> {
        let (mut text, mut calls, mut usage, mut stop) =
            (String::new(), Vec::new(), Usage::default(), None);
        let mut done = false;
        let mut line = Vec::new();
        let mut stream = response.bytes_stream();
        let mut handle = |raw: &[u8]| -> Result<Option<String>> {
            if raw.iter().all(u8::is_ascii_whitespace) {
                return Ok(None);
            }
            let v: Value = serde_json::from_slice(raw).map_err(|e| Error::Protocol {
                server: "ollama".into(),
                message: format!("a stream line is not JSON ({e})"),
            })?;
            if let Some(err) = v.get("error") {
                return Err(Error::Protocol {
                    server: "ollama".into(),
                    message: err.to_string(),
                });
            }
            for call in v["message"]["tool_calls"].as_array().into_iter().flatten() {
                let f = &call["function"];
                calls.push(Block::ToolUse {
                    id: format!("call_{}", calls.len()),
                    name: f["name"].as_str().unwrap_or_default().to_string(),
                    input: match &f["arguments"] {
                        // Kept raw when unreadable: the loop tells the model so.
                        Value::String(s) => serde_json::from_str(s).unwrap_or(json!(s)),
                        Value::Null => json!({}),
                        other => other.clone(),
                    },
                });
            }
            if v["done"].as_bool() == Some(true) {
                done = true;
                usage = Usage {
                    input_tokens: v["prompt_eval_count"].as_u64().unwrap_or(0),
                    output_tokens: v["eval_count"].as_u64().unwrap_or(0),
                };
                stop = v["done_reason"].as_str().map(str::to_string);
            }
            let piece = v["message"]["content"].as_str().unwrap_or_default();
            text.push_str(piece);
            Ok((!piece.is_empty()).then(|| piece.to_string()))
        };
        while let Some(bytes) = stream.next().await {
            let bytes =
                bytes.map_err(|e| Error::connection("ollama", format!("stream broke: {e}")))?;
            for &b in bytes.iter() {
                if b == b'\n' {
                    if let Some(piece) = handle(&line)?
                        && let Some(f) = &req.on_token
                    {
                        f(&piece);
                    }
                    line.clear();
                } else {
                    line.push(b);
                }
            }
        }
        if let Some(piece) = handle(&line)?
            && let Some(f) = &req.on_token
        {
            f(&piece);
        }
        if !done {
            return Err(Error::connection(
                "ollama",
                "the stream ended before the model finished its answer",
            ));
        }
        let mut content = Vec::new();
        if !text.is_empty() {
            content.push(Block::Text { text });
        }
        let has_calls = !calls.is_empty();
        content.extend(calls);
        let stop_reason = match stop.as_deref() {
            _ if has_calls => StopReason::ToolUse,
            Some("length") => StopReason::MaxTokens,
            _ => StopReason::EndTurn,
        };
        Ok(Response {
            content,
            stop_reason,
            usage,
        })
    }
}
