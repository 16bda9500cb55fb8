//! The MCP server a served pool is: rmcp's `ServerHandler` over [`Pool`]. Every request is the
//! pool's own verb (lists from its caches and catalog, calls on its shared connections), under
//! the names of [`super::view::names`]; a server that cannot be reached drops out of the lists, and
//! a call of its tools answers `isError` saying so, so one broken server never takes the others
//! down.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

#[allow(
    deprecated,
    reason = "server logging (SEP-2577) is deprecated, but clients before 2026-07-28 ask for it"
)]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, Prompt, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Reference, Resource, ResourceTemplate, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::ServeOptions;
use super::relay::host_requests::{Caller, Callers, ClientKey, Waiting, forward};
use super::relay::input_rounds::ClientRound;
use super::relay::logging::{ClientLevel, ServerFilter};
use super::relay::seal::Seal;
use super::relay::subscriptions::{Subscriber, Subscriptions};
use super::view::exposure::{
    CALL_TOOL, CallArgs, DESCRIBE_TOOLS, DescribeArgs, Exposure, SCHEMAS_IN_SEARCH, SEARCH_TOOLS,
    SearchArgs, answer, arguments, search_surface,
};
use super::view::names::{
    max_name_len, prompt_names, resource_keys, tool_names, unwrap_uri, wrap_uri,
};
use super::view::profiles::Profile;
use crate::error::Error;
use crate::pool::APPS_EXTENSION_ID;
use crate::pool::call::call_mark;
use crate::pool::{CallOptions, CallRound, Pool, Progress, PromptInfo};
use crate::tools::ToolInfo;

/// How long a call's last progress notifications may take to go out before its result does.
/// Waiting ends as soon as they are out; the bound only keeps a client that stopped reading
/// from holding the result back forever, and is generous because a loaded machine can take a
/// while to schedule the relay.
const PROGRESS_FLUSH: Duration = Duration::from_secs(5);

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

/// The `_meta` key of a 2026-07-28 request's client.
const CLIENT_INFO_META: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key of what a 2026-07-28 request's client can answer (rmcp's is private).
const CLIENT_CAPABILITIES_META: &str = "io.modelcontextprotocol/clientCapabilities";

