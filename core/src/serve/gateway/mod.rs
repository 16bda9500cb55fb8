//! The MCP server a served pool is: rmcp's `ServerHandler` over [`Pool`]. Every request is the
//! pool's own verb (lists from its caches and catalog, calls on its shared connections), under
//! the names of [`super::view::names`]; a server that cannot be reached drops out of the lists, and
//! a call of its tools answers `isError` saying so, so one broken server never takes the others
//! down.
//!
//! The gateway's parts: [`served`] what a client sees (names, lists, search), [`call`] a call
//! through it, [`client`] what a request says of its client, [`handler`] rmcp's handler
//! answering each request with them.

mod call;
mod client;
mod handler;
mod served;

use std::sync::{Arc, Mutex, RwLock};

use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::{
    ServeOptions,
    relay::host_requests::{Callers, ClientKey, forward},
    relay::{logging::ClientLevel, seal::Seal, subscriptions::Subscriptions},
    view::{exposure::Exposure, names::max_name_len, profiles::Profile},
};
use crate::error::Error;
use crate::pool::Pool;
use client::{owner, principal};

pub(in crate::serve) use client::{declares_tasks, is_modern};

/// A pool as one MCP server (what `mcpmux serve` runs, one per front; cheap to clone).
#[derive(Clone)]
pub struct Gateway {
    pool: Pool,
    options: Arc<ServeOptions>,
    /// Served tool name → the pool's tool id, as of the last listing. Shared, as every call
    /// takes its tool out: a copy would be two strings' allocations a call.
    tools: Arc<Mutex<crate::fast_map::FastMap<String, Arc<ServedTool>>>>,
    /// The clients with a call in flight, for the upstreams' requests of them.
    callers: Arc<Callers>,
    /// Every client's resource subscriptions (shared by the pool's gateways).
    subscriptions: Arc<Subscriptions>,
    /// This client's number, for its subscriptions: each session (or stateless request) gets
    /// a gateway of its own ([`Gateway::for_client`]).
    client: u64,
    /// The log level this client asked with `logging/setLevel`.
    log_level: Arc<ClientLevel>,
    /// Seals what clients carry back: 2026-07-28 clients' request states.
    seal: Arc<Seal>,
    /// The profile shown, as last read from the config (shared by its clients' gateways).
    view: Arc<RwLock<Arc<Profile>>>,
    /// The pool as this session's client, for `perClient` servers: made on its first request
    /// of one, and dropped (closing those connections) with the session's gateway.
    session_pool: Arc<std::sync::OnceLock<Pool>>,
}

/// What a served tool name stands for.
#[derive(Clone)]
struct ServedTool {
    /// The pool's id of the tool.
    id: String,
    /// Its server's name, for the audit log.
    server: String,
    /// Its input schema, for the HTTP front's checks of `Mcp-Param-*` headers.
    schema: Arc<rmcp::model::JsonObject>,
    /// Whether a model may call it: an MCP App may keep a tool to its view, and then only a
    /// client that renders views is shown it and may call it.
    for_model: bool,
}

/// Numbers served clients.
static CLIENTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

