//! The client side of every connection: answers server requests and routes server
//! notifications (progress, logs, list changes, resource updates) to callers and events.
#![allow(
    deprecated,
    reason = "server logging (SEP-2577) is deprecated but still sent"
)]

use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientConfig, CreateMessageRequestParams, CreateMessageResult, CustomNotification,
    ElicitRequestParams, ElicitResult, ElicitationAction, ErrorCode, Implementation, InputRequest,
    InputRequests, InputResponses, ListRootsResult, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken, ResourceUpdatedNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};

use crate::events::{Event, EventBus, LogLevel};
use crate::host::{Host, HostRequest};
use crate::transport::related_call;

/// One progress update of a call, as given to a per-call callback.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// A per-call progress callback.
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// Progress updates kept for calls whose route is not registered yet.
const EARLY_PROGRESS: usize = 64;

/// Where each progress token's updates go.
#[derive(Default)]
struct ProgressRoutes {
    map: crate::fast_map::FastMap<ProgressToken, ProgressFn>,
    /// Updates for tokens nobody routes (yet), oldest first.
    early: VecDeque<(ProgressToken, Progress)>,
}

/// State a server's connections share with the pool; outlives any one connection.
pub(crate) struct ServerShared {
    pub server_id: Arc<str>,
    pub events: EventBus,
    progress: Mutex<ProgressRoutes>,
    /// Bumped by `notifications/tools/list_changed`; a cached list fetched under an older
    /// generation is stale.
    pub tools_generation: AtomicU64,
    pub client_name: String,
    pub host: Arc<Host>,
    /// Set by the pool: refreshes the tool list (and the catalog) after a change.
    pub on_tools_changed: std::sync::OnceLock<Box<dyn Fn() + Send + Sync>>,
    /// The resources the host subscribed to: each connection subscribes to them again, so a
    /// subscription survives reconnects (see `pool::listen`).
    subscribed: Mutex<BTreeSet<String>>,
    /// The log level asked of the server (0: none; else 1 + its index in `LogLevel::ALL`):
    /// read on every request to a 2026-07-28 server, so an atomic rather than a lock.
    log_level: AtomicU8,
}

impl ServerShared {
    pub fn new(
        server_id: &str,
        events: EventBus,
        client_name: String,
        host: Arc<Host>,
    ) -> Arc<Self> {
        Arc::new(ServerShared {
            host,
            on_tools_changed: std::sync::OnceLock::new(),
            server_id: server_id.into(),
            events,
            progress: Mutex::new(ProgressRoutes::default()),
            tools_generation: AtomicU64::new(0),
            client_name,
            subscribed: Mutex::new(BTreeSet::new()),
            log_level: AtomicU8::new(0),
        })
    }

    /// Routes progress for `token` to `f` until the returned guard drops. Updates that came
    /// in before the route (a fast server answers while the request is still being sent) are
    /// given to `f` first.
    pub fn route_progress(self: &Arc<Self>, token: ProgressToken, f: ProgressFn) -> ProgressRoute {
        let early: Vec<Progress> = {
            let mut routes = self.progress.lock().unwrap();
            routes.map.insert(token.clone(), f.clone());
            let mut mine = Vec::new();
            routes.early.retain(|(t, p)| {
                if *t == token {
                    mine.push(p.clone());
                    false
                } else {
                    true
                }
            });
            mine
        };
        for p in early {
            f(p);
        }
        ProgressRoute {
            shared: self.clone(),
            token,
        }
    }

    /// A log message (`notifications/message`, deprecated in 2026-07-28 but still sent) as it
    /// is read off the transport, before anything read after it: a `log` event about a call
    /// is out before the call's reply (a served client hears it on the call's own stream).
    pub fn log_arrived(&self, params: &LoggingMessageNotificationParam) {
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "info".into());
        let message = match &params.data {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let message = match &params.logger {
            Some(logger) => format!("[{logger}] {message}"),
            None => message,
        };
        self.events.emit(Event::Log {
            server_id: self.server_id.to_string(),
            level,
            source: "notification".into(),
            message,
        });
    }

    /// A progress notification as it is read off the transport, before anything read after
    /// it: the call's callback sees every update before the call returns. (rmcp runs its
    /// notification handlers as spawned tasks, which can lose the race with the reply.)
    pub fn progress_arrived(&self, params: &ProgressNotificationParam) {
        let progress = Progress {
            progress: params.progress,
            total: params.total,
            message: params.message.clone(),
        };
        let callback = {
            let mut routes = self.progress.lock().unwrap();
            match routes.map.get(&params.progress_token) {
                Some(f) => Some(f.clone()),
                // Direct requests' progress is the pool's own (`transport::direct`).
                None if crate::transport::direct::Direct::is_direct_token(
                    &params.progress_token,
                ) =>
                {
                    None
                }
                None => {
                    if routes.early.len() == EARLY_PROGRESS {
                        routes.early.pop_front();
                    }
                    routes
                        .early
                        .push_back((params.progress_token.clone(), progress.clone()));
                    None
                }
            }
        };
        if let Some(f) = callback {
            f(progress);
        }
    }