/// Numbers served clients.
static CLIENTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_client() -> u64 {
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
    fn pool_for(&self, context: &RequestContext<RoleServer>) -> Pool {
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
    fn client_key(&self, context: &RequestContext<RoleServer>) -> ClientKey {
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

    fn max_name_len(&self) -> usize {
        max_name_len(self.options.name_budget)
    }

    /// The profile shown now.
    fn profile(&self) -> Arc<Profile> {
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
    fn exposure(&self) -> Exposure {
        self.profile().exposure().unwrap_or(self.options.exposure)
    }

    /// The profile's tools under their served names; remembers the names for calls. Tools
    /// kept to MCP App views are among them (named with the rest, so a name is the same for
    /// every client): each surface keeps them to the clients that render views.
    async fn served_tools(&self) -> Result<Vec<(String, ToolInfo)>, ErrorData> {
        let profile = self.profile();
        // A stopped server's tools come from the catalog: a client listing does not start it.
        // Boxed: a listing's future is large, and every request's future (a call's too,
        // which lists when it meets a name it has not seen) is as large as its largest step.
        let listing = self
            .pool
            .list_tools_with(None, crate::pool::ListOptions::known());
        let tools: Vec<ToolInfo> = Box::pin(listing)
            .await
            .map_err(to_error_data)?
            .into_iter()
            .filter(|t| profile.serves(&t.server_name) && (t.for_model() || t.for_apps()))
            .collect();
        let names = if profile.pass_through {
            tools.iter().map(|t| t.name.clone()).collect()
        } else {
            tool_names(&tools, self.max_name_len())
        };
        let served: Vec<(String, ToolInfo)> = names
            .into_iter()
            .zip(tools)
            .filter(|(name, _)| profile.shows(name))
            .collect();
        *self.tools.lock().unwrap() = served
            .iter()
            .map(|(name, t)| {
                let tool = ServedTool {
                    id: t.id.clone(),
                    server: t.server_name.clone(),
                    schema: Arc::new(t.input_schema.parse().unwrap_or_default()),
                    for_model: t.for_model(),
                };
                (name.clone(), Arc::new(tool))
            })
            .collect();
        Ok(served)
    }

    /// The profile's prompts under their served names.
    async fn served_prompts(&self) -> Result<Vec<(String, PromptInfo)>, ErrorData> {
        let profile = self.profile();
        let prompts: Vec<PromptInfo> = self
            .pool
            .list_prompts(None)
            .await
            .map_err(to_error_data)?
            .into_iter()
            .filter(|p| profile.serves(&p.server_name))
            .collect();
        let names = if profile.pass_through {
            prompts.iter().map(|p| p.prompt.name.clone()).collect()
        } else {
            prompt_names(&prompts, self.max_name_len())
        };
        Ok(names.into_iter().zip(prompts).collect())
    }

    /// A tool as clients see it: its served name, the profile's override of its text, and its
    /// MCP App view under the address served here when `views` (the resource keys, by server
    /// id) is given (the client renders views), else none.
    fn served_tool(
        &self,
        name: String,
        mut tool: ToolInfo,
        views: Option<&HashMap<String, String>>,
    ) -> Result<Tool, ErrorData> {
        match views {
            Some(keys) => {
                let view = tool.view_uri();
                if let (Some(uri), Some(key)) = (view, keys.get(&tool.server_id)) {
                    tool.move_view(&self.wrap(key, &uri));
                }
                // A host of views learns the name the view's code calls the tool by.
                if tool.name != name && tool.for_apps() {
                    tool.set_own_name(tool.name.clone());
                }
            }
            None => tool.drop_view(),
        }
        let overrides = self.profile().tools.get(&name).cloned();
        let mut served = served_tool(name, tool)?;
        if let Some(o) = overrides {
            if let Some(description) = o.description {
                served.description = Some(description.into());
            }
            if let Some(title) = o.title {
                served.title = Some(title);
            }
        }
        Ok(served)
    }

    /// The pool id of the served tool `name`, listing again when it is not known yet (a client
    /// may call without listing: a 2026-07-28 client on another replica listed, or a client
    /// that remembers names across restarts).
    async fn pool_tool(
        &self,
        name: &str,
        fresh: bool,
    ) -> Result<Option<Arc<ServedTool>>, ErrorData> {
        if !fresh && let Some(tool) = self.tools.lock().unwrap().get(name) {
            return Ok(Some(tool.clone()));
        }
        self.served_tools().await?;
        Ok(self.tools.lock().unwrap().get(name).cloned())
    }

    /// The error of a call of a tool this client is not shown, offering the served names it
    /// may have meant among those it is shown (`views`: also the tools kept to views).
    fn unknown_tool(&self, name: &str, views: bool) -> ErrorData {
        let meant = {
            let tools = self.tools.lock().unwrap();
            let shown = tools
                .iter()
                .filter(|(_, t)| t.for_model || views)
                .map(|(served, _)| (served.as_str(), served.as_str()));
            crate::tools::suggest::meant(name, shown)
        };
        let hint = crate::tools::suggest::offer(&meant)
            .map(|h| format!(" ({h})"))
            .unwrap_or_default();
        ErrorData::invalid_params(
            format!("unknown tool '{name}'{hint}: tools/list gives the names"),
            None,
        )
    }

    /// The served name of a tool an MCP App's view calls by its server's own name (a view
    /// knows its tools by those, and its host passes the call on as it is): for a client that
    /// renders views and a name that is not served, the one tool for apps of that name. Two
    /// servers' views with a tool of the name are told apart only by the served names.
    async fn view_tool(&self, name: &str, views: bool) -> Result<Option<String>, ErrorData> {
        if !views || self.tools.lock().unwrap().contains_key(name) {
            return Ok(None);
        }
        // One listing answers both questions: is `name` served after all (a client may call
        // before it lists), and else, which view's tool has it as its own name.
        let served = self.served_tools().await?;
        if served.iter().any(|(served, _)| served == name) {
            return Ok(None);
        }
        let named: Vec<&String> = served
            .iter()
            .filter(|(_, t)| t.name == name && t.for_apps())
            .map(|(served, _)| served)
            .collect();
        match named.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some((*one).clone())),
            several => Err(ErrorData::invalid_params(
                format!(
                    "tool '{name}' is a tool of several servers' views ({}): call it by its \
                     served name, or serve the view's server alone (a passThrough profile)",
                    several
                        .iter()
                        .map(|n| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            )),
        }
    }

    /// The served prompt `name`: its server's id and its own name.
    async fn find_prompt(&self, name: &str) -> Result<(String, String), ErrorData> {
        self.served_prompts()
            .await?
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| (p.server_id, p.prompt.name))
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("no prompt named '{name}': prompts/list gives the names"),
                    None,
                )
            })
    }

    /// Resource keys of the profile's servers, by server id.
    fn resource_keys(&self) -> HashMap<String, String> {
        let states = self.pool.server_states();
        resource_keys(
            states
                .iter()
                .filter(|s| self.profile().serves(&s.name))
                .map(|s| (s.id.as_str(), s.name.as_str())),
        )
    }

    /// A server's resource URI as clients see it: wrapped, or as it is when passed through.
    fn wrap(&self, key: &str, uri: &str) -> String {
        if self.profile().pass_through {
            uri.to_string()
        } else {
            wrap_uri(key, uri)
        }
    }

    /// The server id and the server's own URI of a URI a client gives.
    fn unwrap(&self, wrapped: &str) -> Result<(String, String), ErrorData> {
        if self.profile().pass_through {
            let server = self.resource_keys().into_keys().next().ok_or_else(|| {
                ErrorData::resource_not_found(
                    format!("no resource {wrapped}: the profile's server is not configured"),
                    None,
                )
            })?;
            return Ok((server, wrapped.to_string()));
        }
        let not_found = || {
            ErrorData::resource_not_found(
                format!(
                    "no resource {wrapped}: resources/list gives URIs of the form \
                     mcpmux:SERVER/URI (ui://mcpmux.SERVER/PATH for an MCP App's view)"
                ),
                None,
            )
        };
        let (key, uri) = unwrap_uri(wrapped).ok_or_else(not_found)?;
        let server = self
            .resource_keys()
            .into_iter()
            .find(|(_, k)| k == key)
            .map(|(id, _)| id)
            .ok_or_else(not_found)?;
        Ok((server, uri))
    }

    /// Every server's instructions, one section each under its name.
    fn instructions(&self) -> Option<String> {
        let sections: Vec<String> = self
            .pool
            .server_states()
            .into_iter()
            .filter(|s| self.profile().serves(&s.name))
            .filter_map(|s| {
                let text = s.instructions?;
                let text = text.trim();
                (!text.is_empty()).then(|| format!("## {}\n\n{text}", s.name))
            })
            .collect();
        (!sections.is_empty()).then(|| sections.join("\n\n"))
    }

    /// Whether the client sees the search surface, for a fleet of `tools` tools.
    fn searching(&self, tools: usize) -> bool {
        match self.exposure() {
            Exposure::Direct => false,
            Exposure::Search => true,
            Exposure::Auto => tools > self.options.auto_limit,
        }
    }

    /// A call of one of the search surface's tools.
    async fn call_meta(
        &self,
        tool: &str,
        args: Option<serde_json::Map<String, serde_json::Value>>,
        context: &RequestContext<RoleServer>,
        round: Option<ClientRound>,
    ) -> Result<CallToolResponse, ErrorData> {
        match tool {
            SEARCH_TOOLS => {
                let SearchArgs { query, limit } = arguments(tool, args)?;
                self.search(&query, limit).await.map(Into::into)
            }
            DESCRIBE_TOOLS => {
                let DescribeArgs { names } = arguments(tool, args)?;
                self.describe(&names).await.map(Into::into)
            }
            _ => {
                let CallArgs { name, arguments: a } = arguments(tool, args)?;
                // The search surface is the model's: served names of tools for the model only
                // (a view's own tools are not on it, by either name).
                if !self
                    .pool_tool(&name, false)
                    .await?
                    .is_some_and(|t| t.for_model)
                {
                    return Err(self.refuse(context, &name, false));
                }
                Box::pin(self.call_round(&name, a, context, round)).await
            }
        }
    }

    async fn search(&self, query: &str, limit: Option<usize>) -> Result<CallToolResult, ErrorData> {
        let hits = self
            .pool
            .search_tools(query, limit)
            .await
            .map_err(to_error_data)?;
        let served = self.served_tools().await?;
        let by_id: HashMap<&str, (&String, &ToolInfo)> = served
            .iter()
            .filter(|(_, t)| t.for_model())
            .map(|(name, t)| (t.id.as_str(), (name, t)))
            .collect();
        let tools: Vec<serde_json::Value> = hits
            .iter()
            .filter_map(|hit| by_id.get(hit.id.as_str()))
            .enumerate()
            .map(|(rank, (name, tool))| {
                let mut hit = serde_json::json!({
                    "name": name,
                    "server": tool.server_name,
                    "description": tool.description.clone().unwrap_or_default(),
                });
                if rank < SCHEMAS_IN_SEARCH {
                    hit["inputSchema"] = tool.input_schema.to_value();
                }
                hit
            })
            .collect();
        Ok(answer(serde_json::json!({ "tools": tools })))
    }

    async fn describe(&self, names: &[String]) -> Result<CallToolResult, ErrorData> {
        let served = self.served_tools().await?;
        let mut tools = Vec::new();
        let mut unknown = Vec::new();
        for name in names {
            match served.iter().find(|(n, t)| n == name && t.for_model()) {
                Some((n, t)) => tools.push(
                    serde_json::to_value(self.served_tool(n.clone(), t.clone(), None)?)
                        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
                ),
                None => unknown.push(name.clone()),
            }
        }
        let mut value = serde_json::json!({ "tools": tools });
        if !unknown.is_empty() {
            // What each unknown name may have meant, so a model corrects itself in one step.
            let shown = || {
                served
                    .iter()
                    .filter(|(_, t)| t.for_model())
                    .map(|(n, t)| (n.as_str(), t.name.as_str()))
            };
            let meant: serde_json::Map<String, serde_json::Value> = unknown
                .iter()
                .map(|name| (name, crate::tools::suggest::meant(name, shown())))
                .filter(|(_, meant)| !meant.is_empty())
                .map(|(name, meant)| (name.clone(), meant.into()))
                .collect();
            value["unknown"] = unknown.into();
            if !meant.is_empty() {
                value["didYouMean"] = meant.into();
            }
        }
        Ok(answer(value))
    }

    /// A call of the served tool `name`. With `round` (a 2026-07-28 client's call), an
    /// upstream's `input_required` goes back to the client, and `round` brings its answers;
    /// without, the pool answers it (asking a legacy client through its session).
    async fn call_round(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        context: &RequestContext<RoleServer>,
        round: Option<ClientRound>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.exposure() != Exposure::Direct
            && [SEARCH_TOOLS, DESCRIBE_TOOLS, CALL_TOOL].contains(&name)
        {
            return self.call_meta(name, arguments, context, round).await;
        }
        // Asked on every call, and again on a retry or an error: read once.
        let views = renders_views(context);
        let own_name;
        let name = match self.view_tool(name, views).await? {
            Some(served) => {
                own_name = served;
                own_name.as_str()
            }
            None => name,
        };
        let mut arguments = arguments;
        let mut fresh = false;
        loop {
            let Some(tool) = self
                .pool_tool(name, fresh)
                .await?
                .filter(|t| t.for_model || views)
            else {
                return Err(self.refuse(context, name, views));
            };
            let caller = Arc::new(context.peer.clone());
            let (mut options, relay) = call_options(context, &caller);
            options.tasks = super::relay::tasks::mode(context, self.profile().pass_through);
            let waiting = (self.pool.tool_server_id(&tool.id)).map(|server| {
                self.callers
                    .enter(server, self.client_key(context), caller.clone())
            });
            // Only the audit log reads the time a call took.
            let started = self.options.audit.is_some().then(std::time::Instant::now);
            let logs = self.call_logs(context, &tool).await;
            let pool = self.pool_for(context);
            let mut input = round.as_ref().map(|r| r.input.clone());
            // Lent: a tool the pool no longer knows leaves them for the call once more below.
            let call = pool.call_tool_lent(&tool.id, &mut arguments, &mut options, &mut input);
            // Numbered, so that what the upstream asks on the call's own stream comes back
            // to this client.
            let number = waiting.as_ref().map_or(0, Waiting::number);
            let result = call_mark::marked(number, Callers::as_caller(caller, call)).await;
            if let Some(relay) = relay {
                relay.flush().await;
            }
            if let Some((done, task)) = logs {
                let _ = done.send(());
                let _ = task.await;
            }
            let retried = matches!(result, Err(Error::NotFound { kind: "tool", .. })) && !fresh;
            if !retried {
                self.audit(context, name, &tool, &result, started);
            }
            return match result {
                Ok(CallRound::Done(mut result)) => {
                    completed(&mut result.result_type);
                    Ok(result.into())
                }
                Ok(CallRound::Task(started)) => {
                    super::relay::tasks::to_client(&self.seal, started, owner(context))
                        .map(Into::into)
                }
                Ok(CallRound::InputRequired(asked)) => {
                    // Only a call in rounds gets the upstream's questions back.
                    let asked_as = round.as_ref().map_or(name, |r| r.asked_as.as_str());
                    super::relay::input_rounds::ask_client(&self.seal, asked_as, asked)
                        .map(Into::into)
                }
                // The pool's tools changed since the names were taken: once more, by name.
                Err(Error::NotFound { kind: "tool", .. }) if !fresh => {
                    fresh = true;
                    continue;
                }
                // Still gone after listing again: named as this client knows it, and offered
                // only what it is shown (the pool's offer names pool ids, perhaps of tools this
                // profile hides).
                Err(Error::NotFound { kind: "tool", .. }) => Err(self.unknown_tool(name, views)),
                Err(Error::Cancelled) => Err(ErrorData::internal_error("cancelled", None)),
                Err(e @ Error::InvalidArgument(_)) => Err(to_error_data(e)),
                // The upstream refused the call (unknown arguments, a capability the client
                // lacks): the client gets the same error.
                Err(e @ Error::Tool { code: Some(_), .. }) => Err(relayed(e)),
                // The tool or its server failed: the client's user reads why.
                Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(e.to_string())]).into()),
            };
        }
    }
}

