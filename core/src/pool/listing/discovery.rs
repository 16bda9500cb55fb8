//! Tool layers, discovery pseudo-tools and lazy per-server activation (WebMCP Auto-UI's phases
//! 1 and 2): an agent starts with a handful of discovery tools instead of hundreds of real
//! ones, and a server's tools join the conversation when it first uses one of them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock};

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::pool::listing::search::KnownTools;
use crate::pool::listing::unlisted::Unlisted;
use crate::pool::{CallOptions, Pool};
use crate::tools::canonical::canonical_name;
use crate::tools::host_tools::HOST_TOOLS_SERVER;
use crate::tools::search::SearchHit;
use crate::tools::{ToolInfo, sanitize};

/// One server's tools as a layer (WebMCP Auto-UI's `ToolLayer`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolLayer {
    /// `mcp` for servers; `local` for the host's own tools.
    pub protocol: String,
    pub server_id: String,
    pub server_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub tools: Vec<ToolInfo>,
    /// Why `tools` is empty when the server could not be listed (it did not start, say).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The known tools by server as indices into one shared description of them: what a reader
/// that runs often and needs few of the tools themselves (an agent's turn) takes instead of
/// [`ToolLayer`]s, which copy every tool.
pub(crate) struct LayerOutline {
    pub(crate) known: Arc<KnownTools>,
    pub(crate) layers: Vec<OutlinedLayer>,
}

/// One server's place in a [`LayerOutline`].
pub(crate) struct OutlinedLayer {
    pub(crate) protocol: &'static str,
    pub(crate) server_id: String,
    pub(crate) server_name: String,
    pub(crate) error: Option<String>,
    /// Indices into the outline's known tools: the server's tools offered to a model.
    pub(crate) tools: Vec<usize>,
}

impl LayerOutline {
    fn tools<'a>(&'a self, layer: &'a OutlinedLayer) -> impl Iterator<Item = &'a ToolInfo> {
        layer.tools.iter().map(|&i| &self.known.tools[i])
    }

    /// One layer with its tools copied, as [`Pool::known_layers`] gives it.
    fn to_layer(&self, layer: &OutlinedLayer) -> ToolLayer {
        ToolLayer {
            protocol: layer.protocol.into(),
            server_id: layer.server_id.clone(),
            server_name: layer.server_name.clone(),
            description: None,
            tools: self.tools(layer).cloned().collect(),
            error: layer.error.clone(),
        }
    }

    /// The tool of `layer` that plays the discovery role `canonical`, as [`aliased`] finds it.
    fn aliased(&self, layer: &OutlinedLayer, canonical: &str) -> Option<&ToolInfo> {
        let i = layer
            .tools
            .iter()
            .copied()
            .find(|&i| self.known.role(i) == Some(canonical))?;
        Some(&self.known.tools[i])
    }
}

/// A tool as offered to an LLM: a function name, what it does, its parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    pub input_schema: crate::shared_json::SharedJson,
}

/// The discovery tools every layer gets, by canonical name.
const DISCOVERY: &[(&str, &str)] = &[
    (
        "list_tools",
        "List the tools of {server}: ids and one-line descriptions.",
    ),
    ("search_tools", "Search the tools of {server} by keywords."),
    (
        "list_recipes",
        "List the recipes and skills (how-to guides, widgets) of {server}.",
    ),
    (
        "search_recipes",
        "Search the recipes and skills of {server} by keywords.",
    ),
    (
        "get_recipe",
        "Read one recipe or skill of {server} in full: its instructions and parameters.",
    ),
];

