//! One live MCP session with one server, whatever its transport.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::ClientHandler;
use rmcp::model::{ProtocolVersion, RequestMetaObject};
use rmcp::service::{
    ClientCacheConfig, ClientInitializeError, ClientLifecycleMode, ClientServiceExt,
    RunningService, RunningServiceCancellationToken, ServiceError,
};
use rmcp::transport::Transport;
use rmcp::{Peer, RoleClient};
use tokio_util::sync::CancellationToken;

use super::layer::SessionLayer;
use crate::config::record::{ServerRecord, TransportType};
use crate::error::{Error, Result, with_causes};
use crate::pool::session::client_side::{ClientSide, ServerShared};
use crate::pool::session::listen::{self, Listener};
use crate::pool::session::logs;
use crate::transport::direct::Direct;
use crate::transport::limit::MessageLimit;
use crate::transport::stdio::ChildProcess;
use crate::transport::{http, sse, stdio, websocket};
use crate::wire::call_params::SessionMeta;

/// A connected session. Dropping it ends the session and kills a stdio child.
pub(crate) struct Connection {
    pub peer: Peer<RoleClient>,
    pub protocol_version: String,
    /// Spoke the stateless 2026-07-28 protocol (health checks use `server/discover`).
    pub modern: bool,
    pub generation: u64,
    pub child_pid: Option<u32>,
    /// The fast request path of a stdio session (see `transport::direct`).
    pub direct: Option<Arc<Direct>>,
    /// What a 2026-07-28 session requires in every request's `_meta` (rmcp adds it to its own
    /// requests; direct ones carry this copy, written as JSON once).
    pub request_meta: Option<SessionMeta>,
    /// The `subscriptions/listen` stream of a 2026-07-28 session.
    pub listener: Option<Listener>,
    /// Opened with OAuth tokens: who it acts for is the tokens' principal, not its config
    /// alone (a list the server marks private is kept for this pool only).
    pub authorized: bool,
    /// Streamable HTTP: a call marked with its caller's number gets it back on the server's
    /// requests during the call (see `transport::related_call`).
    pub relates_calls: bool,
    /// The record's config key when this connection opened: lists it fetches are saved
    /// under it, even if the record changes meanwhile.
    pub config_key: String,
    /// The size limit its transport enforces, and whether a message went past it.
    limit: Arc<MessageLimit>,
    cancel: Mutex<Option<RunningServiceCancellationToken>>,
    ended: CancellationToken,
    /// How a stdio server that ended by itself exited (status and stderr), once known: set
    /// before `ended` is cancelled.
    exit_report: Arc<std::sync::OnceLock<String>>,
    intentional: Arc<AtomicBool>,
    child: Arc<tokio::sync::Mutex<Option<ChildProcess>>>,
    last_used: Stamp,
    /// When a request last took this connection (health checks do not count), for idle stop.
    last_request: Stamp,
}

/// A moment, as nanoseconds since the first one the process took: what a connection's stamps
/// hold, compared as integers. Every call reads and writes two stamps, and `Instant`
/// arithmetic normalizes seconds and nanoseconds (and divides) at each step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Moment(u64);

