//! The fleet as a client sees it: the names it is shown under, how its tools are exposed,
//! the profiles that narrow it, and config changes applied while serving.

pub mod exposure;
pub mod names;
pub mod profiles;
pub(super) mod reload;
