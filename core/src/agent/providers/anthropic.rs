//! The Anthropic Messages API with streaming (`tool_use` / `tool_result` blocks, the event
//! stream of `message_start`, `content_block_*`, `message_delta`).

use std::collections::BTreeMap;

use futures::StreamExt;
use serde_json::{Value, json};

use super::http::{Api, BodyParts, HttpProvider, ToolShape, ToolsJson, bodies_from_parts};
use super::{ChatRequest, ToolChoice};
use crate::error::{Error, Result};
use crate::message::{Block, Image, Response, Role, StopReason, Usage};
use crate::wire::sse::SseParser;

/// Where and how to reach the API.
#[derive(Clone)]
pub struct AnthropicConfig {
    /// `https://api.anthropic.com/v1` or a proxy.
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    pub max_retries: u32,
}

impl std::fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .finish()
    }
}

/// The provider: an [`HttpProvider`] speaking this API.
pub type AnthropicProvider = HttpProvider<AnthropicConfig>;

fn image(i: &Image) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": i.mime_type, "data": i.data}})
}

/// The request body of a chat request, its tools apart (see `http::write_body`).
fn body_parts<'a>(model: &str, req: &'a ChatRequest) -> BodyParts<'a> {
    let messages: Vec<Value> = req
        .messages
        .iter()
        .map(|m| {
            let content: Vec<Value> = m
                .content
                .iter()
                .map(|b| match b {
                    Block::Text { text } => json!({"type": "text", "text": text}),
                    Block::ToolUse { id, name, input } => {
                        json!({"type": "tool_use", "id": id, "name": name, "input": input})
                    }
                    Block::Image(i) => image(i),
                    Block::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                        images,
                    } => {
                        let content = if images.is_empty() {
                            json!(content)
                        } else {
                            let mut parts = vec![json!({"type": "text", "text": content})];
                            parts.extend(images.iter().map(image));
                            Value::Array(parts)
                        };
                        json!({
                            "type": "tool_result", "tool_use_id": tool_use_id,
                            "content": content, "is_error": is_error
                        })
                    }
                })
                .collect();
            let role = match m.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({"role": role, "content": content})
        })
        .collect();
    let mut body = json!({
        "model": model,
        "messages": messages,
        "max_tokens": req.max_tokens.unwrap_or(4096),
        "stream": true
    });
    if let Some(system) = &req.system {
        body["system"] = json!(system);
    }
    let mut tools = None;
    if !req.tools.is_empty() {
        tools = Some(ToolsJson {
            shape: ToolShape::Anthropic,
            tools: &req.tools,
        });
        // Anthropic's names: `any` is "at least one tool".
        let choice = match req.tool_choice {
            Some(ToolChoice::Auto) => Some("auto"),
            Some(ToolChoice::Required) => Some("any"),
            Some(ToolChoice::None) => Some("none"),
            None => None,
        };
        if let Some(kind) = choice {
            body["tool_choice"] = json!({"type": kind});
        }
    }
    if let Some(t) = req.temperature {
        body["temperature"] = json!(t);
    }
    (body, tools)
}

/// Builds the answer from the event stream.
#[derive(Default)]
pub(crate) struct Events {
    /// index → (kind, text or partial JSON, id, name)
    blocks: BTreeMap<u64, (String, String, String, String)>,
    stop: Option<String>,
    usage: Usage,
}

impl Events {
    /// Takes one event; returns text to stream.
    pub fn event(&mut self, e: &Value) -> Result<Option<String>> {
        match e["type"].as_str().unwrap_or("") {
            "message_start" => {
                self.usage.input_tokens =
                    e["message"]["usage"]["input_tokens"].as_u64().unwrap_or(0);
            }
            "content_block_start" => {
                let i = e["index"].as_u64().unwrap_or(0);
                let b = &e["content_block"];
                self.blocks.insert(
                    i,
                    (
                        b["type"].as_str().unwrap_or("text").to_string(),
                        b["text"].as_str().unwrap_or("").to_string(),
                        b["id"].as_str().unwrap_or("").to_string(),
                        b["name"].as_str().unwrap_or("").to_string(),
                    ),
                );
            }
            "content_block_delta" => {
                let i = e["index"].as_u64().unwrap_or(0);
                let d = &e["delta"];
                let entry = self.blocks.entry(i).or_default();
                if let Some(t) = d["text"].as_str() {
                    entry.1.push_str(t);
                    return Ok(Some(t.to_string()));
                }
                if let Some(p) = d["partial_json"].as_str() {
                    entry.1.push_str(p);
                }
            }
            "message_delta" => {
                if let Some(s) = e["delta"]["stop_reason"].as_str() {
                    self.stop = Some(s.to_string());
                }
                if let Some(n) = e["usage"]["output_tokens"].as_u64() {
                    self.usage.output_tokens = n;
                }
            }
            "error" => {
                return Err(Error::Protocol {
                    server: "anthropic".into(),
                    message: e["error"].to_string(),
                });
            }
            _ => {}
        }
        Ok(None)
    }

    pub fn finish(self) -> Result<Response> {
        let mut content = Vec::new();
        for (_, (kind, data, id, name)) in self.blocks {
            match kind.as_str() {
                "tool_use" => {
                    let input = if data.trim().is_empty() {
                        json!({})
                    } else {
                        // Kept raw: the loop tells the model its arguments were unreadable.
                        serde_json::from_str(&data).unwrap_or(Value::String(data))
                    };
                    content.push(Block::ToolUse { id, name, input });
                }
                _ if !data.is_empty() => content.push(Block::Text { text: data }),
                _ => {}
            }
        }
        let stop_reason = match self.stop.as_deref() {
            Some("tool_use") => StopReason::ToolUse,
            Some("max_tokens") => StopReason::MaxTokens,
            Some("end_turn") | None => StopReason::EndTurn,
            Some(other) => StopReason::Other(other.into()),
        };
        Ok(Response {
            content,
            stop_reason,
            usage: self.usage,
        })
    }
}

impl Api for AnthropicConfig {
    const NAME: &'static str = "anthropic";
    const PATH: &'static str = "/messages";

    fn settings(&self) -> (&str, &str, u32) {
        (&self.base_url, &self.model, self.max_retries)
    }

    bodies_from_parts!();

    fn headers(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let builder = builder.header("anthropic-version", "2023-06-01");
        match &self.api_key {
            Some(key) => builder.header("x-api-key", key),
            None => builder,
        }
    }

    async fn read(&self, response: reqwest::Response, req: &ChatRequest) -> Result<Response> {
        let mut events = Events::default();
        let mut parser = SseParser::new(16 * 1024 * 1024);
        let mut stream = response.bytes_stream();
        while let Some(bytes) = stream.next().await {
            let bytes =
                bytes.map_err(|e| Error::connection("anthropic", format!("stream broke: {e}")))?;
            for event in parser.feed(&bytes) {
                let event = event.map_err(|e| Error::connection("anthropic", e))?;
                let data: Value =
                    serde_json::from_str(&event.data).map_err(|e| Error::Protocol {
                        server: "anthropic".into(),
                        message: format!("an event is not JSON ({e})"),
                    })?;
                if let Some(text) = events.event(&data)?
                    && let Some(f) = &req.on_token
                {
                    f(&text);
                }
            }
        }
        if events.stop.is_none() {
            return Err(Error::connection(
                "anthropic",
                "the stream ended before the model finished its answer",
            ));
        }
        events.finish()
    }
}
