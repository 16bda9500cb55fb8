//! Server-initiated sampling (`sampling/createMessage`) answered by an agent's provider, so a
//! server's LLM requests go to the model the host already uses, after the host approves. The
//! request's tools and tool choice go to the model, and its tool calls go back to the server
//! as `tool_use` content (sampling with tools).
#![allow(
    deprecated,
    reason = "sampling is deprecated by SEP-2577 but servers still use it"
)]

use std::sync::Arc;

use rmcp::model::{CreateMessageRequestParams, CreateMessageResult};
use serde_json::{Value, json};

use super::Agent;
use super::providers::{ChatRequest, Provider, ToolChoice};
use super::run::{Approval, ApprovalRequest, ApproveFn};
use crate::host::{HostRequest, SamplingHandler, SamplingSupport};
use crate::message::{Block, Image, Message, Response, Role, StopReason};
use crate::pool::ToolDef;

/// The name approval requests for sampling carry as their `tool_id`.
pub const SAMPLING_APPROVAL: &str = "sampling/createMessage";

/// What [`sampling_handler`]'s handlers support: tools, since every provider takes them.
pub const SAMPLING_SUPPORT: SamplingSupport = SamplingSupport { tools: true };

/// A [`SamplingHandler`] that sends each request to `provider`. With `approve`, every request
/// is first shown to the host (as an [`ApprovalRequest`] named [`SAMPLING_APPROVAL`] whose
/// arguments are the request's params); without it, requests run without asking. It
/// supports [`SAMPLING_SUPPORT`]: set it with `Pool::set_sampling_handler_with`, or use
/// [`Agent::handle_sampling`].
pub fn sampling_handler(
    provider: Arc<dyn Provider>,
    approve: Option<ApproveFn>,
) -> SamplingHandler {
    Arc::new(move |req: HostRequest<CreateMessageRequestParams>| {
        let provider = provider.clone();
        let approve = approve.clone();
        Box::pin(async move {
            let params = serde_json::to_value(&req.params).map_err(|e| e.to_string())?;
            if let Some(approve) = approve {
                let answer = approve(ApprovalRequest {
                    tool_id: SAMPLING_APPROVAL.into(),
                    server_name: req.server_name.clone(),
                    server_id: req.server_id.clone(),
                    arguments: params.clone(),
                    reason: super::ApprovalReason::Sampling.as_str().into(),
                    ..Default::default()
                })
                .await;
                if answer == Approval::Deny {
                    return Err("the user declined the sampling request".to_string());
                }
            }
            let response = provider
                .chat(chat_request(&params))
                .await
                .map_err(|e| e.to_string())?;
            serde_json::from_value::<CreateMessageResult>(result(&response, &provider.model()))
                .map_err(|e| e.to_string())
        })
    })
}

impl Agent {
    /// Answers the pool's sampling requests with this agent's provider (asking `approve`
    /// first, when given), and declares sampling with tools to servers.
    pub fn handle_sampling(&self, approve: Option<ApproveFn>) {
        self.pool.set_sampling_handler_with(
            Some(sampling_handler(self.provider().clone(), approve)),
            SAMPLING_SUPPORT,
        );
    }
}

/// The model request for a sampling request's params.
fn chat_request(params: &Value) -> ChatRequest {
    let tools: Vec<ToolDef> = params["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            Some(ToolDef {
                name: t["name"].as_str()?.to_string(),
                description: t["description"].as_str().unwrap_or_default().to_string(),
                input_schema: t
                    .get("inputSchema")
                    .cloned()
                    .unwrap_or_else(|| json!({"type": "object"}))
                    .into(),
            })
        })
        .collect();
    let tool_choice = match params["toolChoice"]["mode"].as_str() {
        Some("required") => Some(ToolChoice::Required),
        Some("none") => Some(ToolChoice::None),
        Some("auto") => Some(ToolChoice::Auto),
        _ => None,
    };
    ChatRequest {
        messages: messages(params),
        tools,
        tool_choice,
        system: params["systemPrompt"].as_str().map(str::to_string),
        max_tokens: params["maxTokens"].as_u64().map(|n| n as u32),
        temperature: params["temperature"].as_f64().map(|t| t as f32),
        ..Default::default()
    }
}

/// The sampling result for the model's answer: its text, and its tool calls as `tool_use`
/// blocks with stop reason `toolUse`. One block is sent as it is, several as a list.
fn result(response: &Response, model: &str) -> Value {
    let mut content: Vec<Value> = Vec::new();
    let text = Message {
        role: Role::Assistant,
        content: response.content.clone(),
    }
    .text();
    if !text.is_empty() {
        content.push(json!({"type": "text", "text": text}));
    }
    for block in &response.content {
        if let Block::ToolUse { id, name, input } = block {
            let input = match input {
                Value::Object(_) => input.clone(),
                _ => json!({}),
            };
            content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
        }
    }
    let calls_tools = content.iter().any(|c| c["type"] == "tool_use");
    let stop = match response.stop_reason {
        _ if calls_tools => "toolUse",
        StopReason::MaxTokens => "maxTokens",
        _ => "endTurn",
    };
    let content = match content.len() {
        0 => json!({"type": "text", "text": ""}),
        1 => content.remove(0),
        _ => Value::Array(content),
    };
    json!({"role": "assistant", "content": content, "model": model, "stopReason": stop})
}

