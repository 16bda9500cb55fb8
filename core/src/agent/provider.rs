//! The provider interface (seed 002's `LLMProvider`): one `chat` for every model service.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::message::{Message, Response};
use crate::error::Result;
use crate::host::BoxFuture;
use crate::pool::ToolDef;

/// Called with each piece of text as it streams in.
pub type TokenFn = Arc<dyn Fn(&str) + Send + Sync>;

/// One request to a model.
#[derive(Clone, Default)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDef>,
    pub system: Option<String>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    pub cancel: Option<CancellationToken>,
    pub on_token: Option<TokenFn>,
}

/// A model service. Implemented here for OpenAI-compatible APIs; hosts may implement it too.
pub trait Provider: Send + Sync {
    /// A short name for logs and events (`openai`, ...).
    fn name(&self) -> &str;
    fn model(&self) -> String;
    /// Switches the model for later requests.
    fn set_model(&self, model: &str);
    fn chat(&self, request: ChatRequest) -> BoxFuture<Result<Response>>;
}
