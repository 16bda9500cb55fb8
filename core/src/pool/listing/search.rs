//! Tool search across the pool, answered from the tools already known (live lists, else the
//! catalog), after listing the servers whose tools are not known yet (`pool::listing::unlisted`), and
//! which server a tool id belongs to. Host tools are registered in `host_tools.rs`.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use crate::error::Result;
use crate::pool::{Inner, Pool};
use crate::tools::canonical::canonical_name;
use crate::tools::host_tools::HOST_TOOLS_SERVER;
use crate::tools::search::{SearchHit, SearchIndex};
use crate::tools::{ToolInfo, describe};

/// Every known tool described once for one `tools_version`, shared by the readers that need
/// the whole fleet (an agent's every turn, the search index) until a list or a record changes.
pub(crate) struct KnownTools {
    pub(crate) tools: Vec<ToolInfo>,
    /// Each tool's discovery role ([`canonical_name`]), worked out when first asked.
    roles: OnceLock<Vec<Option<&'static str>>>,
    /// The tools offered to a model, by server, worked out when first asked.
    for_model: OnceLock<Vec<ServerTools>>,
}

/// One server's tools offered to a model, as indices into [`KnownTools::tools`].
pub(crate) struct ServerTools {
    pub(crate) server_name: String,
    pub(crate) server_id: String,
    pub(crate) tools: Vec<usize>,
}

impl KnownTools {
    fn new(tools: Vec<ToolInfo>) -> KnownTools {
        KnownTools {
            tools,
            roles: OnceLock::new(),
            for_model: OnceLock::new(),
        }
    }

    /// The tools a model may be offered (an MCP App's view-only tools left out), by server in
    /// the order the servers first appear.
    pub(crate) fn for_model(&self) -> &[ServerTools] {
        self.for_model.get_or_init(|| {
            let mut out: Vec<ServerTools> = Vec::new();
            for (i, t) in self.tools.iter().enumerate().filter(|(_, t)| t.for_model()) {
                // Tools come server by server: a server's place is found once per run of them.
                let same =
                    |s: &ServerTools| s.server_id == t.server_id && s.server_name == t.server_name;
                match out.last_mut().filter(|s| same(s)) {
                    Some(s) => s.tools.push(i),
                    None => match out.iter_mut().find(|s| same(s)) {
                        Some(s) => s.tools.push(i),
                        None => out.push(ServerTools {
                            server_name: t.server_name.clone(),
                            server_id: t.server_id.clone(),
                            tools: vec![i],
                        }),
                    },
                }
            }
            out
        })
    }

    /// The discovery role of `tools[i]`, if it plays one (`list_tools`, `search_recipes` ...).
    pub(crate) fn role(&self, i: usize) -> Option<&'static str> {
        let roles = self.roles.get_or_init(|| {
            self.tools
                .iter()
                .map(|t| canonical_name(&t.name, t.description.as_deref()))
                .collect()
        });
        roles[i]
    }
}

impl Pool {
    /// Ranked tools for `query` (names, titles, descriptions, parameter names), best first,
    /// at most `limit` (`None`: [`crate::tools::search::DEFAULT_LIMIT`]; 0 is refused).
    /// Servers whose tools are not known for their current config are listed first
    /// ([`Pool::ensure_catalog`]); the others are not started. A server that cannot be listed
    /// is left out (its error is in [`Pool::server_states`] and [`Pool::layers`]).
    pub async fn search_tools(&self, query: &str, limit: Option<usize>) -> Result<Vec<SearchHit>> {
        let limit = crate::tools::search::limit(limit)?;
        self.ensure_catalog(&Default::default()).await;
        Ok(self.inner.search_index().search(query, limit))
    }

    /// The server id a pool tool id belongs to, if the pool has seen that id (`local` for
    /// the host's tools).
    pub fn tool_server(&self, tool_id: &str) -> Option<String> {
        self.tool_server_id(tool_id).map(|id| id.to_string())
    }

    /// [`Pool::tool_server`] as the tool index holds it, for a caller on every call.
    pub(crate) fn tool_server_id(&self, tool_id: &str) -> Option<Arc<str>> {
        if self.inner.local.contains(tool_id) {
            return Some(HOST_TOOLS_SERVER.into());
        }
        let index = self.inner.tool_index.read().unwrap();
        index.get(tool_id).map(|(server_id, _)| server_id.clone())
    }

