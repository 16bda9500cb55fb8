//! A record of the tool calls clients make through a served pool, for whoever runs it: one
//! JSON line per call, appended to a file as the call ends (so a crash loses no line already
//! written):
//!
//! ```json
//! {"time":"2026-12-03T04:30:00.123Z","client":"claude-ai","profile":null,"server":"files","tool":"files__read_file","ms":12.5,"outcome":"ok"}
//! ```
//!
//! Behind OAuth (resource-server mode), `subject` and `oauthClient` name whom the call's
//! access token was issued to.
//!
//! `outcome` is `ok`, `error` (the tool or its server failed: `error` says why),
//! `cancelled`, `task` (the client follows the task the server made of it) or `refused` (the
//! client may not call it: an unknown name, or one its profile leaves out; `error` says which,
//! and `server` is null).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, Result};

/// The file calls are recorded in.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    file: Mutex<std::fs::File>,
    /// A failed write is reported once, not on every call.
    failed: AtomicBool,
}

/// One call, as recorded.
pub(crate) struct Entry<'a> {
    pub client: &'a str,
    /// Whom the call's access token was issued to (resource-server mode).
    pub principal: Option<&'a crate::serve::resource_server::Principal>,
    pub profile: Option<&'a str>,
    /// The server of the tool (none for a call refused before it had one).
    pub server: Option<&'a str>,
    pub tool: &'a str,
    pub outcome: &'static str,
    pub error: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    time: String,
    client: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    subject: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    oauth_client: Option<&'a str>,
    profile: Option<&'a str>,
    server: Option<&'a str>,
    tool: &'a str,
    ms: f64,
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl AuditLog {
    /// Appends to `path` (created if missing, with its folder).
    pub fn open(path: &Path) -> Result<AuditLog> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                Error::io(format!("creating {} for the audit log", dir.display()), e)
            })?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        // Who called what, with what outcome, is for whoever runs the gateway alone: a new
        // file is the owner's, as the config and the token files are.
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options
            .open(path)
            .map_err(|e| Error::io(format!("opening the audit log {}", path.display()), e))?;
        Ok(AuditLog {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            failed: AtomicBool::new(false),
        })
    }

    /// Where it writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one call that took `took`.
    pub(crate) fn record(&self, entry: Entry<'_>, took: Duration) {
        let line = Line {
            time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            client: entry.client,
            subject: entry.principal.and_then(|p| p.subject.as_deref()),
            oauth_client: entry.principal.and_then(|p| p.client_id.as_deref()),
            profile: entry.profile,
            server: entry.server,
            tool: entry.tool,
            ms: (took.as_secs_f64() * 1e6).round() / 1e3,
            outcome: entry.outcome,
            error: entry.error,
        };
        let Ok(mut text) = serde_json::to_vec(&line) else {
            return;
        };
        text.push(b'\n');
        // One write per line, under the lock: lines never interleave.
        let written = self.file.lock().unwrap().write_all(&text);
        if let Err(e) = written
            && !self.failed.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(
                "serve: writing the audit log {} failed: {e}",
                self.path.display()
            );
        }
    }
}
