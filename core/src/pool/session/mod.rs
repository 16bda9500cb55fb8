//! One live connection to a server and what rides on it: the session, its client side
//! (answers to the server's requests, progress), what it adds to every transport's messages,
//! the stream it hears changes on, and its log messages.

pub(crate) mod client_side;
pub(super) mod connection;
mod layer;
pub(super) mod listen;
pub(super) mod logs;