    /// The server id and the server's own name of a tool, listing the tools of the server
    /// its id points to when the pool has not seen it yet (so a check before a call sees
    /// the server the call would reach).
    pub async fn locate_tool(&self, tool_id: &str) -> Result<(String, String)> {
        if self.inner.local.contains(tool_id) {
            return Ok((HOST_TOOLS_SERVER.into(), tool_id.into()));
        }
        let (slot, tool) = self.inner.resolve_tool(tool_id).await?;
        Ok((slot.id.clone(), tool.to_string()))
    }

    /// One tool by its pool id: what a host shows before it runs (title, description,
    /// annotations). Located as a call would be (its server listed when the pool does not know
    /// the id yet).
    pub async fn tool_info(&self, tool_id: &str) -> Result<ToolInfo> {
        if self.inner.local.contains(tool_id) {
            return self
                .inner
                .local
                .list()
                .into_iter()
                .find(|t| t.id == tool_id)
                .ok_or_else(|| crate::error::Error::not_found("tool", tool_id));
        }
        let (slot, name) = self.inner.resolve_tool(tool_id).await?;
        let listed = slot.tools.lock().unwrap().as_ref().map(|c| c.tools.clone());
        let tools = listed.or_else(|| self.inner.catalog.get(&slot.id, &slot.config_key()));
        tools
            .and_then(|list| list.iter().find(|t| t.name() == &*name).cloned())
            .map(|t| t.info(tool_id.to_string(), &slot.id, &slot.name()))
            .ok_or_else(|| crate::error::Error::not_found("tool", tool_id))
    }

    /// Every tool known without connecting anything: fresh lists of connected servers, and the
    /// catalog's last known lists for the others (made from their current config: a list
    /// made from another config is not known). Disabled servers and tools are left out.
    pub fn known_tools(&self) -> Vec<ToolInfo> {
        self.inner.known_tools()
    }
}

impl Inner {
    /// Something that changes tool ids or lists happened: the search index is stale.
    pub(in crate::pool) fn tools_changed(&self) {
        self.tools_version.fetch_add(1, Ordering::SeqCst);
    }

    fn known_tools(&self) -> Vec<ToolInfo> {
        self.known().tools.clone()
    }

    /// The known tools at the current `tools_version`, described again only when something
    /// changed since: every change to a list, a record or the host's tools bumps the version
    /// (the search index and `ensure_catalog` rely on the same).
    pub(crate) fn known(&self) -> Arc<KnownTools> {
        // Read first: a change made while describing bumps it, and the next reader describes
        // again.
        let version = self.tools_version.load(Ordering::SeqCst);
        if let Some((v, known)) = self.known.lock().unwrap().as_ref()
            && *v == version
        {
            return known.clone();
        }
        let known = Arc::new(KnownTools::new(self.describe_known()));
        *self.known.lock().unwrap() = Some((version, known.clone()));
        known
    }

    fn describe_known(&self) -> Vec<ToolInfo> {
        let lists = self
            .active_slots()
            .into_iter()
            .filter_map(|slot| {
                let live = slot.tools.lock().unwrap().as_ref().map(|c| c.tools.clone());
                live.or_else(|| self.catalog.get(&slot.id, &slot.config_key()))
                    .map(|tools| (slot.record(), tools))
            })
            .collect();
        let mut tools = describe(lists);
        tools.extend(self.local.list());
        tools
    }

    /// The index for the current tools, rebuilt only when something changed since.
    pub(in crate::pool) fn search_index(&self) -> Arc<SearchIndex> {
        let version = self.tools_version.load(Ordering::SeqCst);
        if let Some((v, index)) = self.search.lock().unwrap().as_ref()
            && *v == version
        {
            return index.clone();
        }
        // Searches answer models: a tool an MCP App keeps to its view is not in them.
        let known = self.known();
        let tools: Vec<ToolInfo> = known
            .tools
            .iter()
            .filter(|t| t.for_model())
            .cloned()
            .collect();
        let index = Arc::new(SearchIndex::build(&tools));
        *self.search.lock().unwrap() = Some((version, index.clone()));
        index
    }
}