impl Gateway {
    /// For a 2026-07-28 client, which is asked in rounds: what its `request` brings to the
    /// upstream (its answers, the upstream's state). `None` for a client with a session.
    fn round_of(
        &self,
        context: &RequestContext<RoleServer>,
        request: std::fmt::Arguments<'_>,
        responses: Option<rmcp::model::InputResponses>,
        state: Option<&str>,
    ) -> Result<Option<ClientRound>, ErrorData> {
        if !is_modern(context) {
            return Ok(None);
        }
        // Named only here: a call of a client with a session (every call, for most) does
        // not pay for the text.
        let request = request.to_string();
        let input =
            super::relay::input_rounds::from_client(&self.seal, &request, responses, state)?;
        Ok(Some(ClientRound {
            input,
            asked_as: request,
        }))
    }

    /// The servers of this gateway's profile, by id, as a relay's filter.
    fn server_filter(&self) -> ServerFilter {
        let (pool, view) = (self.pool.clone(), self.view.clone());
        Box::new(move |id| {
            let profile = view.read().unwrap().clone();
            pool.server_states()
                .iter()
                .any(|s| s.id == id && profile.serves(&s.name))
        })
    }

    /// For a 2026-07-28 call whose `_meta` asks for log messages: a relay of the called
    /// server's messages to the call's stream, until the sender is used.
    async fn call_logs(
        &self,
        context: &RequestContext<RoleServer>,
        tool: &ServedTool,
    ) -> Option<(
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<()>,
    )> {
        let level = super::relay::logging::from_mcp(context.meta.log_level()?)?;
        let server = self.pool.tool_server(&tool.id)?;
        Box::pin(self.pool.hear_logs_at(level)).await;
        let client_level = Arc::new(ClientLevel::default());
        client_level.set(level);
        let (done, until) = tokio::sync::oneshot::channel::<()>();
        let relay = super::relay::logging::relay(
            self.pool.clone(),
            self.pool.events(),
            context.peer.clone(),
            client_level,
            Box::new(move |id| id == server),
            async move {
                let _ = until.await;
            },
        );
        Some((done, tokio::spawn(relay)))
    }

