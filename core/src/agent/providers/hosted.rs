//! A provider the host application implements (in C, Python or JS): the request goes out as
//! JSON, the host answers a [`Response`] as JSON. The bindings only adapt a callback, so the
//! data format is the same in every language.

use std::sync::{Arc, RwLock};

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{ChatRequest, Provider, TokenFn, ToolChoice, cancellable};
use crate::error::{Error, Result};
use crate::host::BoxFuture;
use crate::message::{Message, Response};
use crate::pool::ToolDef;

/// A chat request as a host provider receives it (camelCase JSON).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HostChatRequest {
    pub model: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDef>,
    /// `auto`, `required` or `none`, when the request says (sampling's `toolChoice`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
}

/// One call of a host provider: the request, where to stream text, and a token that fires
/// when the run is cancelled (the host may stop early; its late answer is ignored).
pub struct HostChat {
    pub request: HostChatRequest,
    pub on_token: Option<TokenFn>,
    pub cancel: CancellationToken,
}

/// The host's `chat`: answers the response as JSON (see [`Response`]), or a failure message.
pub type HostChatFn =
    Arc<dyn Fn(HostChat) -> BoxFuture<std::result::Result<Value, String>> + Send + Sync>;

/// A [`Provider`] backed by a host callback.
pub struct HostProvider {
    name: String,
    model: RwLock<String>,
    chat: HostChatFn,
}

impl HostProvider {
    pub fn new(name: impl Into<String>, model: impl Into<String>, chat: HostChatFn) -> Self {
        HostProvider {
            name: name.into(),
            model: RwLock::new(model.into()),
            chat,
        }
    }
}

impl Provider for HostProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn model(&self) -> String {
        self.model.read().unwrap().clone()
    }

    fn set_model(&self, model: &str) {
        *self.model.write().unwrap() = model.to_string();
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<Result<Response>> {
        let cancel = request.cancel.clone().unwrap_or_default();
        let call = HostChat {
            request: HostChatRequest {
                model: self.model(),
                messages: request.messages,
                tools: request.tools,
                tool_choice: request.tool_choice,
                system: request.system,
                max_tokens: request.max_tokens,
                temperature: request.temperature,
            },
            on_token: request.on_token,
            cancel: cancel.clone(),
        };
        let name = self.name.clone();
        let answer = (self.chat)(call);
        Box::pin(cancellable(Some(cancel), async move {
            match answer.await {
                Ok(v) => crate::host::answers::provider_reply(&name, v),
                Err(message) => Err(Error::Connection {
                    server: name,
                    message,
                }),
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{Block, StopReason};
    use serde_json::json;

    fn provider(answer: Value) -> HostProvider {
        HostProvider::new(
            "host",
            "m1",
            Arc::new(move |call: HostChat| {
                let answer = answer.clone();
                Box::pin(async move {
                    assert_eq!(call.request.model, "m1");
                    if let Some(t) = &call.on_token {
                        t("hel");
                    }
                    Ok(answer)
                })
            }),
        )
    }

    #[tokio::test]
    async fn answers_become_responses() {
        let p = provider(json!({
            "content": [{"type": "text", "text": "hi"},
                        {"type": "tool_use", "id": "c1", "name": "echo", "input": {"x": 1}}],
            "stopReason": "tool_use"
        }));
        let r = p.chat(ChatRequest::default()).await.unwrap();
        assert_eq!(r.stop_reason, StopReason::ToolUse);
        assert!(matches!(&r.content[1], Block::ToolUse { name, .. } if name == "echo"));
        assert_eq!(r.usage.input_tokens, 0);
    }

    #[tokio::test]
    async fn a_bad_answer_is_a_clear_error() {
        let p = provider(json!({"text": "no content"}));
        let e = p.chat(ChatRequest::default()).await.unwrap_err();
        assert!(e.to_string().contains("invalid response"), "{e}");
    }

    #[tokio::test]
    async fn cancelling_does_not_wait_for_the_host() {
        let p = HostProvider::new(
            "host",
            "m",
            Arc::new(|_call: HostChat| Box::pin(std::future::pending())),
        );
        let cancel = CancellationToken::new();
        cancel.cancel();
        let r = p
            .chat(ChatRequest {
                cancel: Some(cancel),
                ..Default::default()
            })
            .await;
        assert!(matches!(r, Err(Error::Cancelled)));
    }
}
