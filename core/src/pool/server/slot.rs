//! One server's place in the pool: its record, connection state, tool cache and reconnects.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

use rmcp::model::{ClientRequest, DiscoverRequest, DiscoverRequestParams, ErrorCode, PingRequest};
use rmcp::service::{PeerRequestOptions, ServiceError};
use tracing::Instrument;

use crate::config::record::ServerRecord;
use crate::error::{Error, Result};
use crate::events::{ConnectionPhase, ConnectionState, Event, LogLevel};
use crate::pool::Inner;
use crate::pool::options::backoff;
use crate::pool::server::server_info::ServerInfo;
use crate::pool::session::client_side::ServerShared;
use crate::pool::session::connection::Connection;

/// A server's tool list as last fetched.
pub(crate) struct CachedTools {
    pub tools: crate::tools::ToolList,
    /// When the list was asked for (its age counts from the request, not the answer).
    pub fetched: Instant,
    /// How long it is fresh: the pool's `toolsTtlMs`, or the server's `ttlMs` if shorter.
    pub ttl: Duration,
    pub generation: u64,
    /// The generation of the connection it was fetched on.
    pub connection: u64,
}

impl CachedTools {
    /// Whether it can answer a caller: within its TTL, fetched since the last `list_changed`
    /// (`generation`), and asked for since `asked_since` when the caller wants a list no older.
    pub fn serves(&self, generation: u64, asked_since: Option<Instant>) -> bool {
        self.generation == generation
            && self.fetched.elapsed() < self.ttl
            && asked_since.is_none_or(|since| self.fetched >= since)
    }
}

/// Why a server's tools could not be listed for the catalog, remembered for a while so that
/// answers in quick succession do not each wait for a server that does not start.
pub(crate) struct ListingFailure {
    pub config_key: String,
    pub at: Instant,
    pub attempts: u32,
    /// The error as it was said.
    pub error: String,
    /// The same without "connection to server ... failed:", to say it again as such.
    pub reason: String,
}

struct Live {
    state: ConnectionState,
    conn: Option<Arc<Connection>>,
    error: Option<String>,
}

/// A server known to the pool.
pub(crate) struct Slot {
    pub id: String,
    /// Changed only through [`Slot::set_record`], which keeps `config_key` with it.
    pub record: RwLock<ServerRecord>,
    /// The record's `config_key`, computed once per change (it is asked on every answer).
    config_key: RwLock<String>,
    /// The record's name, shared rather than copied (it is asked on every call).
    name: RwLock<Arc<str>>,
    pub shared: Arc<ServerShared>,
    live: Mutex<Live>,
    /// Serializes connects so a server never has two (re)connects at once.
    connect_lock: tokio::sync::Mutex<()>,
    pub tools: Mutex<Option<CachedTools>>,
    /// Its skills as last listed: what a loaded skill's files are checked against.
    pub skills: Mutex<Option<Vec<crate::pool::SkillInfo>>>,
    /// One `tools/list` at a time (see `Inner::fetch_tools`).
    pub fetching: tokio::sync::Mutex<()>,
    /// One listing for the catalog at a time (see `pool::listing::unlisted`).
    pub listing: tokio::sync::Mutex<()>,
    pub unlisted: Mutex<Option<ListingFailure>>,
    generation: AtomicU64,
    reconnecting: AtomicBool,
    pub removed: AtomicBool,
    /// The pool's `logLevel`, for a record that sets none.
    default_log_level: Option<LogLevel>,
    /// `Inner::log_floor`: the level asked at run time, when less severe than the record's.
    log_floor: Arc<std::sync::atomic::AtomicU8>,
    /// What the server said of itself at its last connection (from the catalog until it
    /// connects in this pool).
    about: RwLock<Option<Arc<ServerInfo>>>,
    /// Its tools' output schemas, compiled once per listing.
    pub validators: crate::pool::call::output_schema::OutputValidators,
    /// The client this connection is of, for a `perClient` server (see `client_scope.rs`):
    /// its state changes are its own, not the server's, and are not announced.
    pub client: Option<String>,
}