/// The parameters of a discovery tool, written once: an agent offers them on every turn.
fn schema_for(canonical: &str) -> crate::shared_json::SharedJson {
    static QUERY: OnceLock<crate::shared_json::SharedJson> = OnceLock::new();
    static NAME: OnceLock<crate::shared_json::SharedJson> = OnceLock::new();
    static NONE: OnceLock<crate::shared_json::SharedJson> = OnceLock::new();
    match canonical {
        "search_tools" | "search_recipes" => QUERY.get_or_init(|| {
            json!({
                "type": "object",
                "properties": {"query": {"type": "string", "description": "keywords"}},
                "required": ["query"]
            })
            .into()
        }),
        "get_recipe" => NAME.get_or_init(|| {
            json!({
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"]
            })
            .into()
        }),
        _ => NONE.get_or_init(|| json!({"type": "object", "properties": {}}).into()),
    }
    .clone()
}

/// A loaded skill as `get_recipe` answers: its instructions, and the files it may point to.
fn skill_recipe(loaded: crate::pool::LoadedSkill) -> Value {
    let files: Vec<&str> = loaded
        .skill
        .files
        .iter()
        .flatten()
        .map(|f| f.uri.as_str())
        .filter(|uri| *uri != loaded.skill.uri)
        .collect();
    json!({
        "name": loaded.skill.name,
        "description": loaded.skill.description,
        "skill": true,
        "body": loaded.instructions,
        "files": files,
    })
}

fn json_result(value: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
    r.structured_content = Some(value);
    r
}

fn summary(tools: &[ToolInfo]) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|t| {
                json!({
                    "id": t.id,
                    "description": t.description.as_deref().unwrap_or("").lines().next().unwrap_or(""),
                })
            })
            .collect(),
    )
}

/// The layer's own tool for a canonical role (WebMCP Auto-UI's alias map), if it has one.
fn aliased<'a>(layer: &'a ToolLayer, canonical: &str) -> Option<&'a ToolInfo> {
    layer
        .tools
        .iter()
        .find(|t| canonical_name(&t.name, t.description.as_deref()) == Some(canonical))
}

fn string_arg(args: &Value, key: &str, tool: &str) -> Result<String> {
    args.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| Error::invalid(format!("{tool} needs a string `{key}`")))
}

/// The answer of a search tool: the hits, and the servers that could not be searched.
fn search_answer(hits: Vec<SearchHit>, unlisted: &[Unlisted]) -> CallToolResult {
    let mut answer = json!({ "tools": hits });
    if !unlisted.is_empty() {
        answer["unavailable"] = unlisted
            .iter()
            .map(|u| json!({"server": u.server_name, "error": u.error}))
            .collect();
    }
    json_result(answer)
}

impl Pool {
    /// Every active server's tools as layers, after listing the servers whose tools are not
    /// known yet ([`Pool::ensure_catalog`]); a server that could not be listed has its error.
    pub async fn layers(&self) -> Vec<ToolLayer> {
        self.ensure_catalog(&ServerFilter::default()).await;
        self.known_layers()
    }

    /// Every active server's known tools as layers, without connecting anything.
    pub fn known_layers(&self) -> Vec<ToolLayer> {
        let outline = self.layer_outline();
        outline
            .layers
            .iter()
            .map(|layer| outline.to_layer(layer))
            .collect()
    }

    /// [`Pool::known_layers`] as indices into the known tools, copying none of them.
    pub(crate) fn layer_outline(&self) -> LayerOutline {
        let known = self.inner.known();
        let mut by_server: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
        let mut errors = BTreeMap::new();
        for slot in self.inner.active_slots() {
            by_server.entry((slot.name(), slot.id.clone())).or_default();
            if let Some((error, _)) = self.inner.listing_failure(&slot) {
                errors.insert(slot.id.clone(), error);
            }
        }
        // A tool an MCP App keeps to its view is never offered to a model.
        for server in known.for_model() {
            by_server
                .entry((server.server_name.clone(), server.server_id.clone()))
                .or_default()
                .extend_from_slice(&server.tools);
        }
        let layers = by_server
            .into_iter()
            .map(|((server_name, server_id), tools)| OutlinedLayer {
                protocol: if server_id == HOST_TOOLS_SERVER {
                    "local"
                } else {
                    "mcp"
                },
                error: errors.remove(&server_id),
                server_id,
                server_name,
                tools,
            })
            .collect();
        LayerOutline { known, layers }
    }

