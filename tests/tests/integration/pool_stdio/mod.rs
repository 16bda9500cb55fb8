//! The pool against a real MCP server (mcpmux-test-server, built with rmcp) over stdio, one
//! file per subject; helpers more than one of them use are here.

mod batching;
mod calls;
mod cancellation;
mod catalog;
mod connect;
mod conversations;
mod handshake;
mod host_tools;
mod input_rounds;
mod output;
mod process;
mod progress;
mod reconnect;
mod servers;
mod timeouts;
mod tool_lists;

use std::sync::Arc;

use serde_json::json;

/// Registers a host tool `set_theme` that accepts any object and answers nothing.
fn register_set_theme(pool: &mcpmux::Pool) {
    pool.register_tool(mcpmux::HostTool {
        name: "set_theme".into(),
        description: "Switch the theme".into(),
        input_schema: json!({"type": "object"}),
        handler: Arc::new(|_| Box::pin(async { Ok(Default::default()) })),
    })
    .unwrap();
}