/// A snapshot of one server's connection, as `server_states` reports it, with what the server
/// said of itself at its last connection (known before connecting, from the catalog).
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    pub id: String,
    pub name: String,
    pub state: ConnectionState,
    /// Why it is not connected: the last failure, kept while a reconnect waits its turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The protocol version of the current connection, else of the last one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// Process id of a stdio server's child.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The server's `serverInfo`: `name`, `version`, and `title`, `description`, `icons`,
    /// `websiteUrl` when it gives them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_info: Option<serde_json::Value>,
    /// How to use the server's tools, for a model's system prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// What the server offers, as it said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<serde_json::Value>,
}

/// When a new state of the server is not recorded.
#[derive(Clone, Copy)]
enum Unless {
    Never,
    /// A connection became current meanwhile (a connect that finished while the old one
    /// closed): the state stays what that connection made it. For states that say the
    /// server has no connection.
    Connected,
}

impl Slot {
    pub fn new(record: ServerRecord, inner: &Arc<Inner>) -> Arc<Slot> {
        Slot::of(record, inner, None)
    }

    /// A slot of `client`'s own, for a `perClient` server.
    pub fn for_client(record: ServerRecord, inner: &Arc<Inner>, client: &str) -> Arc<Slot> {
        Slot::of(record, inner, Some(client.to_string()))
    }

    fn of(record: ServerRecord, inner: &Arc<Inner>, client: Option<String>) -> Arc<Slot> {
        let slot = Arc::new(Slot {
            id: record.id.clone(),
            shared: ServerShared::new(
                &record.id,
                inner.events.clone(),
                inner.opts.client_name.clone(),
                inner.host.clone(),
            ),
            config_key: RwLock::new(record.config_key(inner.host.offers_key().as_deref())),
            name: RwLock::new(record.name.as_str().into()),
            record: RwLock::new(record),
            live: Mutex::new(Live {
                state: ConnectionState::Disconnected,
                conn: None,
                error: None,
            }),
            connect_lock: tokio::sync::Mutex::new(()),
            tools: Mutex::new(None),
            skills: Mutex::new(None),
            fetching: tokio::sync::Mutex::new(()),
            listing: tokio::sync::Mutex::new(()),
            unlisted: Mutex::new(None),
            generation: AtomicU64::new(0),
            reconnecting: AtomicBool::new(false),
            removed: AtomicBool::new(false),
            default_log_level: inner.opts.log_level,
            log_floor: inner.log_floor.clone(),
            about: RwLock::new(None),
            validators: Default::default(),
            client,
        });
        *slot.about.write().unwrap() = inner.catalog.about(&slot.id);
        slot.shared
            .set_log_level(slot.log_level_for(slot.record().log_level));
        let (weak_slot, weak_pool) = (Arc::downgrade(&slot), Arc::downgrade(inner));
        let _ = slot.shared.on_tools_changed.set(Box::new(move || {
            if let (Some(slot), Some(inner)) = (weak_slot.upgrade(), weak_pool.upgrade()) {
                slot.refresh_tools(&inner);
            }
        }));
        slot
    }

    /// Fetches the tool list in the background if connected, so the cache, the catalog and
    /// search follow a (re)connect or a `list_changed` without waiting for a caller.
    ///
    /// The fetch uses the connection that is live when it starts and never connects: a
    /// `disconnect` right after a connect must not be undone by this task.
    pub fn refresh_tools(self: &Arc<Self>, inner: &Arc<Inner>) {
        if self.live_connection().is_none() || inner.closing.load(Ordering::SeqCst) {
            return;
        }
        let (slot, inner) = (self.clone(), inner.clone());
        tokio::spawn(async move {
            let generation = slot.shared.tools_generation.load(Ordering::SeqCst);
            if let Some(conn) = slot.live_connection() {
                let _ = inner.fetch_tools(&slot, &conn, generation, None).await;
            }
        });
    }

    pub fn record(&self) -> ServerRecord {
        self.record.read().unwrap().clone()
    }

