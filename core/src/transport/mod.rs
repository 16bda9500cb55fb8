//! Transports: how bytes reach a server. One file per transport; each yields something rmcp can
//! serve a client over.

pub(crate) mod child_env;
pub(crate) mod deadlines;
pub(crate) mod direct;
pub(crate) mod env_secrets;
pub(crate) mod http;
pub(crate) mod http_limit;
pub(crate) mod limit;
pub(crate) mod line_tail;
pub(crate) mod related_call;
pub(crate) mod sandbox;
pub(crate) mod sse;
pub(crate) mod stdio;
pub mod stdout_reader;
pub(crate) mod websocket;
pub mod write_batch;

/// Largest single message accepted from a server, unless the pool is told otherwise.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