    /// The error of a call this client may not make (a name it is not shown, or one its
    /// profile's allow and deny lists leave out), recorded in the audit log with the reason:
    /// a refused attempt is what an audit is read for.
    fn refuse(&self, context: &RequestContext<RoleServer>, name: &str, views: bool) -> ErrorData {
        if let Some(log) = &self.options.audit {
            let profile = self.profile();
            let reason = match profile.shows(name) {
                true => "no tool of this name is served to this client".to_string(),
                false => format!(
                    "the allow and deny lists of profile '{}' leave it out",
                    profile.name.as_deref().unwrap_or_default()
                ),
            };
            let entry = super::front::audit::Entry {
                client: &client_name(context).unwrap_or_else(|| "unknown".into()),
                principal: principal(context),
                profile: profile.name.as_deref(),
                server: None,
                tool: name,
                outcome: "refused",
                error: Some(reason),
            };
            log.record(entry, std::time::Duration::ZERO);
        }
        self.unknown_tool(name, views)
    }

    /// Records a call in the audit log, if there is one.
    fn audit(
        &self,
        context: &RequestContext<RoleServer>,
        name: &str,
        tool: &ServedTool,
        result: &crate::error::Result<CallRound>,
        started: Option<std::time::Instant>,
    ) {
        let (Some(log), Some(started)) = (&self.options.audit, started) else {
            return;
        };
        let (outcome, error) = match result {
            // Asking the client is not the end of the call: its last round is recorded.
            Ok(CallRound::InputRequired(_)) => return,
            Ok(CallRound::Done(r)) if r.is_error == Some(true) => ("error", Some(text_of(r))),
            Ok(CallRound::Done(_)) => ("ok", None),
            // The client follows the task from here.
            Ok(CallRound::Task(_)) => ("task", None),
            Err(Error::Cancelled) => ("cancelled", None),
            Err(e) => ("error", Some(e.to_string())),
        };
        let client = client_name(context);
        let profile = self.profile();
        let entry = super::front::audit::Entry {
            client: client.as_deref().unwrap_or("unknown"),
            principal: principal(context),
            profile: profile.name.as_deref(),
            server: Some(&tool.server),
            tool: name,
            outcome,
            error,
        };
        log.record(entry, started.elapsed());
    }
}

