//! What mcpmux keeps about servers: the record of each ([`record`]), the config file that
//! holds them ([`store`]), and reading the server lists of other MCP hosts ([`import`]).

pub mod import;
pub mod record;
pub mod store;
