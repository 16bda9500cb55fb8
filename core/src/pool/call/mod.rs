//! The call family: `tools/call` and the other requests through the pool, on the rmcp path
//! and the direct fast path (its params written and its replies read by hand in `wire`), multi
//! round-trip input rounds, tasks, output schemas, and what a dropped call tells its server.

pub(crate) mod call_mark;
pub(super) mod calls;
pub(super) mod input_rounds;
pub(super) mod output_schema;
pub(super) mod reply;
pub(super) mod requests;
pub(super) mod tasks;
pub(super) mod tell_on_drop;
