//! The agent (WebMCP Auto-UI's `runAgentLoop`), built piece by piece: messages, the provider
//! interface, an OpenAI-compatible provider, text tool-call parsing, and the loop.

pub mod anthropic;
pub mod hosted;
pub mod message;
pub mod ollama;
pub mod openai;
pub mod provider;
pub mod run;
pub mod sampling;
pub mod textcalls;

pub use anthropic::{AnthropicConfig, AnthropicProvider};
pub use hosted::{HostChat, HostChatFn, HostChatRequest, HostProvider};
pub use message::{Block, Image, Message, Response, Role, StopReason, Usage};
pub use ollama::{OllamaConfig, OllamaProvider};
pub use openai::{OpenAiConfig, OpenAiProvider};
pub use provider::{ChatRequest, Provider, TokenFn};
pub use provider::{ProviderConfig, create_provider};
pub use run::{
    Agent, AgentOptions, AgentResult, Approval, ApprovalRequest, ApproveFn, Attachment, RunOptions,
    RunParams, Stop,
};
pub use sampling::sampling_handler;
pub use textcalls::{ParsedReply, TextToolCall, parse_tool_calls};