/// The name the calling client gives itself: a 2026-07-28 client in each request's `_meta`
/// (it has no session), an older one once, at `initialize`.
fn client_name(context: &RequestContext<RoleServer>) -> Option<String> {
    context
        .meta
        .get(CLIENT_INFO_META)
        .and_then(|info| info.get("name"))
        .and_then(|name| name.as_str())
        .map(str::to_string)
        .or_else(|| context.peer.peer_info().map(|i| i.client_info.name.clone()))
}

/// Behind OAuth, whom the request's access token was issued to.
fn principal(context: &RequestContext<RoleServer>) -> Option<&super::resource_server::Principal> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<super::resource_server::Principal>())
}

/// Behind OAuth, the user the request's access token names.
fn owner(context: &RequestContext<RoleServer>) -> Option<String> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<super::resource_server::Principal>())
        .map(super::resource_server::Principal::owner)
}

/// What the calling client said it can answer: in the request's `_meta` (2026-07-28), else
/// at its `initialize`. An upstream is told these, not the pool's, so it asks only what this
/// client can give.
fn client_capabilities(context: &RequestContext<RoleServer>) -> Option<serde_json::Value> {
    match context.meta.client_capabilities() {
        Some(declared) => serde_json::to_value(declared).ok(),
        None => serde_json::to_value(&context.peer.peer_info()?.capabilities).ok(),
    }
}