impl Moment {
    pub fn now() -> Moment {
        static FIRST: std::sync::LazyLock<Instant> = std::sync::LazyLock::new(Instant::now);
        Moment(u64::try_from(FIRST.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }

    /// How long after `earlier` this is (zero if it is not after).
    fn since(self, earlier: Moment) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// Whether this comes less than `limit` after `earlier`.
    fn within(self, earlier: Moment, limit: Duration) -> bool {
        u128::from(self.0.saturating_sub(earlier.0)) < limit.as_nanos()
    }
}

/// A moment kept in an atomic: every call reads and writes the connection's two, so without
/// a lock.
struct Stamp(AtomicU64);

impl Stamp {
    fn new() -> Stamp {
        Stamp(AtomicU64::new(Moment::now().0))
    }

    fn set(&self, at: Moment) {
        self.0.store(at.0, Ordering::Relaxed);
    }

    fn get(&self) -> Moment {
        Moment(self.0.load(Ordering::Relaxed))
    }

    fn elapsed(&self) -> Duration {
        Moment::now().since(self.get())
    }
}

/// How long a request that found a stdio server's pipe closed waits to hear how it exited:
/// the session task waits up to 200 ms for the exit status and as long for stderr's end.
pub(crate) const EXIT_REPORT_WAIT: Duration = Duration::from_millis(500);

/// Why a connection ended without being asked to.
pub(crate) type OnLost = Box<dyn FnOnce(String) + Send + 'static>;

/// How a handshake establishes the session.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lifecycle {
    /// `server/discover` preferring 2026-07-28, else `initialize` (rmcp's probe, 10 s).
    Auto,
    /// `initialize` alone, for servers up to 2025-11-25.
    Initialize,
    /// `server/discover` alone, with no probe timeout: the pool's connect timeout bounds it.
    Discover,
}

/// How to run a failed first handshake again, on a new transport, if it is worth it:
/// - `initialize` alone for a server up to 2025-11-25 that answers `server/discover` with a
///   result instead of "method not found" (some answer every unknown method with `{}`): rmcp
///   cannot take that as legacy;
/// - `initialize` alone for a legacy server that answered the probe after rmcp's 10 s probe
///   timeout (slow to start, e.g. `npx` on a busy machine): rmcp had sent `initialize` by
///   then, and the late error to the probe fails that handshake as an uncorrelated response;
/// - `server/discover` alone for a 2026-07-28 server slow to start in the same way: its late
///   result to the probe (the only request before `initialize`) is a response with another
///   id than the `initialize` rmcp waits for. It speaks the new protocol, so it is asked that
///   way again, without the probe's timeout to miss.
fn retry_after(e: &ClientInitializeError) -> Option<Lifecycle> {
    match e {
        ClientInitializeError::ExpectedInitResult(_)
        | ClientInitializeError::UncorrelatedErrorResponse { .. } => Some(Lifecycle::Initialize),
        ClientInitializeError::ConflictInitResponseId(..) => Some(Lifecycle::Discover),
        _ => None,
    }
}

/// The error of a handshake tried again (`retry_after`) that failed too: the retry's, and how
/// the first try failed, which the retry's alone hides (a server that answered the probe
/// oddly and then died on `initialize` would read as a crash at start).
fn retry_failed(first: &ClientInitializeError, lifecycle: Lifecycle, retry: Error) -> Error {
    let asked = match lifecycle {
        Lifecycle::Initialize => "`initialize` alone",
        Lifecycle::Discover | Lifecycle::Auto => "`server/discover` alone",
    };
    let first = handshake_error(first);
    let first = first.strip_prefix("handshake failed: ").unwrap_or(&first);
    match retry {
        // The retry's message last: it may end with the server's stderr.
        Error::Connection { server, message } => Error::Connection {
            server,
            message: format!(
                "the first handshake failed ({first}); asked again with {asked}: {message}"
            ),
        },
        other => other,
    }
}

/// A stdio handshake that failed: its error, the limit of its transport, and how the server
/// exited, if it did.
struct FailedChild {
    error: ClientInitializeError,
    limit: Arc<MessageLimit>,
    exited: Option<String>,
}

/// The live session a handshake gave, with what the connection keeps of its transport.
struct Session {
    service: RunningService<RoleClient, ClientSide>,
    child: Option<ChildProcess>,
    direct: Option<Arc<Direct>>,
    /// The limit of the transport that made it (each try on a new transport has its own).
    limit: Arc<MessageLimit>,
    /// Its transport carries OAuth tokens.
    authorized: bool,
    /// Streamable HTTP: a call's requests from the server come on the call's own stream.
    streamable: bool,
}

/// One `Connection::open`: the record, the server's shared state, and the steps that open a
/// transport and run the handshake on it.
struct Opening<'a> {
    record: &'a ServerRecord,
    shared: &'a Arc<ServerShared>,
    max_message: usize,
}