    /// A new connection: its progress tokens start over, so updates kept from the last one
    /// must not reach its calls.
    pub fn connection_opened(&self) {
        self.progress.lock().unwrap().early.clear();
    }

    pub fn tools_changed(&self) {
        self.tools_generation.fetch_add(1, Ordering::SeqCst);
        self.events.emit(Event::ToolsChanged {
            server_id: self.server_id.to_string(),
        });
    }

    /// A server said its tool list changed: mark the cache stale and fetch the new list.
    pub fn list_changed(&self) {
        self.tools_changed();
        if let Some(refresh) = self.on_tools_changed.get() {
            refresh();
        }
    }

    /// A server said its prompt list changed (nothing of it is cached: the host lists again).
    pub fn prompts_changed(&self) {
        self.events.emit(Event::PromptsChanged {
            server_id: self.server_id.to_string(),
        });
    }

    /// A server said its resource list changed.
    pub fn resources_changed(&self) {
        self.events.emit(Event::ResourcesChanged {
            server_id: self.server_id.to_string(),
        });
    }

    /// A server said a subscribed resource changed.
    pub fn resource_updated(&self, uri: String) {
        self.events.emit(Event::ResourceUpdated {
            server_id: self.server_id.to_string(),
            uri,
        });
    }

    /// The log level asked of the server, if any.
    pub fn log_level(&self) -> Option<LogLevel> {
        crate::pool::session::logs::level_of(self.log_level.load(Ordering::Relaxed))
    }

    /// Sets the log level asked of the server; whether it changed.
    pub fn set_log_level(&self, level: Option<LogLevel>) -> bool {
        let n = crate::pool::session::logs::number_of(level);
        self.log_level.swap(n, Ordering::Relaxed) != n
    }

    /// A `log` event of the connection's own (`source: "transport"`).
    pub fn transport_log(&self, level: &str, message: String) {
        self.events.emit(Event::Log {
            server_id: self.server_id.to_string(),
            level: level.into(),
            source: "transport".into(),
            message,
        });
    }

    /// The resources subscribed to, in order.
    pub fn subscribed(&self) -> Vec<String> {
        self.subscribed.lock().unwrap().iter().cloned().collect()
    }

    /// Adds (`true`) or removes a subscription; whether the set changed.
    pub fn set_subscribed(&self, uri: &str, subscribed: bool) -> bool {
        let mut set = self.subscribed.lock().unwrap();
        if subscribed {
            set.insert(uri.to_string())
        } else {
            set.remove(uri)
        }
    }
}

/// Unregisters a progress callback when the call ends.
pub(crate) struct ProgressRoute {
    shared: Arc<ServerShared>,
    token: ProgressToken,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        if let Ok(mut routes) = self.shared.progress.lock() {
            routes.map.remove(&self.token);
        }
    }
}

/// The rmcp client handler of one connection.
pub(crate) struct ClientSide {
    pub shared: Arc<ServerShared>,
    pub server_name: String,
    /// Handshake with `initialize` only: offer the newest version that has it.
    pub legacy: bool,
}

/// The code clients use to refuse a sampling request (MCP: "user rejected").
const USER_REJECTED: ErrorCode = ErrorCode(-1);

impl ClientSide {
    fn request<P>(&self, params: P) -> HostRequest<P> {
        HostRequest {
            server_id: self.shared.server_id.to_string(),
            server_name: self.server_name.clone(),
            params,
        }
    }

    async fn sample(
        &self,
        params: CreateMessageRequestParams,
        call: Option<u64>,
    ) -> Result<CreateMessageResult, ErrorData> {
        if let Some(forwarder) = self.shared.host.forwarder() {
            return forwarder.sampling(self.request(params), call).await;
        }
        let Some(handler) = self.shared.host.sampling() else {
            return Err(ErrorData::new(
                USER_REJECTED,
                "sampling is not available: the host has no sampling handler",
                None,
            ));
        };
        handler(self.request(params))
            .await
            .map_err(|reason| ErrorData::new(USER_REJECTED, reason, None))
    }

    async fn elicit(
        &self,
        params: ElicitRequestParams,
        call: Option<u64>,
    ) -> Result<ElicitResult, ErrorData> {
        if let Some(forwarder) = self.shared.host.forwarder() {
            return forwarder.elicitation(self.request(params), call).await;
        }
        // No handler means nobody can answer: decline, as the spec asks of such clients.
        let Some(handler) = self.shared.host.elicitation() else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        handler(self.request(params))
            .await
            .map_err(|reason| ErrorData::internal_error(reason, None))
    }