    /// Replaces the record (and its config key).
    pub async fn set_record(&self, record: ServerRecord) {
        *self.config_key.write().unwrap() =
            record.config_key(self.shared.host.offers_key().as_deref());
        *self.name.write().unwrap() = record.name.as_str().into();
        let level = self.log_level_for(record.log_level);
        *self.record.write().unwrap() = record;
        self.apply_log_level(level).await;
    }

    /// The level to ask of the server: its record's (else the pool's), or the run-time floor
    /// when that is less severe.
    fn log_level_for(&self, recorded: Option<LogLevel>) -> Option<LogLevel> {
        let floor = crate::pool::session::logs::level_of(self.log_floor.load(Ordering::Relaxed));
        match (recorded.or(self.default_log_level), floor) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Asks the server again after the run-time floor moved.
    pub async fn follow_log_floor(&self) {
        self.apply_log_level(self.log_level_for(self.record().log_level))
            .await;
    }

    async fn apply_log_level(&self, level: Option<LogLevel>) {
        // 2026-07-28 requests read the level as they go; a server before it is told now,
        // before the change is done.
        if self.shared.set_log_level(level)
            && let Some(conn) = self.live_connection()
            && !conn.modern
        {
            crate::pool::session::logs::set_legacy_log_level(&conn.peer, &self.shared).await;
        }
    }

    /// `ServerRecord::config_key` of the current record.
    pub fn config_key(&self) -> String {
        self.config_key.read().unwrap().clone()
    }

    /// The server's tools were listed with the config whose key is `config_key`: an earlier
    /// failure to list it is forgotten.
    pub fn listed(&self, config_key: &str) {
        let mut unlisted = self.unlisted.lock().unwrap();
        if unlisted
            .as_ref()
            .is_some_and(|f| f.config_key == config_key)
        {
            *unlisted = None;
        }
    }

    pub fn name(&self) -> String {
        self.record.read().unwrap().name.clone()
    }

    /// [`Slot::name`] without a copy.
    pub fn shared_name(&self) -> Arc<str> {
        self.name.read().unwrap().clone()
    }

    pub fn status(&self) -> ServerStatus {
        let live = self.live.lock().unwrap();
        let about = self.about();
        ServerStatus {
            id: self.id.clone(),
            name: self.name(),
            state: live.state,
            error: live.error.clone(),
            protocol_version: live
                .conn
                .as_ref()
                .map(|c| c.protocol_version.clone())
                .or_else(|| about.as_ref().map(|a| a.protocol_version.clone())),
            pid: live.conn.as_ref().and_then(|c| c.child_pid),
            server_info: about.as_ref().and_then(|a| a.server_info.clone()),
            instructions: about.as_ref().and_then(|a| a.instructions.clone()),
            capabilities: about.as_ref().map(|a| a.capabilities.clone()),
        }
    }

    /// What the server said of itself at its last connection.
    pub fn about(&self) -> Option<Arc<ServerInfo>> {
        self.about.read().unwrap().clone()
    }

    fn current(&self) -> Option<Arc<Connection>> {
        self.live.lock().unwrap().conn.clone()
    }

    /// Says the server's connection was closed (by the pool, not lost), unless another became
    /// current meanwhile.
    fn set_closed(&self, inner: &Inner) {
        let (state, phase) = (ConnectionState::Disconnected, ConnectionPhase::Closed);
        self.set_state(inner, Unless::Connected, state, phase, None, None);
    }

    /// Records the state and announces it; with [`Unless::Connected`], only while no
    /// connection is current (checked under the same lock that records it).
    fn set_state(
        &self,
        inner: &Inner,
        unless: Unless,
        state: ConnectionState,
        phase: ConnectionPhase,
        error: Option<String>,
        attempt: Option<u32>,
    ) {
        {
            let mut live = self.live.lock().unwrap();
            if matches!(unless, Unless::Connected) && live.conn.is_some() {
                return;
            }
            live.state = state;
            live.error = error.clone();
        }
        if self.client.is_some() {
            return;
        }
        inner.events.emit(Event::ConnectionState {
            server_id: self.id.clone(),
            server_name: self.name(),
            state,
            phase,
            error,
            attempt,
        });
    }

    /// A live connection, connecting on first use. A connection idle for a while is
    /// health-checked before reuse and rebuilt if it fails.
    pub async fn connection(self: &Arc<Self>, inner: &Arc<Inner>) -> Result<Arc<Connection>> {
        if let Some(c) = self.ready_connection(inner) {
            return Ok(c);
        }
        // Boxed: a connect's future is some 16 KB (an HTTP session's setup), and every
        // request that may connect would otherwise carry it, and copy it when spawned.
        Box::pin(self.checked_or_new(inner)).await
    }

    /// The live connection once checked, else a new one; under the connect lock.
    async fn checked_or_new(self: &Arc<Self>, inner: &Arc<Inner>) -> Result<Arc<Connection>> {
        let _guard = self.connect_lock.lock().await;
        if let Some(c) = self.current() {
            if c.is_alive() {
                if c.idle_for() < inner.opts.health_idle() || self.check(inner, &c).await.is_ok() {
                    c.touch();
                    c.requested();
                    return Ok(c);
                }
                self.drop_connection(
                    inner,
                    &c,
                    ConnectionPhase::Unhealthy,
                    Some("health check failed".into()),
                )
                .await;
            } else {
                self.forget(&c);
            }
        }
        self.connect_locked(inner, None).await
    }

    /// The live connection, when it needs neither a connect nor a health check.
    pub fn ready_connection(&self, inner: &Inner) -> Option<Arc<Connection>> {
        let (conn, now) = {
            // Taken and marked under the lock `stop_if_idle` decides under.
            let live = self.live.lock().unwrap();
            let now = crate::pool::session::connection::Moment::now();
            let conn = live.conn.clone();
            if let Some(c) = &conn {
                c.requested_at(now);
            }
            (conn, now)
        };
        conn.filter(|c| c.is_alive() && c.touch_if_fresh(now, inner.opts.health_idle()))
    }

    /// Stops the connection when no request took it for `idle`, none holds it now and no
    /// resource subscription needs it; the next request connects again.
    pub async fn stop_if_idle(&self, inner: &Inner, idle: Duration) {
        let Ok(_guard) = self.connect_lock.try_lock() else {
            return;
        };
        if !self.shared.subscribed().is_empty() {
            return;
        }
        let stopped = {
            let mut live = self.live.lock().unwrap();
            // Every request clones the connection under this lock: only `live` holding it
            // means none is running, and none can start before it is gone.
            let idle_now = live.conn.as_ref().is_some_and(|c| {
                Arc::strong_count(c) == 1 && c.is_alive() && c.unrequested_for() >= idle
            });
            if idle_now { live.conn.take() } else { None }
        };
        let Some(conn) = stopped else {
            return;
        };
        self.shared.transport_log(
            "info",
            format!(
                "stopped after {} s without a request; the next one starts it again",
                idle.as_secs_f64()
            ),
        );
        // Said down before the process is gone, so no one sees it gone yet `connected`.
        self.set_closed(inner);
        conn.close(Duration::from_secs(2)).await;
    }

    /// Connects; the caller holds `connect_lock`.
    async fn connect_locked(
        self: &Arc<Self>,
        inner: &Arc<Inner>,
        attempt: Option<u32>,
    ) -> Result<Arc<Connection>> {
        if inner.closing.load(Ordering::SeqCst) {
            return Err(Error::ShuttingDown);
        }
        let record = self.record();
        if !record.is_active {
            return Err(Error::invalid(format!(
                "server '{}' is disabled (isActive is false)",
                record.name
            )));
        }
        record.approved()?;
        self.set_state(
            inner,
            Unless::Never,
            ConnectionState::Connecting,
            ConnectionPhase::Transport,
            None,
            attempt,
        );
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        let timeout = record
            .timeouts
            .connect()
            .unwrap_or(inner.opts.connect_timeout());
        let on_lost = {
            let slot = Arc::downgrade(self);
            let pool = Arc::downgrade(inner);
            Box::new(move |reason: String| on_lost(slot, pool, generation, reason))
        };
        let span = tracing::info_span!("mcpmux.connect", server = %record.name, transport = record.transport.as_str());
        let open = Connection::open(
            &record,
            self.shared.clone(),
            generation,
            inner.opts.max_message_bytes,
            inner.opts.tools_ttl(),
            on_lost,
        )
        .instrument(span);
        let result = tokio::select! {
            r = tokio::time::timeout(timeout, open) => r.unwrap_or_else(|_| Err(Error::Timeout {
                what: format!("connecting to server '{}'", record.name),
                after: timeout,
            })),
            _ = inner.shutdown.cancelled() => Err(Error::ShuttingDown),
        };
        match result {
            Ok(conn) => {
                if let Some(announced) = conn.peer.peer_info() {
                    let about = inner
                        .catalog
                        .set_about(&self.id, ServerInfo::from_handshake(&announced));
                    *self.about.write().unwrap() = Some(about);
                }
                self.live.lock().unwrap().conn = Some(conn.clone());
                self.refresh_tools(inner);
                self.set_state(
                    inner,
                    Unless::Never,
                    ConnectionState::Connected,
                    ConnectionPhase::Ready,
                    None,
                    attempt,
                );
                inner.events.emit(Event::ServerConnected {
                    server_id: self.id.clone(),
                    server_name: record.name.clone(),
                    protocol_version: conn.protocol_version.clone(),
                });
                tracing::info!(server = %record.name, protocol = %conn.protocol_version, "connected");
                Ok(conn)
            }
            Err(e) => {
                self.set_state(
                    inner,
                    Unless::Never,
                    ConnectionState::Error,
                    ConnectionPhase::Failed,
                    Some(e.to_string()),
                    attempt,
                );
                Err(e)
            }
        }
    }

    /// Health check: `server/discover` for 2026-07-28 servers (which have no `ping`), `ping`
    /// for older ones, and a `tools/list` for servers that answer neither.
    pub async fn check(&self, inner: &Inner, conn: &Connection) -> Result<()> {
        let timeout = Duration::from_secs(5).min(inner.opts.request_timeout());
        let send = |req: ClientRequest| async {
            conn.peer
                .send_request_with_option(req, PeerRequestOptions::with_timeout(timeout))
                .await?
                .await_response()
                .await
        };
        let first = if conn.modern {
            send(ClientRequest::DiscoverRequest(DiscoverRequest::new(
                DiscoverRequestParams {},
            )))
            .await
        } else {
            send(ClientRequest::PingRequest(PingRequest::default())).await
        };
        let result = match first {
            Err(ServiceError::McpError(e)) if e.code == ErrorCode::METHOD_NOT_FOUND => {
                send(ClientRequest::ListToolsRequest(Default::default())).await
            }
            other => other,
        };
        result
            .map(|_| ())
            .map_err(|e| Error::connection(self.name(), format!("health check failed: {e}")))
    }

    /// Forgets a connection that is already dead, if it is still the current one.
    fn forget(&self, conn: &Arc<Connection>) -> bool {
        let mut live = self.live.lock().unwrap();
        let current = live.conn.as_ref().is_some_and(|c| Arc::ptr_eq(c, conn));
        if current {
            live.conn = None;
        }
        current
    }

    /// Closes `conn` on purpose and reports why.
    pub async fn drop_connection(
        &self,
        inner: &Inner,
        conn: &Arc<Connection>,
        phase: ConnectionPhase,
        error: Option<String>,
    ) {
        if !self.forget(conn) {
            // Already replaced or dropped; whoever did that reported the state.
            conn.close(Duration::from_secs(2)).await;
            return;
        }
        conn.close(Duration::from_secs(2)).await;
        let state = if error.is_some() {
            ConnectionState::Error
        } else {
            ConnectionState::Disconnected
        };
        self.set_state(inner, Unless::Connected, state, phase, error, None);
    }

    /// Whether a request may be using the slot: one holds its connection, or is connecting.
    pub fn in_use(&self) -> bool {
        self.connect_lock.try_lock().is_err()
            || self
                .live
                .lock()
                .unwrap()
                .conn
                .as_ref()
                .is_some_and(|c| Arc::strong_count(c) > 1)
    }

    /// Closes the current connection, if any (disconnect, update, remove, shutdown).
    pub async fn disconnect(&self, inner: &Inner) {
        let conn = self.live.lock().unwrap().conn.take();
        if let Some(conn) = conn {
            conn.close(Duration::from_secs(2)).await;
            self.set_closed(inner);
        }
    }

    /// The error of a request of `method` that failed on `conn` with `e`: the connection is
    /// marked dead if it is, and a stdio server that crashed says how.
    pub async fn request_failed(
        self: &Arc<Self>,
        inner: &Arc<Inner>,
        conn: &Arc<Connection>,
        method: &str,
        e: rmcp::ServiceError,
    ) -> Error {
        self.connection_failed(inner, conn);
        let error = conn.failure(&self.name(), method, e);
        conn.explain(method, error).await
    }

    /// Marks the current connection dead after a call found its transport closed.
    pub fn connection_failed(self: &Arc<Self>, inner: &Arc<Inner>, conn: &Arc<Connection>) {
        if conn.is_alive() {
            return;
        }
        let (slot, pool, generation) =
            (Arc::downgrade(self), Arc::downgrade(inner), conn.generation);
        const CLOSED: &str = "transport closed during a request";
        if conn.child_pid.is_none() || conn.refused_a_message() {
            return on_lost(slot, pool, generation, CLOSED.into());
        }
        // A stdio server that crashed is reported by its session's end, with how it exited
        // and its stderr; the call that found the pipe closed is usually first to know, and
        // must not report the loss without them. This covers a session that outlives its
        // pipe: after the wait, the loss is reported anyway.
        let conn = conn.clone();
        tokio::spawn(async move {
            let reason = conn
                .exit_report(crate::pool::session::connection::EXIT_REPORT_WAIT)
                .await;
            on_lost(
                slot,
                pool,
                generation,
                reason.unwrap_or_else(|| CLOSED.into()),
            );
        });
    }
}

/// Called when a connection ends by itself: report it and start reconnecting.
fn on_lost(slot: Weak<Slot>, pool: Weak<Inner>, generation: u64, reason: String) {
    let (Some(slot), Some(inner)) = (slot.upgrade(), pool.upgrade()) else {
        return;
    };
    {
        let mut live = slot.live.lock().unwrap();
        match &live.conn {
            Some(c) if c.generation == generation => live.conn = None,
            _ => return,
        }
    }
    tracing::warn!(server = %slot.name(), %reason, "connection lost");
    slot.set_state(
        &inner,
        Unless::Connected,
        ConnectionState::Disconnected,
        ConnectionPhase::Lost,
        Some(format!("connection lost: {reason}")),
        None,
    );
    if inner.opts.auto_reconnect && !inner.closing.load(Ordering::SeqCst) {
        spawn_reconnect(slot, inner);
    }
}

/// Reconnects with backoff `min(30 s, 1 s × 2^attempt)` until it works, the attempt cap is
/// reached, or the server is connected by someone else (a call connecting lazily).
pub(crate) fn spawn_reconnect(slot: Arc<Slot>, inner: Arc<Inner>) {
    if slot.reconnecting.swap(true, Ordering::SeqCst) {
        return;
    }
    let weak = Arc::downgrade(&inner);
    let shutdown = inner.shutdown.clone();
    drop(inner);
    tokio::spawn(async move {
        let mut attempt = 0;
        let max = weak.upgrade().map_or(0, |i| i.opts.max_reconnect_attempts);
        while attempt < max {
            let delay = backoff(attempt);
            if let Some(inner) = weak.upgrade() {
                // What ended the connection (or failed the last attempt) stays the state's
                // error while it waits: a host that shows the state has the reason to show.
                let why = slot.live.lock().unwrap().error.clone();
                slot.set_state(
                    &inner,
                    Unless::Connected,
                    ConnectionState::Disconnected,
                    ConnectionPhase::Backoff,
                    why,
                    Some(attempt + 1),
                );
            }
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = shutdown.cancelled() => break,
            }
            let Some(inner) = weak.upgrade() else { break };
            if slot.removed.load(Ordering::SeqCst) || !slot.record().runs() {
                break;
            }
            let _guard = slot.connect_lock.lock().await;
            if slot.current().is_some_and(|c| c.is_alive()) {
                break;
            }
            match slot.connect_locked(&inner, Some(attempt + 1)).await {
                Ok(_) => break,
                Err(Error::ShuttingDown) => break,
                Err(_) => attempt += 1,
            }
        }
        slot.reconnecting.store(false, Ordering::SeqCst);
    });
}

