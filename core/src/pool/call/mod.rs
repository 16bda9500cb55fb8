//! The call family: `tools/call` (`calls.rs` its options and verbs, `send.rs` its two send
//! paths: rmcp's and the direct fast path, whose params and replies `wire` writes and reads by
//! hand), resources and prompts (`resources_prompts.rs`), other requests (`requests.rs`), multi
//! round-trip input rounds, tasks, output schemas, and what a dropped call tells its server.

pub(crate) mod call_mark;
pub(super) mod calls;
pub(super) mod input_rounds;
pub(super) mod output_schema;
pub(super) mod reply;
pub(super) mod requests;
pub(super) mod resources_prompts;
pub(super) mod send;
pub(super) mod tasks;
pub(super) mod tell_on_drop;
