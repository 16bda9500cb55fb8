//! How a connection asks for its server's log messages (`log` events), at the level the
//! server's record or the pool sets. A 2026-07-28 server is asked in every request's `_meta`:
//! rmcp's requests on their way out (`transport::session_layer`), the direct `tools/call` path
//! here. A server before it is asked once per connection with `logging/setLevel`, and again
//! when the level changes.
#![allow(
    deprecated,
    reason = "server logging (SEP-2577) is deprecated but still sent"
)]

use rmcp::model::SetLevelRequestParams;
use rmcp::{Peer, RoleClient};

use crate::pool::client_side::ServerShared;

/// The `_meta` key of the level in a 2026-07-28 request.
const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";

/// Adds the level to the `_meta` of a direct 2026-07-28 request.
pub(crate) fn stamp(meta: &mut serde_json::Map<String, serde_json::Value>, shared: &ServerShared) {
    if let Some(level) = shared.log_level() {
        meta.insert(LOG_LEVEL_KEY.into(), serde_json::json!(level));
    }
}

/// `logging/setLevel` to a server before 2026-07-28 that offers logging; a refusal is said in
/// a log event of the connection's own.
pub(crate) async fn set_legacy_log_level(peer: &Peer<RoleClient>, shared: &ServerShared) {
    let Some(level) = shared.log_level() else {
        return;
    };
    let offers_logging = peer
        .peer_info()
        .is_some_and(|i| i.capabilities.logging.is_some());
    if !offers_logging {
        return;
    }
    let set = peer
        .set_level(SetLevelRequestParams::new(level.to_mcp()))
        .await;
    if let Err(e) = set {
        shared.transport_log("warning", format!("logging/setLevel failed: {e}"));
    }
}
