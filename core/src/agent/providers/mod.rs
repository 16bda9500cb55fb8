//! The provider interface (WebMCP Auto-UI's `LLMProvider`): one `chat` for every model service,
//! the services mcpmux speaks over HTTP, and the host's own.

pub mod anthropic;
pub mod hosted;
pub mod http;
pub mod ollama;
pub mod openai;

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::error::Result;
use crate::host::BoxFuture;
use crate::message::{Message, Response};
use crate::pool::ToolDef;

/// Called with each piece of text as it streams in.
pub type TokenFn = Arc<dyn Fn(&str) + Send + Sync>;

/// Whether the model may, must or must not call the request's tools (a sampling request's
/// `toolChoice`). Providers send it only with tools; one whose API cannot require a call
/// (Ollama) lets the model choose.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoice {
    #[default]
    Auto,
    Required,
    None,
}

/// One request to a model.
#[derive(Clone, Default)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDef>,
    /// `None`: the provider's default (the model chooses).
    pub tool_choice: Option<ToolChoice>,
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

/// Runs a provider request until it finishes or `cancel` fires.
pub(crate) async fn cancellable<T>(
    cancel: Option<CancellationToken>,
    work: impl Future<Output = Result<T>>,
) -> Result<T> {
    let cancel = cancel.unwrap_or_default();
    tokio::select! {
        r = work => r,
        _ = cancel.cancelled() => Err(crate::error::Error::Cancelled),
    }
}

/// A provider described as data (WebMCP Auto-UI's `createProvider` config), camelCase JSON with a
/// `type`: `openai` (any compatible API), `remote` (a key-adding proxy), `anthropic`, `ollama`.
#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ProviderConfig {
    Openai {
        #[serde(default = "openai_url")]
        base_url: String,
        api_key: Option<String>,
        model: String,
        #[serde(default)]
        headers: std::collections::BTreeMap<String, String>,
    },
    Remote {
        proxy_url: String,
        model: String,
    },
    Anthropic {
        #[serde(default = "anthropic_url")]
        base_url: String,
        api_key: Option<String>,
        model: String,
    },
    Ollama {
        #[serde(default = "ollama_url")]
        base_url: String,
        model: String,
    },
}

fn openai_url() -> String {
    "https://api.openai.com/v1".into()
}
fn anthropic_url() -> String {
    "https://api.anthropic.com/v1".into()
}
fn ollama_url() -> String {
    "http://localhost:11434".into()
}

/// Retries of 429/5xx for providers made by [`create_provider`].
const RETRIES: u32 = 3;

/// Makes a provider from its description.
pub fn create_provider(config: ProviderConfig) -> Result<Arc<dyn Provider>> {
    Ok(match config {
        ProviderConfig::Openai {
            base_url,
            api_key,
            model,
            headers,
        } => Arc::new(openai::OpenAiProvider::new(openai::OpenAiConfig {
            base_url,
            api_key,
            model,
            headers,
            max_retries: RETRIES,
        })?),
        ProviderConfig::Remote { proxy_url, model } => {
            Arc::new(openai::OpenAiProvider::new(openai::OpenAiConfig {
                base_url: proxy_url,
                api_key: None,
                model,
                headers: Default::default(),
                max_retries: RETRIES,
            })?)
        }
        ProviderConfig::Anthropic {
            base_url,
            api_key,
            model,
        } => Arc::new(anthropic::AnthropicProvider::new(
            anthropic::AnthropicConfig {
                base_url,
                api_key,
                model,
                max_retries: RETRIES,
            },
        )?),
        ProviderConfig::Ollama { base_url, model } => {
            Arc::new(ollama::OllamaProvider::new(ollama::OllamaConfig {
                base_url,
                model,
                max_retries: RETRIES,
            })?)
        }
    })
}
