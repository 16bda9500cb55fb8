//! Protocol text read and written by hand, where serde's general path costs a call more than
//! the work it does: each reader or writer here states what it covers, falls back to serde for
//! the rest, and is tested to read or write what serde does (a parity test over generated
//! input). Below every layer: the pool's call path, the gateway's answers and the agent's
//! providers all use it.
//!
//! - [`json_text`]: JSON string escaping, the part every writer shares;
//! - [`call_params`]: a `tools/call` request's params, written for the direct send path;
//! - [`plain_text_reply`]: a `tools/call` reply that is one text part, read without serde;
//! - [`reply_line`]: which direct request a stdio server's line answers, if any;
//! - [`answer_line`]: the gateway's answer to a call, written as one line;
//! - [`sse`]: `text/event-stream`, read incrementally.

#[cfg(feature = "serve")]
pub(crate) mod answer_line;
pub(crate) mod call_params;
pub(crate) mod json_text;
pub(crate) mod plain_text_reply;
pub(crate) mod reply_line;
pub(crate) mod sse;