    async fn roots(&self, call: Option<u64>) -> Result<ListRootsResult, ErrorData> {
        if let Some(forwarder) = self.shared.host.forwarder()
            && let Some(roots) = forwarder.roots(self.request(()), call).await?
        {
            return Ok(ListRootsResult::new(roots));
        }
        match self.shared.host.roots_handler() {
            Some(handler) => handler(self.request(()))
                .await
                .map(ListRootsResult::new)
                .map_err(|reason| ErrorData::internal_error(reason, None)),
            None => Ok(ListRootsResult::new(
                self.shared.host.roots_for(&self.shared.server_id),
            )),
        }
    }

    /// Answers the requests of a 2026-07-28 `input_required` result, for the retry: all of
    /// one round at once (a form and a sampling request need not wait for each other).
    pub async fn fulfil(&self, requests: InputRequests) -> Result<InputResponses, ErrorData> {
        let answers = futures::future::try_join_all(
            requests
                .into_iter()
                .map(|(key, request)| self.fulfil_one(key, request)),
        )
        .await?;
        Ok(answers.into_iter().collect())
    }

    async fn fulfil_one(
        &self,
        key: String,
        request: InputRequest,
    ) -> Result<(String, serde_json::Value), ErrorData> {
        let value = match request {
            // Asked within the call's own task: its caller is known there.
            InputRequest::CreateMessage(r) => {
                serde_json::to_value(self.sample(r.params, None).await?)
            }
            InputRequest::Elicitation(r) => {
                serde_json::to_value(self.elicit(r.params, None).await?)
            }
            InputRequest::ListRoots(_) => serde_json::to_value(self.roots(None).await?),
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "input request '{key}' is of a kind this client does not know: {other:?}"
                    ),
                    None,
                ));
            }
        }
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok((key, value))
    }
}

impl ClientHandler for ClientSide {
    fn get_info(&self) -> ClientConfig {
        let config = ClientConfig::new(
            self.shared.host.capabilities(),
            Implementation::new(self.shared.client_name.clone(), env!("CARGO_PKG_VERSION")),
        );
        if self.legacy {
            config.with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
        } else {
            config
        }
    }

    async fn create_message(
        &self,
        mut params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let call = call_of(&context, Some(&mut params.meta));
        self.sample(params, call).await
    }

    async fn create_elicitation(
        &self,
        mut params: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let call = call_of(&context, elicit_meta(&mut params));
        self.elicit(params, call).await
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let call = related_call::of(&context.meta);
        self.roots(call).await
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // The per-call callback already ran: `ServerShared::progress_arrived`, from the transport.
        self.shared.events.emit(Event::Progress {
            server_id: self.shared.server_id.to_string(),
            progress_token: serde_json::to_value(&params.progress_token).unwrap_or_default(),
            progress: params.progress,
            total: params.total,
            message: params.message,
        });
    }

    // `notifications/message` is `ServerShared::log_arrived`'s, from the transport.

    // List changes and resource updates of servers before 2026-07-28; later ones send them on
    // the connection's `subscriptions/listen` stream instead (`pool::listen`).
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.shared.list_changed();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.shared.prompts_changed();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.shared.resources_changed();
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.shared.resource_updated(params.uri);
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        // rmcp has no type of its own for a URL elicitation's completion.
        if notification.method == ELICITATION_COMPLETE
            && let Some(id) = notification
                .params
                .as_ref()
                .and_then(|p| p.get("elicitationId"))
                .and_then(serde_json::Value::as_str)
        {
            self.shared.events.emit(Event::ElicitationComplete {
                server_id: self.shared.server_id.to_string(),
                elicitation_id: id.to_string(),
            });
            return;
        }
        // Anything else is the host's to interpret (an extension's notification).
        self.shared.events.emit(Event::Notification {
            server_id: self.shared.server_id.to_string(),
            method: notification.method,
            params: notification.params,
        });
    }
}

/// The number of the call a server's request came on (see `transport::related_call`), taken
/// out of the request's `_meta` so that no client it is passed on to sees it.
fn call_of(
    context: &RequestContext<RoleClient>,
    params_meta: Option<&mut Option<rmcp::model::RequestMetaObject>>,
) -> Option<u64> {
    let mut in_params = None;
    if let Some(params_meta) = params_meta {
        in_params = (params_meta.as_mut())
            .and_then(|meta| meta.remove(related_call::RELATED_CALL_META))
            .and_then(|n| n.as_u64());
        if params_meta.as_ref().is_some_and(|meta| meta.is_empty()) {
            *params_meta = None;
        }
    }
    in_params.or_else(|| related_call::of(&context.meta))
}

/// The `_meta` of an elicitation of a kind rmcp knows.
fn elicit_meta(
    params: &mut ElicitRequestParams,
) -> Option<&mut Option<rmcp::model::RequestMetaObject>> {
    match params {
        ElicitRequestParams::FormElicitationParams { meta, .. } => Some(meta),
        ElicitRequestParams::UrlElicitationParams { meta, .. } => Some(meta),
        _ => None,
    }
}

/// What a server sends when the user finished a URL elicitation.
const ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