    /// A conversation with discovery tools and lazy activation, for an agent loop.
    pub fn conversation(&self) -> Conversation {
        self.conversation_with(ServerFilter::default())
    }

    /// A conversation that sees only the servers `filter` lets through (the llama.cpp web UI's
    /// per-conversation server overrides).
    pub fn conversation_with(&self, filter: ServerFilter) -> Conversation {
        Conversation {
            pool: self.clone(),
            activated: Mutex::new(BTreeSet::new()),
            filter,
        }
    }
}

/// Which servers one conversation uses, by id or name: only `enabled` ones when it is set,
/// never `disabled` ones. Host tools (`local`) are governed the same way.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct ServerFilter {
    pub enabled: Option<Vec<String>>,
    pub disabled: Vec<String>,
}

impl ServerFilter {
    /// Only the server with this id or name.
    pub fn only(server: impl Into<String>) -> ServerFilter {
        ServerFilter {
            enabled: Some(vec![server.into()]),
            disabled: Vec::new(),
        }
    }

    /// Whether the server with this id and name is in.
    pub fn allows(&self, server_id: &str, server_name: &str) -> bool {
        let named = |list: &[String]| list.iter().any(|s| s == server_id || s == server_name);
        self.enabled.as_deref().is_none_or(named) && !named(&self.disabled)
    }
}

/// What one agent conversation may call: the discovery tools, plus every tool of the
/// servers it has used. Activation is irreversible for the conversation's lifetime.
pub struct Conversation {
    pool: Pool,
    activated: Mutex<BTreeSet<String>>,
    filter: ServerFilter,
}

/// What a function name of a conversation refers to.
enum Target {
    GlobalSearch,
    Discovery {
        layer: ToolLayer,
        canonical: &'static str,
    },
    Tool,
}

impl Conversation {
    /// The ten best hits of `query` over the catalog that `keep` keeps (of its fifty best).
    fn best_hits(&self, query: &str, keep: impl Fn(&SearchHit) -> bool) -> Vec<SearchHit> {
        let hits = self.pool.inner.search_index().search(query, 50);
        hits.into_iter().filter(|h| keep(h)).take(10).collect()
    }

    /// Ids of the servers activated so far.
    pub fn activated(&self) -> Vec<String> {
        self.activated.lock().unwrap().iter().cloned().collect()
    }

    /// The tool layers of the servers this conversation uses, as known now.
    pub fn layers(&self) -> Vec<ToolLayer> {
        let mut layers = self.pool.known_layers();
        layers.retain(|l| self.filter.allows(&l.server_id, &l.server_name));
        layers
    }

    /// Lists the servers this conversation uses whose tools are not known yet (see
    /// [`Pool::ensure_catalog`]); every answer of its discovery tools does this first.
    pub async fn ensure_catalog(&self) -> Vec<Unlisted> {
        self.pool.inner.ensure_catalog(&self.filter).await
    }

    /// Refuses a tool of a server this conversation does not use (locating a tool the pool
    /// has not seen yet, so it cannot slip through).
    async fn check_allowed(&self, tool_id: &str) -> Result<()> {
        // Located as the call will be: its server (the host's tools are server `local`).
        let (server_id, name) = match self.pool.tool_info(tool_id).await {
            Ok(tool) if !tool.for_model() => {
                return Err(Error::invalid(format!(
                    "tool '{tool_id}' is for its MCP App's view alone (its _meta.ui.visibility \
                     leaves out \"model\")"
                )));
            }
            Ok(tool) => (tool.server_id, tool.server_name),
            // A server the id names, whose list lacks the tool: the call reports that, unless
            // the server is not for this conversation at all.
            Err(_) => match self.pool.locate_tool(tool_id).await {
                Ok((server_id, _)) if server_id == HOST_TOOLS_SERVER => {
                    (server_id.clone(), server_id)
                }
                Ok((server_id, _)) => {
                    let name = self.pool.get_server(&server_id).await?.name;
                    (server_id, name)
                }
                // Unknown everywhere: the names offered are only those this conversation may
                // call (the pool's own answer would offer every server's).
                Err(Error::NotFound { .. }) => {
                    return Err(self.pool.inner.tool_not_found_among(tool_id, |t| {
                        t.for_model() && self.filter.allows(&t.server_id, &t.server_name)
                    }));
                }
                // Any other failure to locate it: the call itself reports it.
                Err(_) => return Ok(()),
            },
        };
        if self.filter.allows(&server_id, &name) {
            Ok(())
        } else {
            Err(Error::invalid(format!(
                "tool '{tool_id}' belongs to server '{name}', which is disabled for this conversation"
            )))
        }
    }

