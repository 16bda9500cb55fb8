//! Listing servers for the catalog before an answer needs their tools. Search, the discovery
//! tools, layers and conversations answer from what is known without connecting; a server
//! the catalog has no entry for (never listed), or whose entry was made from another config
//! than its record has now, is listed first, so a fresh config is never answered with
//! nothing. A server whose entry is current is never started for an answer.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::pool::listing::discovery::ServerFilter;
use crate::pool::server::slot::{ListingFailure, Slot};
use crate::pool::{Inner, Pool};

/// A server whose tools an answer lacks because they could not be listed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Unlisted {
    pub server_id: String,
    pub server_name: String,
    /// What went wrong, as the error said it (e.g. the command could not be started).
    pub error: String,
}

/// How much longer than its connect timeout an answer waits for a server's listing.
const LIST_GRACE: Duration = Duration::from_secs(2);

/// How long a failed listing is taken as the answer before the server is tried again:
/// 1 s, doubling with each failure up to 30 s (the reconnect backoff, without jitter).
fn retry_after(attempts: u32) -> Duration {
    Duration::from_secs(1u64 << attempts.saturating_sub(1).min(5)).min(Duration::from_secs(30))
}

impl Pool {
    /// Lists, once, every active server `servers` lets through (`ServerFilter::default()`:
    /// all) whose tools the catalog does not know for its current config (never listed, or
    /// its config changed since), so that search and discovery answer for all of them. They
    /// are listed concurrently (`connectConcurrency` at a time), each within its connect
    /// timeout; one that fails or hangs never holds up the others. Servers whose tools are
    /// known are not started. Returns the servers that could not be listed, with why (a
    /// failure is remembered for a few seconds, then tried again).
    pub async fn ensure_catalog(&self, servers: &ServerFilter) -> Vec<Unlisted> {
        self.inner.ensure_catalog(servers).await
    }
}

impl Inner {
    /// [`Pool::ensure_catalog`] for the servers `filter` lets through.
    pub(in crate::pool) async fn ensure_catalog(
        self: &Arc<Self>,
        filter: &ServerFilter,
    ) -> Vec<Unlisted> {
        // Read first: a change made while looking bumps it, and the next answer looks again.
        let version = self.tools_version.load(Ordering::SeqCst);
        if self.known_at.load(Ordering::SeqCst) == version {
            return Vec::new();
        }
        let mut unknown: Vec<Arc<Slot>> = self
            .active_slots()
            .into_iter()
            .filter(|s| !self.knows_tools(s))
            .collect();
        if unknown.is_empty() {
            self.known_at.store(version, Ordering::SeqCst);
            return Vec::new();
        }
        unknown.retain(|s| filter.allows(&s.id, &s.name()));
        let mut out: Vec<Unlisted> = futures::stream::iter(unknown)
            .map(|slot| async move {
                let failure = self.list_for_catalog(&slot).await.err()?;
                Some(Unlisted {
                    server_id: slot.id.clone(),
                    server_name: slot.name(),
                    error: failure,
                })
            })
            .buffer_unordered(self.opts.connect_concurrency.max(1))
            .filter_map(std::future::ready)
            .collect()
            .await;
        out.sort_by(|a, b| a.server_name.cmp(&b.server_name));
        out
    }

    /// Whether the tools of `slot` are known for its current config: a live list, or a
    /// catalog entry made from the same config.
    pub(in crate::pool) fn knows_tools(&self, slot: &Slot) -> bool {
        slot.tools.lock().unwrap().is_some()
            || self.catalog.get(&slot.id, &slot.config_key()).is_some()
    }

    /// Why the tools of `slot` are missing, if listing it failed for its current config: the
    /// error as it was said, and as a connection error of the server.
    pub(in crate::pool) fn listing_failure(&self, slot: &Slot) -> Option<(String, Error)> {
        if self.knows_tools(slot) {
            return None;
        }
        let key = slot.config_key();
        let unlisted = slot.unlisted.lock().unwrap();
        let f = unlisted.as_ref().filter(|f| f.config_key == key)?;
        Some((f.error.clone(), Error::connection(slot.name(), &f.reason)))
    }

    /// Lists one server for the catalog (connect, `tools/list`, store), unless its tools are
    /// known by now or listing it failed a moment ago; the error is what went wrong.
    pub(in crate::pool) async fn list_for_catalog(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
    ) -> Result<(), String> {
        let _one = slot.listing.lock().await;
        if self.knows_tools(slot) {
            return Ok(());
        }
        let record = slot.record();
        let key = slot.config_key();
        if let Some(f) = slot.unlisted.lock().unwrap().as_ref()
            && f.config_key == key
            && f.at.elapsed() < retry_after(f.attempts)
        {
            return Err(f.error.clone());
        }
        // The connect has this timeout of its own, which reports first; the grace is for the
        // `tools/list` after it. The listing goes on past the wait, so a later answer has it.
        let wait = record
            .timeouts
            .connect()
            .unwrap_or(self.opts.connect_timeout())
            + LIST_GRACE;
        let listing = {
            let (inner, slot) = (self.clone(), slot.clone());
            tokio::spawn(async move { inner.server_tools(&slot, None, false).await.map(drop) })
        };
        let failed = match tokio::time::timeout(wait, listing).await {
            Ok(Ok(Ok(()))) => return Ok(()),
            Ok(Ok(Err(e))) => e,
            Ok(Err(e)) => Error::connection(&record.name, format!("listing its tools failed: {e}")),
            Err(_) => {
                return Err(format!(
                    "server '{}' is still starting after {} s; its tools are listed once it is up",
                    record.name,
                    wait.as_secs()
                ));
            }
        };
        let error = failed.to_string();
        let reason = match failed {
            Error::Connection { message, .. } => message,
            other => other.to_string(),
        };
        let mut unlisted = slot.unlisted.lock().unwrap();
        let attempts = match unlisted.as_ref() {
            Some(f) if f.config_key == key => f.attempts + 1,
            _ => 1,
        };
        *unlisted = Some(ListingFailure {
            config_key: key,
            at: Instant::now(),
            attempts,
            error: error.clone(),
            reason,
        });
        Err(error)
    }
}

#[cfg(test)]
mod tests {
    use super::retry_after;
    use std::time::Duration;

    #[test]
    fn a_failed_listing_is_retried_after_a_growing_pause() {
        let secs: Vec<u64> = (1..=8).map(|n| retry_after(n).as_secs()).collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 30, 30, 30]);
        assert_eq!(retry_after(0), Duration::from_secs(1));
    }
}
