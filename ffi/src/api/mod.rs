//! The exported functions, one file per topic of the header. cbindgen writes them in the
//! order the modules are declared here, so the header reads from the library itself to
//! conversations; each file holds only argument checks, JSON in and out, and calls into core.

// One group per module: rustfmt sorts a group of `mod` lines, and this order is the header's.
pub mod library;

pub mod pool;

pub mod servers;

pub mod tools;

pub mod tasks;

pub mod resources;

pub mod prompts;

pub mod skills;

pub mod apps;

pub mod requests;

pub mod roots;

pub mod events;

pub mod host_requests;

pub mod oauth;

pub mod host_tools;

pub mod recipes;

pub mod providers;

pub mod agents;

pub mod conversations;

pub mod serve;
