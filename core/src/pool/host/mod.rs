//! The host application's side of the pool: its settings and handlers (roots, sampling,
//! elicitation), OAuth, its own tools, and WebMCP Auto-UI's recipes and canvas.

pub(super) mod host_tools;
pub(super) mod oauth;
pub(super) mod settings;
pub(super) mod widgets;