impl Opening<'_> {
    /// The client side of the session; `legacy` for the `initialize` handshake.
    fn handler(&self, legacy: bool) -> ClientSide {
        ClientSide {
            shared: self.shared.clone(),
            server_name: self.record.name.clone(),
            legacy,
        }
    }

    /// A new transport's message limit.
    fn new_limit(&self) -> Arc<MessageLimit> {
        Arc::new(MessageLimit::new(self.max_message))
    }

    /// The handshake's error as mcpmux's: a message over the limit says so.
    fn failed(&self, limit: &MessageLimit, e: ClientInitializeError) -> Error {
        let name = self.record.name.as_str();
        limit
            .error(name)
            .unwrap_or_else(|| Error::connection(name, handshake_error(&e)))
    }

    /// The handshake on `transport`, as `lifecycle` says.
    async fn handshake<T>(
        &self,
        transport: T,
        lifecycle: Lifecycle,
    ) -> std::result::Result<RunningService<RoleClient, ClientSide>, ClientInitializeError>
    where
        T: Transport<RoleClient> + Send + 'static,
        T::Error: std::error::Error + Send + Sync + 'static,
    {
        let mode = match lifecycle {
            Lifecycle::Initialize => ClientLifecycleMode::Initialize,
            Lifecycle::Discover => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
            Lifecycle::Auto => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                // `initialize` is the pre-2026 handshake: offer the newest version that has it.
                legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
            },
        };
        let transport = SessionLayer::new(transport, self.shared);
        self.handler(lifecycle == Lifecycle::Initialize)
            .serve_with_lifecycle(transport, mode)
            .await
    }

    /// A session over a transport that has nothing else to try (SSE, WebSocket).
    async fn session<T>(&self, transport: T, limit: Arc<MessageLimit>) -> Result<Session>
    where
        T: Transport<RoleClient> + Send + 'static,
        T::Error: std::error::Error + Send + Sync + 'static,
    {
        let service = self
            .handshake(transport, Lifecycle::Auto)
            .await
            .map_err(|e| self.failed(&limit, e))?;
        Ok(Session::remote(service, limit))
    }

    /// stdio: spawn the server and run the handshake; a server that needs another handshake
    /// (`retry_after`) gets a new process for it.
    /// A session over the record's transport, handshake done. Every way to a server's
    /// process or remote session comes through here (a use, a test, a per-client connection,
    /// a reconnect), so a server that waits for approval is refused here.
    async fn session_of_record(&self) -> Result<Session> {
        self.record.approved()?;
        match self.record.transport {
            TransportType::Stdio => self.stdio().await,
            TransportType::Http => self.http().await,
            TransportType::Sse => {
                let limit = self.new_limit();
                let events = self.shared.events.clone();
                let transport = sse::open(self.record, events, limit.clone()).await?;
                self.session(transport, limit).await
            }
            TransportType::Websocket => {
                let limit = self.new_limit();
                let events = self.shared.events.clone();
                let transport = websocket::open(self.record, events, limit.clone()).await?;
                self.session(transport, limit).await
            }
        }
    }

    async fn stdio(&self) -> Result<Session> {
        let failed = match self.spawned_session(Lifecycle::Auto).await? {
            Ok(session) => return Ok(session),
            Err(failed) => failed,
        };
        match retry_after(&failed.error) {
            Some(lifecycle) => self
                .spawned_session(lifecycle)
                .await?
                .map_err(|retry| retry_failed(&failed.error, lifecycle, self.failed_child(retry))),
            None => Err(self.failed_child(failed)),
        }
    }

    /// Spawns the server and runs the handshake on its pipes. A failed handshake ends the
    /// process and comes back with what that try knows of why.
    async fn spawned_session(
        &self,
        lifecycle: Lifecycle,
    ) -> Result<std::result::Result<Session, FailedChild>> {
        let limit = self.new_limit();
        let (transport, mut child) =
            stdio::spawn(self.record, self.shared.events.clone(), limit.clone())?;
        let direct = Some(transport.direct());
        Ok(match self.handshake(transport, lifecycle).await {
            Ok(service) => Ok(Session {
                streamable: false,
                service,
                child: Some(child),
                direct,
                limit,
                authorized: false,
            }),
            Err(error) => {
                // A closed pipe is most often a server that died as it started: how, and
                // what it said on stderr, is what its user needs to read.
                let exited = match error {
                    ClientInitializeError::ConnectionClosed(_)
                    | ClientInitializeError::TransportError { .. } => {
                        child
                            .exit_report(Duration::from_millis(500), " before it answered")
                            .await
                    }
                    _ => None,
                };
                child.terminate(Duration::from_millis(200)).await;
                Err(FailedChild {
                    error,
                    limit,
                    exited,
                })
            }
        })
    }

    /// A failed stdio handshake as mcpmux's error: over the limit, the server's exit, or the
    /// handshake's own error, in that order.
    fn failed_child(&self, failed: FailedChild) -> Error {
        match failed.exited {
            Some(exited) if failed.limit.error(&self.record.name).is_none() => {
                Error::connection(&self.record.name, exited)
            }
            _ => self.failed(&failed.limit, failed.error),
        }
    }

    /// Streamable HTTP, with stored OAuth tokens if there are any. Then, by how the first try
    /// failed: `initialize` alone; authorizing (the host's handler, or the browser) and again
    /// with the tokens; or legacy HTTP+SSE at the same URL.
    async fn http(&self) -> Result<Session> {
        let (record, shared) = (self.record, self.shared);
        let store = shared.host.token_store();
        // Tokens saved earlier, or a client-credentials grant, go with the first try.
        let oauth = shared.host.oauth_handler();
        // Where a step-up's grant comes back: the host's URI, or a new loopback.
        let redirect_uri = oauth
            .as_ref()
            .map(|h| h.redirect_uri.clone())
            .unwrap_or_default();
        // The server's DPoP key and nonces, for its OAuth requests and its MCP requests alike.
        let dpop = Arc::new(crate::auth::Dpop::default());
        let grantor = |redirect_uri: String, handler| crate::auth::Grantor {
            record: record.clone(),
            store: store.clone(),
            handler,
            id_tokens: shared.host.id_token_provider(),
            redirect_uri,
            dpop: dpop.clone(),
        };
        let limit = self.new_limit();
        let manager = crate::auth::stored_manager(record, store.clone(), &dpop).await?;
        let with_tokens = manager.is_some();
        let first = match manager {
            Some(manager) => {
                let grantor = grantor(redirect_uri.clone(), oauth.clone());
                let transport = http::open_authorized(record, &limit, manager, grantor)?;
                self.handshake(transport, Lifecycle::Auto).await
            }
            None => {
                let transport = http::open(record, &limit)?;
                self.handshake(transport, Lifecycle::Auto).await
            }
        };
        let e = match first {
            Ok(service) if with_tokens => {
                return Ok(Session::remote(service, limit).authorized().streamable());
            }
            Ok(service) => return Ok(Session::remote(service, limit).streamable()),
            Err(e) => e,
        };
        if let Some(lifecycle) = retry_after(&e) {
            let limit = self.new_limit();
            let service = self
                .handshake(http::open(record, &limit)?, lifecycle)
                .await
                .map_err(|retry| retry_failed(&e, lifecycle, self.failed(&limit, retry)))?;
            return Ok(Session::remote(service, limit).streamable());
        }
        if e.is_authorization_required() {
            // A token the user wrote into the config is what was refused: say so, rather than
            // start a sign-in the user did not ask for (and that fails on a server without
            // OAuth, naming its registration endpoint instead of the token).
            if record
                .config
                .headers
                .keys()
                .any(|k| k.eq_ignore_ascii_case("authorization"))
            {
                return Err(Error::connection(
                    &record.name,
                    "the server refused the Authorization header set in its config (401 \
                     Unauthorized): check the token, or remove the header to sign in with \
                     OAuth instead",
                ));
            }
            let challenge = e.auth_challenge().map(str::to_string);
            let (manager, redirect_uri) = crate::auth::authorize(
                record,
                challenge,
                store.clone(),
                oauth.clone(),
                shared.host.id_token_provider(),
                &dpop,
            )
            .await?;
            let limit = self.new_limit();
            let grantor = grantor(redirect_uri, oauth);
            let transport = http::open_authorized(record, &limit, manager, grantor)?;
            return Ok(self
                .session(transport, limit)
                .await?
                .authorized()
                .streamable());
        }
        if record.config.strict_transport || limit.is_exceeded() {
            return Err(self.failed(&limit, e));
        }
        // As the TypeScript and Python clients do: a server that does not speak Streamable
        // HTTP may be a legacy HTTP+SSE one at the same URL. (Its limit is untouched: the
        // check above took every refusal.)
        let Ok(transport) = sse::open(record, shared.events.clone(), limit.clone()).await else {
            return Err(Error::connection(&record.name, handshake_error(&e)));
        };
        let session = self.session(transport, limit).await?;
        shared.events.emit(crate::events::Event::Log {
            server_id: record.id.clone(),
            level: "notice".into(),
            source: "transport".into(),
            message: format!(
                "Streamable HTTP failed ({}); connected over legacy HTTP+SSE",
                handshake_error(&e)
            ),
        });
        Ok(session)
    }
}

