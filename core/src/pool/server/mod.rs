//! One server's place in the pool: its slot (record, connection state, tool cache,
//! reconnects), the per-client instances of servers that keep state for their client, and what
//! a server says of itself when it connects.

pub(super) mod client_scope;
pub(super) mod server_info;
pub(super) mod slot;
