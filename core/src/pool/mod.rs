//! The connection pool: one per application, cheap to clone, every method async.

pub(crate) mod call;
mod ext;
mod host;
mod listing;
mod options;
mod server;
mod servers;
pub(crate) mod session;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

pub use call::calls::{CallOptions, CallRound, CallSettings, InputRound, StartedTask, TaskMode};
pub use call::tasks::{TaskFn, TaskRun, TaskUpdate};
pub use ext::app_bridge::{APPS_PROTOCOL_VERSION, AppBridge, AppBridgeOutput};
pub use ext::apps::{
    APP_HTML_MIME_TYPE, APPS_EXTENSION_ID, AppCsp, AppPermissions, AppView, AppsOptions,
};
pub use ext::skills::{LoadedSkill, SkillFile, SkillFileContents, SkillInfo, SkillSource};
#[cfg(feature = "agent")]
pub(crate) use listing::discovery::OutlinedLayer;
pub use listing::discovery::{Conversation, ServerFilter, ToolDef, ToolLayer};
pub use listing::lists::{ListOptions, PromptInfo, ResourceInfo, ResourceTemplateInfo};
pub use listing::unlisted::Unlisted;
pub use options::PoolOptions;
#[cfg(feature = "agent")]
pub use server::server_info::INSTRUCTIONS_CHARS;
pub use server::server_info::ServerInfo;
#[cfg(feature = "agent")]
pub(crate) use server::server_info::bounded as bounded_instructions;
pub use server::slot::ServerStatus;
pub use servers::{AddOutcome, DiscoverResult, ImportResult, TestResult};
pub use session::client_side::{Progress, ProgressFn};

use crate::config::store::ConfigStore;
use crate::error::{Error, Result};
use crate::events::{EventBus, EventReceiver};
use crate::fast_map::FastMap;
use crate::host::Host;
use crate::pool::listing::catalog::Catalog;
use crate::tools::host_tools::HostTools;
use crate::tools::search::SearchIndex;
use crate::widgets::canvas::Canvas;
use crate::widgets::recipes::RecipeRegistry;
use server::slot::Slot;

/// A pool of MCP server connections over one config file.
#[derive(Clone)]
pub struct Pool {
    inner: Arc<Inner>,
    /// The client this view is of, for `perClient` servers (see [`Pool::for_client`]).
    client: Option<Arc<server::client_scope::ClientScope>>,
}

pub(crate) struct Inner {
    store: ConfigStore,
    opts: PoolOptions,
    events: EventBus,
    /// Servers visible to this pool, by id.
    slots: RwLock<FastMap<String, Arc<Slot>>>,
    /// Clients' own connections to `perClient` servers.
    clients: server::client_scope::ClientSlots,
    /// Tool id → (server id, tool name), rebuilt whenever tool lists are fetched.
    tool_index: RwLock<listing::tool_index::ToolIndex>,
    in_flight: AtomicUsize,
    idle: Notify,
    closing: AtomicBool,
    shutdown: CancellationToken,
    host: Arc<Host>,
    local: HostTools,
    recipes: RecipeRegistry,
    canvas: Arc<Canvas>,
    catalog: Catalog,
    /// Bumped whenever tool lists or server records change.
    tools_version: AtomicU64,
    /// The `tools_version` at which every active server's tools were known (see
    /// `pool::listing::unlisted`): until it changes, an answer need not look.
    known_at: AtomicU64,
    search: std::sync::Mutex<Option<(u64, Arc<SearchIndex>)>>,
    /// The known tools described at one `tools_version` (see `pool::search`).
    known: std::sync::Mutex<Option<(u64, Arc<listing::search::KnownTools>)>>,
    /// The last listing of every server's tools (see `pool::full_listing`).
    listing: std::sync::Mutex<Option<Arc<listing::full_listing::FullListing>>>,
    /// The least severe log level someone asked of every server at run time (a served client's
    /// `logging/setLevel`), as `ServerShared` keeps levels: 0 for none.
    pub(crate) log_floor: Arc<std::sync::atomic::AtomicU8>,
}

/// Counts a call in flight (the llama.cpp web UI's activeFlowCount) until dropped.
pub(crate) struct Flight {
    inner: Arc<Inner>,
}

impl Drop for Flight {
    fn drop(&mut self) {
        if self.inner.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.inner.idle.notify_waiters();
        }
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("config", &self.inner.store.path())
            .field("servers", &self.inner.slots.read().unwrap().len())
            .finish()
    }
}

