//! The CLI's tests: `mcpmux` run as a child process (its commands, `chat` against a scripted
//! model service) and `mcpmux serve` answering real MCP clients, one module per area.
//! One test binary rather than one per file: each binary links the core, rmcp and tokio
//! again, which cost seconds of linking and about 75 MB of disk per file.
//! One area alone: `cargo test -p mcpmux-cli --test integration serve_replicas::`.

mod cli;
mod serve;
mod serve_browser;
mod serve_host_requests;
mod serve_oauth;
mod serve_profiles;
mod serve_replicas;
mod serve_schema;
mod serve_security;
mod serve_tasks;
mod support;
