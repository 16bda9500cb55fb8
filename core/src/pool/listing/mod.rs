//! What the pool knows servers offer: the list requests, the tool index and its caches, the
//! catalog saved beside the config and the listing that fills it, search, and discovery's
//! layers and pseudo-tools.

pub(super) mod catalog;
pub(super) mod discovery;
pub(super) mod full_listing;
pub(super) mod lists;
pub(super) mod search;
pub(super) mod tool_index;
pub(super) mod unlisted;