impl Pool {
    /// Opens the pool over the config file named by `options` (nothing connects yet).
    pub async fn open(options: PoolOptions) -> Result<Pool> {
        let path = match &options.config_path {
            Some(p) => p.clone(),
            None => ConfigStore::default_path()?,
        };
        let store = ConfigStore::new(path);
        // The catalog is a cache beside the config: read both off the async threads.
        let (records, catalog) = {
            let store = store.clone();
            blocking(move || Ok((store.load()?, Catalog::open(store.path())))).await?
        };
        let inner = Arc::new(Inner {
            events: EventBus::new(1024),
            slots: RwLock::new(FastMap::default()),
            clients: Default::default(),
            tool_index: RwLock::new(FastMap::default()),
            in_flight: AtomicUsize::new(0),
            idle: Notify::new(),
            closing: AtomicBool::new(false),
            shutdown: CancellationToken::new(),
            host: {
                let host = Host::default();
                host.set_apps(options.apps.clone());
                host.set_token_store(Arc::new(crate::auth::FileTokenStore::new(
                    crate::config::store::sibling(store.path(), ".tokens.json"),
                )));
                Arc::new(host)
            },
            local: HostTools::default(),
            recipes: RecipeRegistry::default(),
            canvas: Arc::new(Canvas::default()),
            catalog,
            tools_version: AtomicU64::new(0),
            known_at: AtomicU64::new(u64::MAX),
            search: std::sync::Mutex::new(None),
            known: std::sync::Mutex::new(None),
            listing: std::sync::Mutex::new(None),
            log_floor: Arc::default(),
            opts: options,
            store,
        });
        let _ = inner.sync_slots(records).await;
        if let Some(every) = inner.opts.health_interval() {
            tokio::spawn(health_loop(
                Arc::downgrade(&inner),
                every,
                inner.shutdown.clone(),
            ));
        }
        if let Some(idle) = inner.opts.idle_stop() {
            tokio::spawn(idle_loop(
                Arc::downgrade(&inner),
                idle,
                inner.shutdown.clone(),
            ));
        }
        Ok(Pool {
            inner,
            client: None,
        })
    }

    /// The path of the config file.
    pub fn config_path(&self) -> &std::path::Path {
        self.inner.store.path()
    }

    pub fn options(&self) -> &PoolOptions {
        &self.inner.opts
    }

    #[cfg(feature = "serve")]
    /// Cancelled when the pool closes, for what serves it (see `serve::http`); a closed
    /// pool is `ShuttingDown`.
    pub(crate) fn closed(&self) -> Result<CancellationToken> {
        drop(self.inner.begin()?);
        Ok(self.inner.shutdown.child_token())
    }

    /// Subscribes to pool events.
    pub fn events(&self) -> EventReceiver {
        self.inner.events.subscribe()
    }

    /// The pool's events that change a list (tools, prompts, resources, servers) only: a
    /// subscriber that waits on those alone is not woken by every call.
    pub fn list_changes(&self) -> EventReceiver {
        self.inner.events.subscribe_lists()
    }

    /// Sends an event to the pool's subscribers (the agent reports its turns this way).
    pub(crate) fn emit(&self, event: crate::events::Event) {
        self.inner.events.emit(event);
    }