impl Session {
    /// A session with no process of its own and no direct path.
    fn remote(service: RunningService<RoleClient, ClientSide>, limit: Arc<MessageLimit>) -> Self {
        Session {
            service,
            child: None,
            direct: None,
            limit,
            authorized: false,
            streamable: false,
        }
    }

    /// The same, over Streamable HTTP.
    fn streamable(self) -> Self {
        Session {
            streamable: true,
            ..self
        }
    }

    /// The same, over a transport with OAuth tokens.
    fn authorized(self) -> Self {
        Session {
            authorized: true,
            ..self
        }
    }
}

impl Connection {
    /// Opens the transport and runs the handshake: `server/discover` first, falling back to
    /// the legacy `initialize` for servers up to 2025-11-25.
    pub async fn open(
        record: &ServerRecord,
        shared: Arc<ServerShared>,
        generation: u64,
        max_message: usize,
        tools_ttl: Duration,
        on_lost: OnLost,
    ) -> Result<Arc<Connection>> {
        let opening = Opening {
            record,
            shared: &shared,
            max_message,
        };
        let Session {
            service,
            child,
            direct,
            limit,
            authorized,
            streamable,
        } = opening.session_of_record().await?;
        let peer = service.peer().clone();
        peer.set_response_cache_config(response_cache(tools_ttl))
            .await;
        let protocol_version = peer
            .peer_info()
            .map(|i| i.protocol_version.to_string())
            .unwrap_or_default();
        let modern = protocol_version.as_str() >= "2026-07-28";
        let request_meta = peer
            .peer_info()
            .filter(|i| !i.protocol_version.has_initialize())
            .map(|i| {
                let info = opening.handler(false).get_info();
                let meta = RequestMetaObject::with_client_context(
                    i.protocol_version.clone(),
                    info.client_info,
                    info.capabilities,
                );
                SessionMeta::new(&meta)
            })
            .transpose()
            .map_err(|e| Error::connection(&record.name, format!("client info as JSON: {e}")))?;
        let ended = CancellationToken::new();
        let intentional = Arc::new(AtomicBool::new(false));
        let cancel = service.cancellation_token();
        let child_pid = child.as_ref().map(ChildProcess::pid);
        let child = Arc::new(tokio::sync::Mutex::new(child));
        let exit_report = Arc::new(std::sync::OnceLock::new());
        {
            let ended = ended.clone();
            let intentional = intentional.clone();
            let child = child.clone();
            let exit_report = exit_report.clone();
            tokio::spawn(async move {
                let mut reason = match service.waiting().await {
                    Ok(r) => format!("{r:?}"),
                    Err(e) => format!("session task failed: {e}"),
                };
                // A server that crashed says how, and often why on stderr: the state a host
                // shows reads that rather than rmcp's "Closed". Waited for briefly, before
                // the calls in flight are failed, so that one of them does not report first.
                if !intentional.load(Ordering::SeqCst)
                    && let Some(child) = child.lock().await.as_mut()
                    && let Some(exited) = child.exit_report(Duration::from_millis(200), "").await
                {
                    let _ = exit_report.set(exited.clone());
                    reason = exited;
                }
                ended.cancel();
                if !intentional.load(Ordering::SeqCst) {
                    on_lost(reason);
                }
            });
        }
        // Before the connection is handed out: its first tool list cannot miss a change, and
        // the host's subscriptions hold again when it is.
        let listener = if modern {
            Some(Listener::start(peer.clone(), shared.clone(), ended.clone()).await)
        } else {
            listen::resubscribe(&peer, &shared).await;
            logs::set_legacy_log_level(&peer, &shared).await;
            None
        };
        Ok(Arc::new(Connection {
            listener,
            authorized,
            relates_calls: streamable,
            child_pid,
            direct,
            request_meta,
            config_key: record.config_key(shared.host.offers_key().as_deref()),
            limit,
            peer,
            protocol_version,
            modern,
            generation,
            cancel: Mutex::new(Some(cancel)),
            ended,
            exit_report,
            intentional,
            child,
            last_used: Stamp::new(),
            last_request: Stamp::new(),
        }))
    }

