//! mcpmux: one Rust core that lets an application use a whole fleet of MCP servers.
//!
//! A [`Pool`] reads server records from a [`ConfigStore`], connects to servers lazily over
//! stdio or Streamable HTTP (through `rmcp`), keeps them healthy, and exposes their tools
//! under pool-unique ids, their resources and their prompts. Everything that happens is
//! reported as an [`Event`].

pub mod agent;
#[cfg(feature = "mimalloc")]
pub mod alloc;
pub mod auth;
pub mod canonical;
pub mod canvas;
mod catalog;
mod error;
pub mod events;
mod handler;
pub mod host;
pub mod import;
pub mod local;
mod memory;
pub mod mirror;
mod pool;
pub mod recipes;
pub mod record;
pub mod search;
pub mod store;
mod stored_tool;
pub mod tools;
pub mod transport;

pub use error::{Error, ErrorKind, Result};
pub use events::{ConnectionPhase, ConnectionState, EVENT_NAMES, Event, EventReceiver};
pub use handler::{Progress, ProgressFn};
pub use host::{
    ElicitationHandler, HostRequest, RootsHandler, SamplingHandler, fill_schema_defaults,
};
pub use local::{LocalHandler, LocalTool};
pub use pool::{
    CallOptions, Conversation, DiscoverResult, ImportResult, Pool, PoolOptions, PromptInfo,
    ResourceInfo, ResourceTemplateInfo, ServerFilter, ServerStatus, TestResult, ToolDef, ToolLayer,
    Unlisted,
};
pub use record::{
    InstallSource, Scope, ServerConfig, ServerInput, ServerPatch, ServerRecord, Timeouts,
    TransportType,
};
pub use search::SearchHit;
pub use store::ConfigStore;
pub use tools::ToolInfo;

/// The MCP data types mcpmux returns (tool results, resources, prompts), from `rmcp`.
pub use rmcp::model;
