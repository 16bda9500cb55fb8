//! The protocol's extensions the pool speaks: MCP Apps (views and the host's bridge to one)
//! and skills.

pub(super) mod app_bridge;
pub(super) mod apps;
pub(super) mod skills;