/// Sampling messages (content a block or a list of blocks) as transcript messages.
fn messages(params: &Value) -> Vec<Message> {
    let mut out = Vec::new();
    for m in params["messages"].as_array().into_iter().flatten() {
        let role = if m["role"] == "assistant" {
            Role::Assistant
        } else {
            Role::User
        };
        let parts: Vec<&Value> = match &m["content"] {
            Value::Array(a) => a.iter().collect(),
            other => vec![other],
        };
        let content = parts.into_iter().map(block).collect();
        out.push(Message { role, content });
    }
    out
}

/// One content block of a sampling message.
fn block(c: &Value) -> Block {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    match c["type"].as_str() {
        Some("text") => Block::Text {
            text: text(&c["text"]),
        },
        Some("image") => Block::Image(image(c)),
        Some("tool_use") => Block::ToolUse {
            id: text(&c["id"]),
            name: text(&c["name"]),
            input: c.get("input").cloned().unwrap_or_else(|| json!({})),
        },
        Some("tool_result") => tool_result(c),
        Some(kind) => Block::Text {
            text: format!("[{kind} content]"),
        },
        None => Block::Text {
            text: String::new(),
        },
    }
}

fn image(c: &Value) -> Image {
    Image {
        data: c["data"].as_str().unwrap_or_default().to_string(),
        mime_type: c["mimeType"].as_str().unwrap_or("image/png").to_string(),
    }
}

/// A `tool_result` block: its text content (and structured content, when it has no text) as
/// the model reads it, its images kept apart.
fn tool_result(c: &Value) -> Block {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for part in c["content"].as_array().into_iter().flatten() {
        match part["type"].as_str() {
            Some("text") => texts.push(part["text"].as_str().unwrap_or_default().to_string()),
            Some("image") => images.push(image(part)),
            Some(kind) => texts.push(format!("[{kind} content]")),
            None => {}
        }
    }
    if texts.is_empty()
        && let Some(structured) = c.get("structuredContent")
    {
        texts.push(structured.to_string());
    }
    Block::ToolResult {
        tool_use_id: c["toolUseId"].as_str().unwrap_or_default().to_string(),
        content: texts.join("\n"),
        is_error: c["isError"].as_bool().unwrap_or(false),
        images,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Usage;

    #[test]
    fn sampling_messages_become_transcript_messages() {
        let m = messages(&json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "hi"}},
            {"role": "assistant", "content": [{"type": "text", "text": "a"},
                                              {"type": "image", "data": "AA==", "mimeType": "image/png"}]}
        ]}));
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].text(), "hi");
        assert_eq!(m[1].role, Role::Assistant);
        assert!(matches!(&m[1].content[1], Block::Image(i) if i.data == "AA=="));
    }

    #[test]
    fn tools_tool_choice_and_tool_turns_reach_the_model() {
        let request = chat_request(&json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "c1",
                    "name": "get_weather", "input": {"city": "Paris"}}]},
                {"role": "user", "content": [{"type": "tool_result", "toolUseId": "c1",
                    "content": [{"type": "text", "text": "18 C, clear"}]}]}
            ],
            "tools": [{"name": "get_weather", "description": "Weather of a city",
                       "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
            "toolChoice": {"mode": "required"},
            "maxTokens": 100
        }));
        assert_eq!(request.tools.len(), 1);
        assert_eq!(request.tools[0].name, "get_weather");
        assert_eq!(
            request.tools[0].input_schema.to_value()["properties"]["city"]["type"],
            "string"
        );
        assert_eq!(request.tool_choice, Some(ToolChoice::Required));
        assert_eq!(request.max_tokens, Some(100));
        assert!(matches!(&request.messages[1].content[0],
            Block::ToolUse { id, name, input } if id == "c1" && name == "get_weather" && input["city"] == "Paris"));
        assert!(matches!(&request.messages[2].content[0],
            Block::ToolResult { tool_use_id, content, is_error: false, .. }
                if tool_use_id == "c1" && content == "18 C, clear"));
        // Without tools, nothing is chosen for the provider.
        let plain = chat_request(&json!({"messages": [], "maxTokens": 5}));
        assert!(plain.tools.is_empty() && plain.tool_choice.is_none());
    }

    #[test]
    fn a_model_that_calls_tools_answers_tool_use_content() {
        let response = Response {
            content: vec![
                Block::Text {
                    text: "Let me check.".into(),
                },
                Block::ToolUse {
                    id: "c2".into(),
                    name: "get_weather".into(),
                    input: json!({"city": "Tokyo"}),
                },
            ],
            stop_reason: StopReason::ToolUse,
            usage: Usage::default(),
        };
        let v = result(&response, "m1");
        assert_eq!(v["stopReason"], "toolUse");
        assert_eq!(
            v["content"][0],
            json!({"type": "text", "text": "Let me check."})
        );
        assert_eq!(
            v["content"][1],
            json!({"type": "tool_use", "id": "c2", "name": "get_weather", "input": {"city": "Tokyo"}})
        );
        // It is a valid sampling result for rmcp.
        let parsed: CreateMessageResult = serde_json::from_value(v).unwrap();
        assert_eq!(parsed.stop_reason.as_deref(), Some("toolUse"));

        let plain = result(
            &Response {
                content: vec![Block::Text { text: "hi".into() }],
                stop_reason: StopReason::MaxTokens,
                usage: Usage::default(),
            },
            "m1",
        );
        assert_eq!(plain["content"], json!({"type": "text", "text": "hi"}));
        assert_eq!(plain["stopReason"], "maxTokens");
    }
}
