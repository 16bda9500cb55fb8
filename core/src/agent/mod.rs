//! The agent (seed 002's `runAgentLoop`), built piece by piece: messages, the provider
//! interface, an OpenAI-compatible provider, text tool-call parsing, and the loop.

pub mod anthropic;
pub mod message;
pub mod ollama;
pub mod openai;
pub mod provider;
pub mod run;
pub mod textcalls;

pub use anthropic::{AnthropicConfig, AnthropicProvider};
pub use message::{Block, Message, Response, Role, StopReason, Usage};
pub use ollama::{OllamaConfig, OllamaProvider};
pub use openai::{OpenAiConfig, OpenAiProvider};
pub use provider::{ChatRequest, Provider, TokenFn};
pub use provider::{ProviderConfig, create_provider};
pub use run::{Agent, AgentOptions, AgentResult, Approval, ApproveFn, RunOptions, Stop};
pub use textcalls::{ParsedReply, TextToolCall, parse_tool_calls};