    pub fn is_alive(&self) -> bool {
        // The direct path hears of the end first: its caller must not find this alive. A
        // connection that refused a message is done too: over HTTP the session would live
        // on, but the pool opens a new one, as for the transports that end there.
        !self.ended.is_cancelled()
            && !self.peer.is_transport_closed()
            && !self.direct.as_ref().is_some_and(|d| d.is_closed())
            && !self.limit.is_exceeded()
    }

    /// The error for a request of `method` to `server` that failed on this connection: that
    /// its reply was too large, when the transport refused a message, else rmcp's failure.
    pub fn failure(&self, server: &str, method: &str, e: ServiceError) -> Error {
        self.too_large(server)
            .unwrap_or_else(|| crate::pool::call::calls::service_error(server, method, e))
    }

    /// How this connection's stdio server exited, if it ended by itself: waits up to `wait`
    /// for the session's end to be known (a call that found the pipe closed hears of it
    /// before the session task has the exit status). None for other transports, a closed
    /// session, or a server still running.
    pub async fn exit_report(&self, wait: Duration) -> Option<String> {
        self.child_pid?;
        let _ = tokio::time::timeout(wait, self.ended.cancelled()).await;
        self.exit_report.get().cloned()
    }

    /// `e`, a request's failure on this connection; when it is a connection error and the stdio
    /// server exited, how it exited (status and stderr) instead of the transport's "Transport
    /// closed": what a host shows its user for the call.
    pub async fn explain(&self, method: &str, e: Error) -> Error {
        if self.child_pid.is_none() || !matches!(e, Error::Connection { .. }) {
            return e;
        }
        match (self.exit_report(EXIT_REPORT_WAIT).await, e) {
            (Some(report), Error::Connection { server, .. }) => {
                Error::connection(server, format!("{method}: {report}"))
            }
            (_, e) => e,
        }
    }