    /// Connection state of every visible server.
    pub fn server_states(&self) -> Vec<ServerStatus> {
        let mut v: Vec<_> = self.inner.slots().iter().map(|s| s.status()).collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// What a server (id or name) said of itself at its last connection (`serverInfo`,
    /// `instructions`, `capabilities`, protocol version), known before it connects in this
    /// pool when the catalog has it.
    pub fn server_info(&self, server: &str) -> Result<Option<ServerInfo>> {
        Ok(self.inner.slot(server)?.about().map(|a| (*a).clone()))
    }

    #[cfg(feature = "agent")]
    /// A server's instructions, if it gave any.
    pub(crate) fn server_instructions(&self, server_id: &str) -> Option<String> {
        let slot = self.inner.slot(server_id).ok()?;
        slot.about().and_then(|a| a.instructions.clone())
    }

    /// Connects one server now (servers otherwise connect on first use).
    pub async fn connect(&self, server: &str) -> Result<ServerStatus> {
        let slot = self.inner.slot(server)?;
        slot.connection(&self.inner).await?;
        Ok(slot.status())
    }

    /// Connects every active server, a bounded number at a time. One failing server never
    /// blocks or fails the others: each outcome is in the returned states.
    pub async fn connect_all(&self) -> Vec<ServerStatus> {
        use futures::StreamExt;
        futures::stream::iter(self.inner.active_slots())
            .for_each_concurrent(self.inner.opts.connect_concurrency.max(1), |slot| {
                let inner = self.inner.clone();
                async move {
                    let _ = slot.connection(&inner).await;
                }
            })
            .await;
        self.server_states()
    }

    /// Closes one server's connection; it reconnects on next use.
    pub async fn disconnect(&self, server: &str) -> Result<()> {
        let slot = self.inner.slot(server)?;
        slot.disconnect(&self.inner).await;
        Ok(())
    }

    /// Calls currently in flight.
    pub fn in_flight(&self) -> usize {
        self.inner.in_flight.load(Ordering::SeqCst)
    }

    /// Shuts down: refuses new calls, waits for calls in flight up to the shutdown timeout,
    /// then closes every connection (stdio children: stdin closed, SIGTERM, SIGKILL, by
    /// process group) and finishes writing the tool catalog. Calls still running then fail
    /// with `ShuttingDown`. Last, it releases every callback of the host: the sampling,
    /// elicitation, roots, OAuth and ID-token handlers, the token store, the host tools
    /// (recipe tools included, whose handlers hold the pool) and the canvas listeners, so a
    /// binding need not keep its own list of them. Idempotent.
    pub async fn close(&self) {
        let inner = &self.inner;
        inner.closing.store(true, Ordering::SeqCst);
        let deadline = tokio::time::Instant::now() + inner.opts.shutdown_timeout();
        loop {
            let idle = inner.idle.notified();
            if inner.in_flight.load(Ordering::SeqCst) == 0 {
                break;
            }
            if tokio::time::timeout_at(deadline, idle).await.is_err() {
                break;
            }
        }
        inner.shutdown.cancel();
        let slots = inner.slots();
        futures::future::join_all(slots.iter().map(|s| s.disconnect(inner))).await;
        inner.clients.end_all(inner).await;
        inner.catalog.flush(Duration::from_secs(2)).await;
        inner.host.release();
        inner.local.clear();
        inner.canvas.unsubscribe_all();
        tracing::info!("pool closed");
    }
}

impl Inner {
    fn slots(&self) -> Vec<Arc<Slot>> {
        self.slots.read().unwrap().values().cloned().collect()
    }

    fn active_slots(&self) -> Vec<Arc<Slot>> {
        let mut slots = self.slots();
        slots.retain(|s| s.record.read().unwrap().runs());
        slots
    }

    /// Finds a visible server by id, else by name.
    fn slot(&self, server: &str) -> Result<Arc<Slot>> {
        let slots = self.slots.read().unwrap();
        if let Some(s) = slots.get(server) {
            return Ok(s.clone());
        }
        slots
            .values()
            .find(|s| s.record.read().unwrap().name == server)
            .cloned()
            .ok_or_else(|| Error::not_found("server", server))
    }

    /// Counts a call in flight, or refuses it while shutting down.
    fn begin(self: &Arc<Self>) -> Result<Flight> {
        if self.closing.load(Ordering::SeqCst) {
            return Err(Error::ShuttingDown);
        }
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        if self.closing.load(Ordering::SeqCst) {
            drop(Flight {
                inner: self.clone(),
            });
            return Err(Error::ShuttingDown);
        }
        Ok(Flight {
            inner: self.clone(),
        })
    }
}

/// Runs blocking file work off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::io("background task failed", std::io::Error::other(e)))?
}

/// Stops connections no request took for `idle` (`PoolOptions::idle_stop_ms`), looking a few
/// times per `idle` so that one is stopped not much later than that.
async fn idle_loop(pool: std::sync::Weak<Inner>, idle: Duration, shutdown: CancellationToken) {
    let every = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
    every_while_open(pool, every, shutdown, |inner| async move {
        for slot in inner.slots() {
            slot.stop_if_idle(&inner, idle).await;
        }
        inner.clients.stop_idle(&inner, idle).await;
    })
    .await
}

/// Checks idle connections now and then, so a dead server is found before a call needs it.
async fn health_loop(pool: std::sync::Weak<Inner>, every: Duration, shutdown: CancellationToken) {
    every_while_open(pool, every, shutdown, |inner| async move {
        for slot in inner.slots() {
            slot.background_check(&inner).await;
        }
    })
    .await
}

/// Runs `work` every `every` until the pool shuts down or is gone (the loop holds it only
/// while the work runs).
async fn every_while_open<W, F>(
    pool: std::sync::Weak<Inner>,
    every: Duration,
    shutdown: CancellationToken,
    work: W,
) where
    W: Fn(Arc<Inner>) -> F,
    F: Future<Output = ()>,
{
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = shutdown.cancelled() => return,
        }
        let Some(inner) = pool.upgrade() else { return };
        work(inner).await;
    }
}

/// A pool over an empty config in `dir`, for the core's own tests.
#[cfg(test)]
pub(crate) async fn empty_pool(dir: &std::path::Path) -> Pool {
    Pool::open(PoolOptions {
        config_path: Some(dir.join("servers.json")),
        ..PoolOptions::default()
    })
    .await
    .unwrap()
}
