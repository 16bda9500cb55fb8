//! mcpmux: one Rust core that lets an application use a whole fleet of MCP servers.
//!
//! A [`Pool`] reads server records from a [`ConfigStore`], connects to servers lazily over
//! stdio or Streamable HTTP (through `rmcp`), keeps them healthy, and exposes their tools
//! under pool-unique ids, their resources and their prompts. Everything that happens is
//! reported as an [`Event`].

#[cfg(feature = "agent")]
pub mod agent;
#[cfg(feature = "mimalloc")]
pub mod alloc;
#[cfg(test)]
mod arbitrary;
pub mod auth;
mod boxed_future;
pub mod config;
mod error;
pub mod event_loop;
pub mod events;
mod fast_map;
mod front_matter;
pub mod host;
mod http_layer;
#[cfg(test)]
mod layers;
mod log_level;
mod memory;
mod message;
pub mod mirror;
mod pool;
mod redact;
#[cfg(feature = "serve")]
pub mod serve;
mod shared_json;
mod stable_hash;
#[cfg(test)]
mod test_site;
pub mod tools;
mod trace_context;
mod transport;
pub mod widgets;
mod wire;

pub use config::record::{
    InstallSource, Scope, ServerConfig, ServerInput, ServerPatch, ServerRecord, SessionScope,
    Timeouts, TransportType,
};
pub use config::store::ConfigStore;
pub use error::{Error, ErrorKind, Result, UrlElicitation};
pub use events::{ConnectionPhase, ConnectionState, EVENT_NAMES, Event, EventReceiver, LogLevel};
pub use host::{
    ElicitationHandler, HostRequest, RootsHandler, SamplingHandler, SamplingSupport,
    fill_schema_defaults,
};
pub use pool::{
    APP_HTML_MIME_TYPE, APPS_EXTENSION_ID, APPS_PROTOCOL_VERSION, AppBridge, AppBridgeOutput,
    AppCsp, AppPermissions, AppView, AppsOptions,
};
pub use pool::{
    AddOutcome, CallOptions, CallRound, CallSettings, Conversation, DiscoverResult, ImportResult,
    InputRound, ListOptions, Pool, PoolOptions, PromptInfo, ResourceInfo, ResourceTemplateInfo,
    ServerFilter, ServerStatus, StartedTask, TaskMode, TestResult, ToolDef, ToolLayer, Unlisted,
};
pub use pool::{
    LoadedSkill, SkillFile, SkillFileContents, SkillInfo, SkillSource, TaskFn, TaskRun, TaskUpdate,
};
pub use pool::{Progress, ProgressFn};
pub use shared_json::SharedJson;
pub use tools::ToolInfo;
pub use tools::host_tools::{HostTool, HostToolHandler};
pub use tools::search::SearchHit;

/// The MCP data types mcpmux returns (tool results, resources, prompts), from `rmcp`.
pub use rmcp::model;