/// Whether the calling client takes tasks, by what it declared where `client_capabilities`
/// reads it, without a copy of its session's capabilities (rmcp's
/// `RequestContext::client_capabilities` makes one): asked on every call.
pub(super) fn declares_tasks(context: &RequestContext<RoleServer>) -> bool {
    match context.meta.client_capabilities() {
        Some(declared) => declared.supports_tasks(),
        None => (context.peer.peer_info()).is_some_and(|info| info.capabilities.supports_tasks()),
    }
}

/// Whether the calling client renders MCP Apps views (declares `io.modelcontextprotocol/ui`),
/// where `client_capabilities` reads what it declared; looked up in place, as it is asked on
/// every call.
fn renders_views(context: &RequestContext<RoleServer>) -> bool {
    match context.meta.get(CLIENT_CAPABILITIES_META) {
        Some(declared) => declared
            .get("extensions")
            .and_then(|e| e.get(APPS_EXTENSION_ID))
            .is_some(),
        None => context.peer.peer_info().is_some_and(|info| {
            let extensions = info.capabilities.extensions.as_ref();
            extensions.is_some_and(|e| e.contains_key(APPS_EXTENSION_ID))
        }),
    }
}

/// Whether the request is of protocol 2026-07-28 or later (stateless, asked in rounds).
pub(super) fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v >= rmcp::model::ProtocolVersion::V_2026_07_28)
}

/// The text blocks of a result, joined.
fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The pool's options for a call made by `context`: its cancellation, and its progress sent
/// on to the client in order through a [`ProgressRelay`] (a task started by the first update:
/// most calls report none).
fn call_options(
    context: &RequestContext<RoleServer>,
    caller: &Caller,
) -> (CallOptions, Option<Arc<ProgressRelay>>) {
    let mut options = CallOptions {
        cancel: Some(context.ct.clone()),
        client_capabilities: client_capabilities(context),
        ..CallOptions::default()
    };
    let Some(token) = context.meta.get_progress_token() else {
        return (options, None);
    };
    let relay = Arc::new(ProgressRelay {
        token,
        peer: caller.clone(),
        state: Mutex::default(),
    });
    let sender = relay.clone();
    options.on_progress = Some(Arc::new(move |p| sender.send(p)));
    (options, Some(relay))
}

/// A call's progress on its way to the client: in order, through one task per call that
/// reports any.
struct ProgressRelay {
    token: rmcp::model::ProgressToken,
    peer: Caller,
    state: Mutex<
        Option<(
            tokio::sync::mpsc::UnboundedSender<Progress>,
            tokio::task::JoinHandle<()>,
        )>,
    >,
}

impl ProgressRelay {
    fn send(&self, progress: Progress) {
        let mut state = self.state.lock().unwrap();
        let (tx, _) = state.get_or_insert_with(|| {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Progress>();
            let (peer, token) = (self.peer.clone(), self.token.clone());
            let task = tokio::spawn(async move {
                while let Some(p) = rx.recv().await {
                    let mut param = ProgressNotificationParam::new(token.clone(), p.progress);
                    param.total = p.total;
                    param.message = p.message;
                    // A client that went away misses its progress; the call goes on.
                    let _ = peer.notify_progress(param).await;
                }
            });
            (tx, task)
        });
        let _ = tx.send(progress);
    }

    /// Waits (a while) for the updates sent so far to go out, so they precede the result.
    async fn flush(&self) {
        let Some((tx, task)) = self.state.lock().unwrap().take() else {
            return;
        };
        drop(tx);
        let _ = tokio::time::timeout(PROGRESS_FLUSH, task).await;
    }
}

/// An error of a request relayed upstream: the upstream's own refusal as it is, else the
/// pool's.
fn relayed(e: Error) -> ErrorData {
    match e {
        Error::Tool {
            message,
            code: Some(code),
            data,
            ..
        } => ErrorData::new(rmcp::model::ErrorCode(code), message, data),
        e => to_error_data(e),
    }
}

/// A task where only a tool call can start one (the pool never returns it there).
fn not_a_call() -> ErrorData {
    ErrorData::internal_error("a task answered a request that is not a tool call", None)
}

/// The pool's error as a JSON-RPC error, for requests that have no `isError` form.
fn to_error_data(e: Error) -> ErrorData {
    match &e {
        Error::InvalidArgument(_) => ErrorData::invalid_params(e.to_string(), None),
        Error::NotFound { .. } => ErrorData::invalid_params(e.to_string(), None),
        _ => ErrorData::internal_error(e.to_string(), None),
    }
}

