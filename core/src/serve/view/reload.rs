//! Config changes applied while serving: a server added with `mcpmux servers add` (or by any
//! program writing the config) shows up for connected clients without a restart. The config
//! file is looked at every second; when it changed, the pool reads it again and brings its
//! servers in line by difference (added ones are started on first use, removed ones are
//! stopped, changed ones reconnect), and its `servers:changed` event becomes the clients'
//! `list_changed`. The profiles are read again too: a front shows each one as it now is.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;

use crate::pool::Pool;
use crate::serve::view::profiles::Profile;

/// How often the config file is looked at.
const POLL: Duration = Duration::from_secs(1);

/// Follows `pool`'s config file until `stop`; `profiles_changed` gets the profiles after each
/// change (not when they cannot be read: the ones served go on meanwhile).
pub(crate) fn follow_config(
    pool: Pool,
    stop: CancellationToken,
    profiles_changed: impl Fn(BTreeMap<String, Profile>) + Send + 'static,
) {
    tokio::spawn(async move {
        let path = pool.config_path().to_path_buf();
        let mut seen = stamp(&path);
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(POLL) => {}
            }
            let now = stamp(&path);
            if now == seen {
                continue;
            }
            seen = now;
            // A file caught half-written or malformed is read again at its next change; the
            // servers already in the pool go on being served meanwhile.
            if let Err(e) = pool.list_servers().await {
                tracing::warn!("serve: the changed config was not applied: {e}");
            }
            match crate::serve::view::profiles::load(&path) {
                Ok(profiles) => profiles_changed(profiles),
                Err(e) => tracing::warn!("serve: the changed profiles were not applied: {e}"),
            }
        }
    });
}

/// What tells one version of the file from the next: the config store replaces the file
/// (a new inode) on every write, and its time and size change too.
fn stamp(path: &Path) -> Option<(u64, SystemTime, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.ino(), meta.modified().ok()?, meta.len()))
}