    /// Whether the transport refused a message over the size limit (it ends the session; the
    /// server itself runs on).
    pub fn refused_a_message(&self) -> bool {
        self.limit.is_exceeded()
    }

    /// Whether a failure on this connection came from a message over the size limit.
    pub fn too_large(&self, server: &str) -> Option<Error> {
        self.limit.error(server)
    }

    pub fn touch(&self) {
        self.last_used.set(Moment::now());
    }

    /// Marks the connection used at `now` if it was used within `limit` (no lock: this runs
    /// on every call; two callers at once both write about the same moment).
    pub fn touch_if_fresh(&self, now: Moment, limit: Duration) -> bool {
        let fresh = now.within(self.last_used.get(), limit);
        if fresh {
            self.last_used.set(now);
        }
        fresh
    }

    /// A request takes the connection now.
    pub fn requested(&self) {
        self.requested_at(Moment::now());
    }

    /// A request takes the connection at `now`.
    pub fn requested_at(&self, now: Moment) {
        self.last_request.set(now);
    }

    /// A request's answer came now: the connection was used, and its idle time counts from
    /// here, not from the request's start (one clock read: this runs on every call).
    pub fn answered(&self) {
        let now = Moment::now();
        self.last_used.set(now);
        self.last_request.set(now);
    }