impl Slot {
    /// The interval health check: only idle, live connections, and never while a connect runs.
    pub async fn background_check(self: &Arc<Self>, inner: &Arc<Inner>) {
        let Some(c) = self.current() else { return };
        if !c.is_alive() || c.idle_for() < inner.opts.health_idle() {
            return;
        }
        let Ok(_guard) = self.connect_lock.try_lock() else {
            return;
        };
        match self.check(inner, &c).await {
            Ok(()) => c.touch(),
            Err(e) => {
                self.drop_connection(inner, &c, ConnectionPhase::Unhealthy, Some(e.to_string()))
                    .await;
                drop(_guard);
                if inner.opts.auto_reconnect && !inner.closing.load(Ordering::SeqCst) {
                    spawn_reconnect(self.clone(), inner.clone());
                }
            }
        }
    }

    /// The time a request of this server's other than a call may take: its record's
    /// `requestMs`, else the pool's request timeout.
    pub fn request_limit(&self, inner: &Inner) -> Duration {
        let recorded = self.record.read().unwrap().timeouts.request();
        recorded.unwrap_or(inner.opts.request_timeout())
    }

    /// `request`'s answer, or the error of a request of `method` that failed or got no
    /// answer within the server's request timeout: a server that never answers (stuck, or
    /// its answer lost with its session) must not hold its caller. At the timeout `request`
    /// is dropped, which tells the server the request is cancelled when rmcp sent it so
    /// (its verbs that follow input rounds, and completions), and the connection is checked.
    pub async fn answer<T>(
        self: &Arc<Self>,
        inner: &Arc<Inner>,
        conn: &Arc<Connection>,
        method: &str,
        request: impl Future<Output = std::result::Result<T, rmcp::ServiceError>>,
    ) -> Result<T> {
        let limit = self.request_limit(inner);
        // Boxed: an rmcp request's future is some 7 KB, and every future awaiting this one
        // (a served request's, spawned and moved whole) would carry it.
        match tokio::time::timeout(limit, Box::pin(request)).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(e)) => Err(self.request_failed(inner, conn, method, e).await),
            Err(_) => Err(self.no_answer(inner, conn, method, limit)),
        }
    }

    /// The error of a request of `method` that got no answer within `limit`; the connection
    /// is checked meanwhile, and replaced if it is dead (an answer lost with its session).
    pub fn no_answer(
        self: &Arc<Self>,
        inner: &Arc<Inner>,
        conn: &Arc<Connection>,
        method: &str,
        limit: Duration,
    ) -> Error {
        self.verify_in_background(inner, conn);
        Error::Timeout {
            what: format!("{method} of server '{}'", self.name()),
            after: limit,
        }
    }

    /// Checks a connection after a request timed out, and drops it if it fails.
    pub fn verify_in_background(self: &Arc<Self>, inner: &Arc<Inner>, conn: &Arc<Connection>) {
        let (slot, inner, conn) = (self.clone(), inner.clone(), conn.clone());
        tokio::spawn(async move {
            if let Err(e) = slot.check(&inner, &conn).await {
                slot.drop_connection(
                    &inner,
                    &conn,
                    ConnectionPhase::Unhealthy,
                    Some(e.to_string()),
                )
                .await;
            }
        });
    }
}

impl Slot {
    /// The current connection if it is alive; never connects.
    /// Whether its last connection attempts failed (state `error`).
    pub fn is_failing(&self) -> bool {
        self.live.lock().unwrap().state == ConnectionState::Error
    }

    pub fn live_connection(&self) -> Option<Arc<Connection>> {
        self.current().filter(|c| c.is_alive())
    }
}