    /// The function definitions to offer the LLM now. An agent asks on every turn: the
    /// outline shares the known tools, and only the activated servers' tools are copied.
    pub fn tools(&self) -> Vec<ToolDef> {
        let mut outline = self.pool.layer_outline();
        outline
            .layers
            .retain(|l| self.filter.allows(&l.server_id, &l.server_name));
        let activated = self.activated.lock().unwrap().clone();
        let mut out = vec![ToolDef {
            name: "search_tools".into(),
            description: "Search the tools of every server by keywords; returns ids to call."
                .into(),
            input_schema: schema_for("search_tools"),
        }];
        for layer in &outline.layers {
            let prefix = format!("{}_{}", sanitize(&layer.server_name), layer.protocol);
            for (canonical, description) in DISCOVERY {
                // An aliased role takes the real tool's parameters: calls go there as they are.
                let (description, input_schema) = match outline.aliased(layer, canonical) {
                    Some(real) => (
                        real.description.clone().unwrap_or_default(),
                        real.input_schema.clone(),
                    ),
                    None => (
                        description.replace("{server}", &layer.server_name),
                        schema_for(canonical),
                    ),
                };
                out.push(ToolDef {
                    name: format!("{prefix}_{canonical}"),
                    description,
                    input_schema,
                });
            }
        }
        for layer in outline
            .layers
            .iter()
            .filter(|l| activated.contains(&l.server_id))
        {
            out.extend(outline.tools(layer).map(|t| ToolDef {
                name: t.id.clone(),
                description: t.description.clone().unwrap_or_default(),
                input_schema: t.input_schema.clone(),
            }));
        }
        out
    }

    fn target(&self, name: &str) -> Target {
        if name == "search_tools" {
            return Target::GlobalSearch;
        }
        // Every call comes here, a real tool's too: the outline copies no tool, and only the
        // layer a discovery tool names is built.
        let outline = self.pool.layer_outline();
        for layer in &outline.layers {
            if !self.filter.allows(&layer.server_id, &layer.server_name) {
                continue;
            }
            let prefix = format!("{}_{}_", sanitize(&layer.server_name), layer.protocol);
            if let Some(rest) = name.strip_prefix(&prefix)
                && let Some((canonical, _)) = DISCOVERY.iter().find(|(c, _)| *c == rest)
            {
                let layer = outline.to_layer(layer);
                return Target::Discovery { layer, canonical };
            }
        }
        Target::Tool
    }

    /// Calls a function the LLM asked for: discovery tools are answered locally, a recipe
    /// tool is sent to the server's own tool of that role (the alias map), and a real tool
    /// activates its server.
    pub async fn call(
        &self,
        name: &str,
        args: Value,
        options: CallOptions,
    ) -> Result<CallToolResult> {
        match self.target(name) {
            Target::GlobalSearch => {
                let query = string_arg(&args, "query", name)?;
                let unlisted = self.ensure_catalog().await;
                let hits = self.best_hits(&query, |h| {
                    let id = self.pool.tool_server(&h.id).unwrap_or_default();
                    self.filter.allows(&id, &h.server_name)
                });
                Ok(search_answer(hits, &unlisted))
            }
            Target::Discovery { layer, canonical } => {
                self.discovery(layer, canonical, name, args, options).await
            }
            Target::Tool => {
                self.check_allowed(name).await?;
                let result = self.pool.call_tool(name, args, options).await?;
                if let Some(server_id) = self.pool.tool_server(name) {
                    self.activated.lock().unwrap().insert(server_id);
                }
                Ok(result)
            }
        }
    }

