//! How a connection asks for its server's log messages (`log` events), at the level the
//! server's record or the pool sets. A 2026-07-28 server is asked in every request's `_meta`:
//! rmcp's requests on their way out (`session::layer`), the direct `tools/call` path
//! here. A server before it is asked once per connection with `logging/setLevel`, and again
//! when the level changes.
#![allow(
    deprecated,
    reason = "server logging (SEP-2577) is deprecated but still sent"
)]

use std::sync::atomic::Ordering;

use rmcp::model::SetLevelRequestParams;
use rmcp::{Peer, RoleClient};

use crate::events::LogLevel;
use crate::pool::Pool;
use crate::pool::session::client_side::ServerShared;

/// A level as kept in an atomic: 0 for none, else one more than its place in `LogLevel::ALL`.
pub(crate) fn number_of(level: Option<LogLevel>) -> u8 {
    level.map_or(0, |l| {
        1 + LogLevel::ALL.iter().position(|x| *x == l).unwrap_or(0) as u8
    })
}

/// The level `number_of` gave `n`.
pub(crate) fn level_of(n: u8) -> Option<LogLevel> {
    match n {
        0 => None,
        n => LogLevel::ALL.get(usize::from(n) - 1).copied(),
    }
}

impl Pool {
    /// Asks every server for its log messages down to `level` at least, for someone who
    /// reads them at run time (a served client's `logging/setLevel`); a server whose record
    /// asks for more keeps it, and none is made quieter. They come as `log` events.
    pub async fn hear_logs_at(&self, level: LogLevel) {
        let wanted = number_of(Some(level));
        let floor = &self.inner.log_floor;
        let lowered = floor
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n == 0 || wanted < n).then_some(wanted)
            })
            .is_ok();
        if lowered {
            for slot in self.inner.slots() {
                slot.follow_log_floor().await;
            }
        }
    }
}

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
