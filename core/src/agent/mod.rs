//! The agent (WebMCP Auto-UI's `runAgentLoop`), built piece by piece: the providers
//! (the interface, the HTTP services, the host's own), text tool-call parsing, and the loop.

mod approval_reason;
pub mod providers;
pub mod run;
pub mod sampling;
pub mod textcalls;

pub use crate::message::{Block, Image, Message, Response, Role, StopReason, Usage};
pub use approval_reason::ApprovalReason;
pub use providers::anthropic::{AnthropicConfig, AnthropicProvider};
pub use providers::hosted::{HostChat, HostChatFn, HostChatRequest, HostProvider};
pub use providers::ollama::{OllamaConfig, OllamaProvider};
pub use providers::openai::{OpenAiConfig, OpenAiProvider};
pub use providers::{ChatRequest, Provider, ProviderConfig, TokenFn, ToolChoice, create_provider};
pub use run::{
    Agent, AgentOptions, AgentResult, Approval, ApprovalPolicy, ApprovalRequest, ApproveFn,
    Attachment, RunOptions, RunParams, Stop,
};
pub use sampling::{SAMPLING_SUPPORT, sampling_handler};
pub use textcalls::{ParsedReply, TextToolCall, parse_tool_calls};
