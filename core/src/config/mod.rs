//! What mcpmux keeps about servers: the record of each ([`record`]), the config file that
//! holds them ([`store`]), and reading the server lists of other MCP hosts ([`import`]). A
//! record's parts that other layers act on are defined here, where the record is: its OAuth
//! settings ([`oauth`], used by `auth`) and the tools the user trusted ([`trusted_tools`], used by
//! `tools::pins`).

pub mod consent;
pub mod import;
pub mod oauth;
pub mod record;
pub mod sandbox;
pub mod store;
pub mod trusted_tools;