/// Converts between mcpmux's and rmcp's forms of the same JSON.
fn convert<T: serde::Serialize, U: serde::de::DeserializeOwned>(value: &T) -> Result<U, ErrorData> {
    serde_json::to_value(value)
        .and_then(serde_json::from_value)
        .map_err(|e| ErrorData::internal_error(format!("an unreadable listing: {e}"), None))
}

fn served_tool(name: String, tool: ToolInfo) -> Result<Tool, ErrorData> {
    let mut value =
        serde_json::to_value(&tool).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let object = value.as_object_mut().expect("a tool is an object");
    for key in ["id", "serverId", "serverName"] {
        object.remove(key);
    }
    object.insert("name".into(), name.into());
    convert(&value)
}

/// Marks an upstream's result `complete` where it says nothing: a server of a protocol before
/// 2026-07-28 sends no `resultType`, which a 2026-07-28 client requires (its SDK refuses the
/// answer without). rmcp takes a `complete` off again for a client of an older protocol.
fn completed(result_type: &mut Option<rmcp::model::ResultType>) {
    result_type.get_or_insert(rmcp::model::ResultType::COMPLETE);
}

/// A result whose contents name `uri` wherever the server's own URI stood.
fn rewrap_contents(result: ReadResourceResult, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let mut value = serde_json::to_value(&result)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    if let Some(contents) = value.get_mut("contents").and_then(|c| c.as_array_mut()) {
        for item in contents {
            if let Some(object) = item.as_object_mut() {
                object.insert("uri".into(), uri.into());
            }
        }
    }
    convert(&value)
}