pub(super) fn next_client() -> u64 {
    CLIENTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Gateway {
    /// A gateway over `pool`, sealing request states with `seal`.
    pub(super) fn new(pool: Pool, options: ServeOptions, seal: Arc<Seal>) -> Gateway {
        let callers = Arc::new(Callers::default());
        if options.forward_host_requests {
            forward(&pool, &callers);
        }
        Gateway {
            subscriptions: Subscriptions::new(pool.clone()),
            pool,
            tools: Arc::default(),
            callers,
            client: next_client(),
            log_level: Arc::default(),
            seal,
            view: Arc::new(RwLock::new(Arc::new(options.profile.clone()))),
            options: Arc::new(options),
            session_pool: Arc::default(),
        }
    }

    /// The same gateway for another client (what each new session is given).
    pub fn for_client(&self) -> Gateway {
        Gateway {
            client: next_client(),
            log_level: Arc::default(),
            session_pool: Arc::default(),
            ..self.clone()
        }
    }

    /// The same gateway showing `profile` (one pool's gateways share their callers: the
    /// pool's forwarder looks callers up there).
    pub fn for_profile(&self, profile: Profile) -> Gateway {
        let mut options = (*self.options).clone();
        options.profile = profile.clone();
        Gateway {
            pool: self.pool.clone(),
            options: Arc::new(options),
            tools: Arc::default(),
            callers: self.callers.clone(),
            subscriptions: self.subscriptions.clone(),
            client: next_client(),
            log_level: Arc::default(),
            seal: self.seal.clone(),
            view: Arc::new(RwLock::new(Arc::new(profile))),
            session_pool: Arc::default(),
        }
    }

    /// The pool as the client of `context` sees it, for `perClient` servers (a connection of
    /// its own). A legacy client's session is the client; a 2026-07-28 client has no session,
    /// so the client is whom its access token names (behind OAuth), and without one every
    /// such client is the same one (they share the one token `serve` asks for).
    pub(super) fn pool_for(&self, context: &RequestContext<RoleServer>) -> Pool {
        if is_modern(context) {
            return self
                .pool
                .for_client_kept(format!("user:{}", owner(context).unwrap_or_default()));
        }
        self.session_pool
            .get_or_init(|| self.pool.for_client(format!("session:{}", self.client)))
            .clone()
    }

    /// Who the client of `context` is, as the upstreams' requests are placed: its session
    /// (a 2026-07-28 client has none), the user its token names, the profile it is served.
    pub(super) fn client_key(&self, context: &RequestContext<RoleServer>) -> ClientKey {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (!is_modern(context))
            .then_some(self.client)
            .hash(&mut hasher);
        principal(context)
            .map(|p| (&p.subject, &p.client_id))
            .hash(&mut hasher);
        self.profile().name.hash(&mut hasher);
        hasher.finish()
    }

    pub(super) fn max_name_len(&self) -> usize {
        max_name_len(self.options.name_budget)
    }

    /// The profile shown now.
    pub(super) fn profile(&self) -> Arc<Profile> {
        self.view.read().unwrap().clone()
    }

    /// Shows its profile as `profiles` now has it, when it shows a named one that is still
    /// there.
    pub(super) fn show_named(&self, profiles: &std::collections::BTreeMap<String, Profile>) {
        let name = self.profile().name.clone();
        if let Some(profile) = name.and_then(|n| profiles.get(&n)) {
            self.show(profile.clone());
        }
    }

    /// Shows `profile` from now on (read again from the changed config), and tells clients
    /// that the lists changed.
    pub(super) fn show(&self, profile: Profile) {
        let mut view = self.view.write().unwrap();
        if **view != profile {
            *view = Arc::new(profile);
            // Names taken under the old view must not reach a tool the new one hides.
            self.tools.lock().unwrap().clear();
            self.pool.emit(crate::events::Event::ServersChanged);
        }
    }

    /// The exposure in force: the profile's, else the server's.
    pub(super) fn exposure(&self) -> Exposure {
        self.profile().exposure().unwrap_or(self.options.exposure)
    }
}

/// The text blocks of a result, joined.
pub(super) fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The pool's error as a JSON-RPC error, for requests that have no `isError` form.
pub(super) fn to_error_data(e: Error) -> ErrorData {
    match &e {
        Error::InvalidArgument(_) => ErrorData::invalid_params(e.to_string(), None),
        Error::NotFound { .. } => ErrorData::invalid_params(e.to_string(), None),
        _ => ErrorData::internal_error(e.to_string(), None),
    }
}

/// Converts between mcpmux's and rmcp's forms of the same JSON.
pub(super) fn convert<T: serde::Serialize, U: serde::de::DeserializeOwned>(
    value: &T,
) -> Result<U, ErrorData> {
    serde_json::to_value(value)
        .and_then(serde_json::from_value)
        .map_err(|e| ErrorData::internal_error(format!("an unreadable listing: {e}"), None))
}

/// Marks an upstream's result `complete` where it says nothing: a server of a protocol before
/// 2026-07-28 sends no `resultType`, which a 2026-07-28 client requires (its SDK refuses the
/// answer without). rmcp takes a `complete` off again for a client of an older protocol.
pub(super) fn completed(result_type: &mut Option<rmcp::model::ResultType>) {
    result_type.get_or_insert(rmcp::model::ResultType::COMPLETE);
}
