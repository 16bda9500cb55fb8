//! The fronts clients reach a served pool through: Streamable HTTP (its connections, CORS,
//! metrics, the audit log), the legacy HTTP+SSE transport and its sessions, and stdio with
//! its call lane.

pub mod audit;
pub(super) mod call_lane;
pub mod connections;
pub(super) mod cors;
pub mod http;
pub(super) mod legacy_sse;
pub(super) mod metrics;
pub(super) mod sessions;
pub(super) mod stdio;