    /// A layer with nothing known for its server's current config, after listing the server
    /// once (it is then saved in the catalog and later answers are local); an error says why
    /// it could not be listed.
    async fn listed(&self, layer: ToolLayer) -> Result<ToolLayer> {
        let only = ServerFilter::only(&layer.server_id);
        self.pool.inner.ensure_catalog(&only).await;
        let slot = self.pool.inner.slot(&layer.server_id)?;
        if let Some((_, error)) = self.pool.inner.listing_failure(&slot) {
            return Err(error);
        }
        let outline = self.pool.layer_outline();
        Ok(outline
            .layers
            .iter()
            .find(|l| l.server_id == layer.server_id)
            .map_or(layer, |l| outline.to_layer(l)))
    }

    async fn discovery(
        &self,
        mut layer: ToolLayer,
        canonical: &'static str,
        name: &str,
        args: Value,
        options: CallOptions,
    ) -> Result<CallToolResult> {
        if layer.protocol != "local" && layer.tools.is_empty() {
            layer = self.listed(layer).await?;
        }
        // The server's own tool for this role, if it has one (e.g. `find_recipe_by_keyword`
        // for `search_recipes`): the call goes there, with the agent's arguments.
        if let Some(real) = aliased(&layer, canonical) {
            return self.pool.call_tool(&real.id, args, options).await;
        }
        if layer.protocol == "local" {
            let recipes = self.pool.recipes();
            return match canonical {
                "list_recipes" => Ok(json_result(Value::Array(recipes.list()))),
                "search_recipes" => {
                    let query = string_arg(&args, "query", name)?;
                    Ok(json_result(Value::Array(recipes.search(&query, 10))))
                }
                "get_recipe" => {
                    let recipe = string_arg(&args, "name", name)?;
                    let r = recipes
                        .get(&recipe)
                        .ok_or_else(|| Error::not_found("recipe", recipe))?;
                    Ok(json_result(serde_json::to_value(r).unwrap_or_default()))
                }
                "search_tools" => {
                    let query = string_arg(&args, "query", name)?;
                    let hits = self.best_hits(&query, |h| h.server_name == HOST_TOOLS_SERVER);
                    Ok(search_answer(hits, &[]))
                }
                _ => Ok(json_result(summary(&layer.tools))),
            };
        }
        match canonical {
            "list_tools" => Ok(json_result(summary(&layer.tools))),
            "search_tools" => {
                let query = string_arg(&args, "query", name)?;
                let hits = self.best_hits(&query, |h| layer.tools.iter().any(|t| t.id == h.id));
                Ok(search_answer(hits, &[]))
            }
            // A server's skills (the Skills extension) are its recipes.
            "list_recipes" => {
                let skills = self.pool.list_skills(Some(&layer.server_id)).await?;
                let listed = skills
                    .iter()
                    .map(crate::pool::ext::skills::as_recipe)
                    .collect();
                Ok(json_result(Value::Array(listed)))
            }
            "search_recipes" => {
                let query = string_arg(&args, "query", name)?;
                let skills = self.pool.list_skills(Some(&layer.server_id)).await?;
                let hits = crate::pool::ext::skills::ranked(&skills, &query, 10);
                Ok(json_result(Value::Array(hits)))
            }
            _ => {
                let recipe = string_arg(&args, "name", name)?;
                let skill = self.pool.load_skill(&layer.server_id, &recipe).await;
                let loaded = skill.map_err(|e| match e {
                    Error::NotFound { .. } => Error::not_found(
                        "recipe",
                        format!("{recipe} (not a skill of server '{}')", layer.server_name),
                    ),
                    e => e,
                })?;
                Ok(json_result(skill_recipe(loaded)))
            }
        }
    }
}
