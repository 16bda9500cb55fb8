//! Server-initiated sampling (`sampling/createMessage`) answered by an agent's provider, so a
//! server's LLM requests go to the model the host already uses, after the host approves.
#![allow(
    deprecated,
    reason = "sampling is deprecated by SEP-2577 but servers still use it"
)]

use std::sync::Arc;

use rmcp::model::{CreateMessageRequestParams, CreateMessageResult};
use serde_json::{Value, json};

use super::message::{Block, Image, Message, Role, StopReason};
use super::providers::{ChatRequest, Provider};
use super::run::{Approval, ApprovalRequest, ApproveFn};
use crate::host::{HostRequest, SamplingHandler};

/// The name approval requests for sampling carry as their `tool_id`.
pub const SAMPLING_APPROVAL: &str = "sampling/createMessage";

/// A [`SamplingHandler`] that sends each request to `provider`. With `approve`, every request
/// is first shown to the host (as an [`ApprovalRequest`] named [`SAMPLING_APPROVAL`] whose
/// arguments are the request's params); without it, requests run without asking.
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
                    arguments: params.clone(),
                })
                .await;
                if answer == Approval::Deny {
                    return Err("the user declined the sampling request".to_string());
                }
            }
            let request = ChatRequest {
                messages: messages(&params),
                system: params["systemPrompt"].as_str().map(str::to_string),
                max_tokens: params["maxTokens"].as_u64().map(|n| n as u32),
                temperature: params["temperature"].as_f64().map(|t| t as f32),
                ..Default::default()
            };
            let response = provider.chat(request).await.map_err(|e| e.to_string())?;
            let text = Message {
                role: Role::Assistant,
                content: response.content,
            }
            .text();
            let stop = match response.stop_reason {
                StopReason::MaxTokens => "maxTokens",
                _ => "endTurn",
            };
            serde_json::from_value::<CreateMessageResult>(json!({
                "role": "assistant",
                "content": {"type": "text", "text": text},
                "model": provider.model(),
                "stopReason": stop,
            }))
            .map_err(|e| e.to_string())
        })
    })
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
        let content = parts
            .into_iter()
            .map(|c| match c["type"].as_str() {
                Some("text") => Block::Text {
                    text: c["text"].as_str().unwrap_or_default().to_string(),
                },
                Some("image") => Block::Image(Image {
                    data: c["data"].as_str().unwrap_or_default().to_string(),
                    mime_type: c["mimeType"].as_str().unwrap_or("image/png").to_string(),
                }),
                Some(kind) => Block::Text {
                    text: format!("[{kind} content]"),
                },
                None => Block::Text {
                    text: String::new(),
                },
            })
            .collect();
        out.push(Message { role, content });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
