//! The agent (seed 002's `runAgentLoop`), built piece by piece. This sitting: reading tool
//! calls that models without native tool calling write as text.

pub mod textcalls;

pub use textcalls::{ParsedReply, TextToolCall, parse_tool_calls};
