//! Tool search across the pool, answered from the tools already known (live lists, else the
//! catalog), after listing the servers whose tools are not known yet (`pool::listing`), and
//! which server a tool id belongs to. Host tools are registered in `host_tools.rs`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{Inner, Pool};
use crate::error::Result;
use crate::tools::host_tools::HOST_TOOLS_SERVER;
use crate::tools::search::{SearchHit, SearchIndex};
use crate::tools::{ToolInfo, describe};

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
        Ok((slot.id.clone(), tool))
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
                .ok_or_else(|| crate::error::Error::NotFound {
                    kind: "tool",
                    name: tool_id.to_string(),
                });
        }
        let (slot, name) = self.inner.resolve_tool(tool_id).await?;
        let listed = slot.tools.lock().unwrap().as_ref().map(|c| c.tools.clone());
        let tools = listed.or_else(|| self.inner.catalog.get(&slot.id, &slot.config_key()));
        tools
            .and_then(|list| list.iter().find(|t| t.name() == name).cloned())
            .map(|t| t.info(tool_id.to_string(), &slot.id, &slot.name()))
            .ok_or_else(|| crate::error::Error::NotFound {
                kind: "tool",
                name: tool_id.to_string(),
            })
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
    pub(super) fn tools_changed(&self) {
        self.tools_version.fetch_add(1, Ordering::SeqCst);
    }

    fn known_tools(&self) -> Vec<ToolInfo> {
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
    pub(super) fn search_index(&self) -> Arc<SearchIndex> {
        let version = self.tools_version.load(Ordering::SeqCst);
        if let Some((v, index)) = self.search.lock().unwrap().as_ref()
            && *v == version
        {
            return index.clone();
        }
        // Searches answer models: a tool an MCP App keeps to its view is not in them.
        let mut tools = self.known_tools();
        tools.retain(ToolInfo::for_model);
        let index = Arc::new(SearchIndex::build(&tools));
        *self.search.lock().unwrap() = Some((version, index.clone()));
        index
    }
}
