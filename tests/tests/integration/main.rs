//! The core's integration tests against real MCP servers (the test server, server-everything,
//! the Python SDK's and FastMCP's servers, a scripted model service), one module per area.
//! One test binary rather than one per file: each binary links the core, rmcp and tokio
//! again, which cost seconds of linking and about 75 MB of disk per file.
//! One area alone: `cargo test -p mcpmux-tests --test integration pool_stdio::`.

mod agent;
mod agent_host;
mod apps;
mod chaos;
mod common;
mod consent;
mod first_use;
mod host_features;
mod host_requests;
mod mirrors;
mod network_transports;
mod per_client;
mod pool_stdio;
mod real_servers;
mod sandbox;
mod serve_library;
mod server_notifications;
mod skills;
mod store_processes;
mod tasks;
mod test_server_smoke;
mod trace_context;