impl ServerHandler for Gateway {
    #[allow(deprecated, reason = "logging: see `set_level`")]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_completions()
            .enable_logging()
            .enable_tasks()
            .build();
        let mut info = ServerConfig::new(capabilities).with_server_info(Implementation::new(
            self.options.server_name.clone(),
            env!("CARGO_PKG_VERSION"),
        ));
        if let Some(text) = self.instructions() {
            info = info.with_instructions(text);
        }
        info
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = super::relay::changes::accepted(requested);
        // The resources this gateway can name a server for.
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| self.unwrap(uri).is_ok())
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let uris = context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        let to = Subscriber::Stream(context.sink().clone());
        let mut failed = None;
        for uri in uris {
            let Ok(target) = self.unwrap(&uri) else {
                continue;
            };
            let added = self
                .subscriptions
                .add(self.client, target, uri, to.clone())
                .await;
            if let Err(e) = added {
                failed = Some(to_error_data(e));
                break;
            }
        }
        if failed.is_none() {
            super::relay::changes::stream(self.pool.clone(), context).await;
        }
        self.subscriptions.remove_client(self.client).await;
        failed.map_or(Ok(()), Err)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let target = self.unwrap(&request.uri)?;
        self.subscriptions
            .add(
                self.client,
                target,
                request.uri,
                Subscriber::Session(context.peer),
            )
            .await
            .map_err(to_error_data)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let target = self.unwrap(&request.uri)?;
        self.subscriptions
            .remove(self.client, target)
            .await
            .map_err(to_error_data)
    }

    #[allow(
        deprecated,
        reason = "server logging (SEP-2577) is deprecated, but clients before 2026-07-28 ask for it"
    )]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let level = super::relay::logging::from_mcp(request.level)
            .ok_or_else(|| ErrorData::invalid_params("an unknown log level", None))?;
        let first = self.log_level.set(level);
        Box::pin(self.pool.hear_logs_at(level)).await;
        if first {
            let relay = super::relay::logging::relay(
                self.pool.clone(),
                self.pool.events(),
                context.peer,
                self.log_level.clone(),
                self.server_filter(),
                std::future::pending(),
            );
            tokio::spawn(relay);
        }
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        super::relay::changes::watch(self.pool.clone(), context.peer);
    }

    // What rmcp's HTTP front checks a call's `Mcp-Param-*` headers against (SEP-2243): the
    // schema of a tool as last listed; a tool not listed yet goes unchecked.
    fn get_tool(&self, name: &str) -> Option<Tool> {
        let schema = self.tools.lock().unwrap().get(name)?.schema.clone();
        Some(Tool::new(name.to_string(), "", schema))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let served = self.served_tools().await?;
        if self.searching(served.iter().filter(|(_, t)| t.for_model()).count()) {
            return Ok(ListToolsResult::with_all_items(search_surface()));
        }
        // A client that renders MCP Apps is shown the views, and the tools kept to them.
        let views = renders_views(&context).then(|| self.resource_keys());
        let tools = served
            .into_iter()
            .filter(|(_, tool)| tool.for_model() || views.is_some())
            .map(|(name, tool)| self.served_tool(name, tool, views.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // A 2026-07-28 client has no session to be asked on: it is asked in rounds.
        let round = self.round_of(
            &context,
            format_args!("tool {}", request.name),
            request.input_responses,
            request.request_state.as_deref(),
        )?;
        self.call_round(&request.name, request.arguments, &context, round)
            .await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let keys = self.resource_keys();
        let resources = self
            .pool
            .list_resources(None)
            .await
            .map_err(to_error_data)?
            .into_iter()
            .filter_map(|r| {
                let key = keys.get(&r.server_id)?;
                let mut resource: Resource = r.resource;
                resource.uri = self.wrap(key, &resource.uri);
                Some(resource)
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let keys = self.resource_keys();
        let templates = self
            .pool
            .list_resource_templates(None)
            .await
            .map_err(to_error_data)?
            .into_iter()
            .filter_map(|t| {
                let key = keys.get(&t.server_id)?;
                let mut template: ResourceTemplate = t.template;
                template.uri_template = self.wrap(key, &template.uri_template);
                Some(template)
            })
            .collect();
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let (server, uri) = self.unwrap(&request.uri)?;
        let asked_as = format!("resource {}", request.uri);
        let round = self.round_of(
            &context,
            format_args!("{asked_as}"),
            request.input_responses,
            request.request_state.as_deref(),
        )?;
        let pool = self.pool_for(&context);
        let result = match round {
            Some(round) => {
                let round = round.input;
                pool.read_resource_round(&server, &uri, round).await
            }
            None => pool.read_resource(&server, &uri).await.map(CallRound::Done),
        };
        match result.map_err(to_error_data)? {
            CallRound::Done(result) => {
                let mut result = rewrap_contents(result, &request.uri)?;
                completed(&mut result.result_type);
                Ok(result.into())
            }
            CallRound::InputRequired(asked) => {
                super::relay::input_rounds::ask_client(&self.seal, &asked_as, asked).map(Into::into)
            }
            CallRound::Task(_) => Err(not_a_call()),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let served = self
            .served_prompts()
            .await?
            .into_iter()
            .map(|(name, p)| {
                let mut prompt: Prompt = p.prompt;
                prompt.name = name;
                prompt
            })
            .collect();
        Ok(ListPromptsResult::with_all_items(served))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let (server, prompt) = self.find_prompt(&request.name).await?;
        let asked_as = format!("prompt {}", request.name);
        let round = self.round_of(
            &context,
            format_args!("{asked_as}"),
            request.input_responses,
            request.request_state.as_deref(),
        )?;
        let (pool, arguments) = (&self.pool_for(&context), request.arguments);
        let result = match round {
            Some(round) => {
                let round = round.input;
                pool.get_prompt_round(&server, &prompt, arguments, round)
                    .await
            }
            None => pool
                .get_prompt(&server, &prompt, arguments)
                .await
                .map(CallRound::Done),
        };
        match result.map_err(to_error_data)? {
            CallRound::Done(mut result) => {
                completed(&mut result.result_type);
                Ok(result.into())
            }
            CallRound::InputRequired(asked) => {
                super::relay::input_rounds::ask_client(&self.seal, &asked_as, asked).map(Into::into)
            }
            CallRound::Task(_) => Err(not_a_call()),
        }
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        let task = super::relay::tasks::from_client(
            &self.seal,
            &request.task_id,
            owner(&context).as_deref(),
        )?;
        let got = self
            .pool_for(&context)
            .get_task(&task.server, &task.id)
            .await
            .map_err(relayed)?;
        Ok(super::relay::tasks::detailed_to_client(
            got,
            &request.task_id,
        ))
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let task = super::relay::tasks::from_client(
            &self.seal,
            &request.task_id,
            owner(&context).as_deref(),
        )?;
        self.pool_for(&context)
            .update_task(&task.server, &task.id, request.input_responses)
            .await
            .map_err(relayed)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let task = super::relay::tasks::from_client(
            &self.seal,
            &request.task_id,
            owner(&context).as_deref(),
        )?;
        self.pool_for(&context)
            .cancel_task(&task.server, &task.id)
            .await
            .map_err(relayed)
    }

    async fn complete(
        &self,
        mut request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let server = match &mut request.r#ref {
            Reference::Prompt(p) => {
                let (server, name) = self.find_prompt(&p.name).await?;
                p.name = name;
                server
            }
            Reference::Resource(r) => {
                let (server, uri) = self.unwrap(&r.uri)?;
                r.uri = uri;
                server
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("a completion reference mcpmux does not know: {other:?}"),
                    None,
                ));
            }
        };
        let completion = self
            .pool_for(&context)
            .complete(&server, request)
            .await
            .map_err(to_error_data)?;
        Ok(CompleteResult::new(completion))
    }
}