    /// How long since a request last took the connection.
    pub fn unrequested_for(&self) -> Duration {
        self.last_request.elapsed()
    }

    pub fn idle_for(&self) -> Duration {
        self.last_used.elapsed()
    }

    /// Ends the session on purpose (no reconnect follows) and stops a stdio child.
    pub async fn close(&self, grace: Duration) {
        self.intentional.store(true, Ordering::SeqCst);
        if let Some(listener) = &self.listener {
            listener.stop(grace).await;
        }
        if let Some(c) = self.cancel.lock().unwrap().take() {
            c.cancel();
        }
        let _ = tokio::time::timeout(grace, self.ended.cancelled()).await;
        if let Some(child) = self.child.lock().await.as_mut() {
            child.terminate(grace).await;
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.intentional.store(true, Ordering::SeqCst);
        if let Ok(mut c) = self.cancel.lock()
            && let Some(c) = c.take()
        {
            c.cancel();
        }
    }
}

/// rmcp's cache of list and read results (per connection, so per pool), set on purpose: it
/// keeps results no longer than the pool keeps tool lists (`toolsTtlMs`), or the server's
/// `ttlMs` if shorter, and never for a server that gives none; and a failed request is an
/// error, not a stale answer, so the pool sees the failure (its catalog is the fallback).
fn response_cache(tools_ttl: Duration) -> ClientCacheConfig {
    ClientCacheConfig::default()
        .with_default_ttl(Duration::ZERO)
        .with_max_ttl(tools_ttl)
        .with_serve_stale_on_error(false)
}

fn handshake_error(e: &ClientInitializeError) -> String {
    match e {
        // rmcp's own message names the transport's Rust type and its step ("Send message
        // error Transport [rmcp::transport::worker::WorkerTransport<…>] … when send discover
        // request"); what went wrong is in the error's causes.
        ClientInitializeError::TransportError { error, .. } => {
            format!("handshake failed: {}", with_causes(error.error.as_ref()))
        }
        ClientInitializeError::ConnectionClosed(_) => {
            "the server closed the connection before it answered the handshake".into()
        }
        e => format!("handshake failed: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_measure_as_instants_do() {
        let (at, before) = (Moment(5_000), Moment(2_000));
        assert_eq!(at.since(before), Duration::from_nanos(3_000));
        // Taken on two threads, a later stamp may be read first: never a negative age.
        assert_eq!(before.since(at), Duration::ZERO);
        assert!(at.within(before, Duration::from_nanos(3_001)));
        assert!(!at.within(before, Duration::from_nanos(3_000)));
        assert!(Moment(u64::MAX).within(Moment(0), Duration::MAX));

        let stamp = Stamp::new();
        let first = stamp.get();
        std::thread::sleep(Duration::from_millis(20));
        assert!(stamp.elapsed() >= Duration::from_millis(20));
        stamp.set(Moment::now());
        assert!(stamp.get() > first);
        assert!(stamp.elapsed() < Duration::from_millis(20));
    }
}
