//! Pool settings, with the defaults of the llama.cpp web UI and Elftia's desktop app.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How a [`crate::Pool`] behaves. Deserializable from camelCase JSON so bindings can pass it as is.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct PoolOptions {
    /// The config file; `None` means `$MCPMUX_CONFIG` or the platform default.
    pub config_path: Option<PathBuf>,
    /// Also see this project's `scope: local` servers.
    pub project_path: Option<String>,
    /// Default per-request timeout, reset by progress notifications.
    pub request_timeout_ms: u64,
    /// Default limit on spawning/connecting plus the handshake.
    pub connect_timeout_ms: u64,
    /// How long a server's tool list is trusted without asking again (Elftia's: 5 minutes).
    pub tools_ttl_ms: u64,
    /// Background health checks of idle connections; 0 turns them off.
    pub health_check_interval_ms: u64,
    /// A connection idle longer than this is checked before it is reused.
    pub health_check_idle_ms: u64,
    /// Reconnect by itself when a connection drops.
    pub auto_reconnect: bool,
    /// Give up (state `error`) after this many failed reconnect attempts.
    pub max_reconnect_attempts: u32,
    /// How many servers `connect_all` connects at once.
    pub connect_concurrency: usize,
    /// How long `close` waits for calls in flight before cutting connections.
    pub shutdown_timeout_ms: u64,
    /// Connect a server and record its tools in the catalog right after `add_server` /
    /// `add_json`, and after a change of its config or enabling it (in the background; a
    /// failure never fails the add: it becomes the server's error state).
    pub connect_on_add: bool,
    /// The client name sent in the handshake.
    pub client_name: String,
    /// Largest single message accepted from a server.
    pub max_message_bytes: usize,
    /// How many rounds a request may take when a 2026-07-28 server answers it with
    /// `input_required` (asking the host for sampling, elicitation or roots) before it fails.
    pub max_input_rounds: u32,
    /// Ask servers for their log messages (`log` events) from this level up: in every request
    /// to a 2026-07-28 server, with `logging/setLevel` to older ones. A server's own
    /// `logLevel` wins. Unset: 2026-07-28 servers send none, older ones what they choose.
    pub log_level: Option<crate::events::LogLevel>,
    /// Stops a server's connection (a stdio server's process) after this long without a
    /// request from the pool; the next request starts it again, and lists and search keep
    /// answering from the catalog meanwhile. A server with resource subscriptions or a
    /// request in flight is kept. 0 (the default) keeps every connection.
    pub idle_stop_ms: u64,
    /// Renders MCP Apps: the pool declares `io.modelcontextprotocol/ui` with these view types,
    /// and `Pool::app_view` / `app_call` serve the views (see `pool::ext::apps`). Unset: off.
    pub apps: Option<super::AppsOptions>,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            config_path: None,
            project_path: None,
            request_timeout_ms: 60_000,
            connect_timeout_ms: 30_000,
            tools_ttl_ms: 5 * 60_000,
            health_check_interval_ms: 60_000,
            health_check_idle_ms: 30_000,
            auto_reconnect: true,
            max_reconnect_attempts: 6,
            connect_concurrency: 8,
            shutdown_timeout_ms: 5_000,
            connect_on_add: true,
            client_name: "mcpmux".into(),
            max_message_bytes: crate::transport::DEFAULT_MAX_MESSAGE_BYTES,
            max_input_rounds: super::call::input_rounds::DEFAULT_MAX_INPUT_ROUNDS,
            log_level: None,
            idle_stop_ms: 0,
            apps: None,
        }
    }
}

impl PoolOptions {
    pub(crate) fn request_timeout(&self) -> Duration {
        Duration::from_millis(self.request_timeout_ms.max(1))
    }
    pub(crate) fn connect_timeout(&self) -> Duration {
        Duration::from_millis(self.connect_timeout_ms.max(1))
    }
    pub(crate) fn tools_ttl(&self) -> Duration {
        Duration::from_millis(self.tools_ttl_ms)
    }
    pub(crate) fn health_interval(&self) -> Option<Duration> {
        (self.health_check_interval_ms > 0)
            .then(|| Duration::from_millis(self.health_check_interval_ms))
    }
    pub(crate) fn health_idle(&self) -> Duration {
        Duration::from_millis(self.health_check_idle_ms)
    }
    pub(crate) fn idle_stop(&self) -> Option<Duration> {
        (self.idle_stop_ms > 0).then(|| Duration::from_millis(self.idle_stop_ms))
    }
    pub(crate) fn shutdown_timeout(&self) -> Duration {
        Duration::from_millis(self.shutdown_timeout_ms)
    }
}

/// Reconnect delay before attempt `attempt` (0-based): `min(30 s, 1 s × 2^attempt)`, with ±20 %
/// jitter so that many servers dropped at once do not come back in lockstep.
pub(crate) fn backoff(attempt: u32) -> Duration {
    let base = Duration::from_secs(1)
        .saturating_mul(1u32.checked_shl(attempt.min(16)).unwrap_or(u32::MAX))
        .min(Duration::from_secs(30));
    let jitter = 0.8 + rand::random::<f64>() * 0.4;
    base.mul_f64(jitter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_thirty_seconds() {
        for (attempt, secs) in [(0, 1.0), (1, 2.0), (3, 8.0), (5, 30.0), (40, 30.0)] {
            let d = backoff(attempt).as_secs_f64();
            assert!(d >= secs * 0.8 && d <= secs * 1.2, "attempt {attempt}: {d}");
        }
    }

    #[test]
    fn options_parse_from_camel_case_json() {
        let o: PoolOptions =
            serde_json::from_str(r#"{"requestTimeoutMs": 5, "autoReconnect": false}"#).unwrap();
        assert_eq!(o.request_timeout_ms, 5);
        assert!(!o.auto_reconnect);
        assert_eq!(o.tools_ttl_ms, 300_000);
        assert!(serde_json::from_str::<PoolOptions>(r#"{"nope": 1}"#).is_err());
    }
}
