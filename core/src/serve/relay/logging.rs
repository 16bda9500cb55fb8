//! Upstream servers' log messages, passed on to the served clients that ask for them: a client
//! before 2026-07-28 asks once with `logging/setLevel` and hears its profile's servers from then
//! on; a 2026-07-28 client asks per request (`_meta` `logLevel`) and hears, on that request's
//! stream, the server it called while the call runs. The pool is asked to make its servers
//! log down to the level asked (`Pool::hear_logs_at`); each client gets what reaches its own
//! level, with the server's name as the logger.
#![allow(
    deprecated,
    reason = "server logging (SEP-2577) is deprecated in 2026-07-28 but still sent and asked for"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};

use crate::events::{Event, EventReceiver, LogLevel};
use crate::pool::Pool;

/// A served client's log level, shared by its requests: 0 until it asks.
#[derive(Default)]
pub(crate) struct ClientLevel(AtomicU8);

impl ClientLevel {
    /// Sets the level; whether the client had none before (its relay is not running yet).
    pub fn set(&self, level: LogLevel) -> bool {
        self.0.swap(level as u8 + 1, Ordering::Relaxed) == 0
    }

    fn get(&self) -> Option<LogLevel> {
        let n = self.0.load(Ordering::Relaxed);
        (n > 0).then(|| LogLevel::ALL[usize::from(n) - 1])
    }
}

/// Which servers' messages a relay passes on.
pub(crate) type ServerFilter = Box<dyn Fn(&str) -> bool + Send + Sync>;

/// Sends `peer` the messages of the servers `serves` accepts (by server id) at `level` or
/// above, from `events` (taken before what is to be heard starts), until `until` is done (then
/// what already arrived still goes), the client is gone or the pool closes.
pub(crate) async fn relay(
    pool: Pool,
    mut events: EventReceiver,
    peer: Peer<RoleServer>,
    level: Arc<ClientLevel>,
    serves: ServerFilter,
    until: impl Future<Output = ()>,
) {
    let relay = Relay {
        pool,
        peer,
        level,
        serves,
    };
    tokio::pin!(until);
    loop {
        let event = tokio::select! {
            e = events.recv() => match e {
                Some(e) => e,
                None => return,
            },
            () = &mut until => break,
        };
        if relay.pass(event).await.is_err() {
            return;
        }
    }
    while let Some(event) = events.try_recv() {
        if relay.pass(event).await.is_err() {
            return;
        }
    }
}

/// Where one client's log messages go, and which.
struct Relay {
    pool: Pool,
    peer: Peer<RoleServer>,
    level: Arc<ClientLevel>,
    serves: ServerFilter,
}

impl Relay {
    /// Sends `event` on when it is a message the client wants; an error when the client is
    /// gone.
    async fn pass(&self, event: Event) -> Result<(), ()> {
        let Event::Log {
            server_id,
            level: said,
            source,
            message,
        } = event
        else {
            return Ok(());
        };
        // Only what the server itself sent: its stderr and the pool's own transport notes
        // are the host's to read, not the client's.
        if source != "notification" || !(self.serves)(&server_id) {
            return Ok(());
        }
        let (Some(wanted), Some(said)) = (self.level.get(), parse_level(&said)) else {
            return Ok(());
        };
        if said < wanted {
            return Ok(());
        }
        let logger = self
            .pool
            .server_states()
            .into_iter()
            .find(|s| s.id == server_id)
            .map(|s| s.name);
        let mut param = LoggingMessageNotificationParam::new(said.to_mcp(), message.into());
        param.logger = logger;
        self.peer
            .notify_logging_message(param)
            .await
            .map_err(|_| ())
    }
}

/// A level as the pool's `log` events name it.
fn parse_level(text: &str) -> Option<LogLevel> {
    serde_json::from_value(serde_json::Value::String(text.to_string())).ok()
}

/// The pool's level of a level as MCP names it.
pub(crate) fn from_mcp(level: LoggingLevel) -> Option<LogLevel> {
    serde_json::to_value(level)
        .ok()
        .and_then(|v| serde_json::from_value(v).ok())
}
