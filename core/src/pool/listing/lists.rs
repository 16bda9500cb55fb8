//! The list requests of the pool: tools, resources, resource templates and prompts, from the
//! caches or, with [`ListOptions::refresh`], fresh from the servers.

use std::sync::Arc;
use std::time::Instant;

use rmcp::service::ServiceError;
use rmcp::{Peer, RoleClient};
use serde::Serialize;

use crate::error::Result;
use crate::pool::server::slot::Slot;
use crate::pool::{Inner, Pool};
use crate::tools::host_tools::HOST_TOOLS_SERVER;
use crate::tools::{ToolInfo, server_prefix};

/// A listing this long leaves megabytes freed behind it once the caller is done with it.
const BULK_LIST: usize = 1000;

/// How a list call may answer ([`Pool::list_tools_with`] and the other `_with` lists). As
/// JSON (the C API): `{"refresh": true}`; an unknown field is refused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListOptions {
    /// Ask the servers again, past every cache (the pool's tool lists and rmcp's cache of
    /// answers), for a host that knows a server changed without telling. A list asked for by
    /// another caller after this call began is taken as it is.
    #[serde(default)]
    pub refresh: bool,
    /// A server that is not connected (not started yet, or stopped idle) answers with its
    /// last known list from the catalog instead of being started (one never listed is
    /// still started): what a gateway's listing wants, so a client's `tools/list` does not
    /// start every server.
    #[serde(skip)]
    pub known: bool,
}

impl ListOptions {
    /// Options that ask the servers again.
    pub fn refresh() -> Self {
        ListOptions {
            refresh: true,
            ..ListOptions::default()
        }
    }

    /// Options that take a stopped server's tools from the catalog.
    pub fn known() -> Self {
        ListOptions {
            known: true,
            ..ListOptions::default()
        }
    }
}

/// A resource with the server it comes from.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    pub server_id: String,
    pub server_name: String,
    #[serde(flatten)]
    pub resource: rmcp::model::Resource,
}

/// A resource template with the server it comes from.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateInfo {
    pub server_id: String,
    pub server_name: String,
    #[serde(flatten)]
    pub template: rmcp::model::ResourceTemplate,
}

/// A prompt with the server it comes from.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptInfo {
    pub server_id: String,
    pub server_name: String,
    #[serde(flatten)]
    pub prompt: rmcp::model::Prompt,
}

/// Flattens per-server lists, tagging each item with its server's id and name.
fn tag_servers<T, U>(
    per_server: Vec<(Arc<Slot>, Vec<T>)>,
    wrap: impl Fn(String, String, T) -> U,
) -> Vec<U> {
    let mut out = Vec::new();
    for (slot, list) in per_server {
        let name = slot.name();
        out.extend(
            list.into_iter()
                .map(|item| wrap(slot.id.clone(), name.clone(), item)),
        );
    }
    out
}

/// Groups of servers whose names share a tool id prefix (their ids are assigned together).
fn prefix_groups(slots: Vec<Arc<Slot>>) -> Vec<Vec<Arc<Slot>>> {
    let mut groups: Vec<Vec<Arc<Slot>>> = Vec::new();
    for slot in slots {
        let prefix = server_prefix(&slot.name());
        match groups
            .iter_mut()
            .find(|g| server_prefix(&g[0].name()) == prefix)
        {
            Some(g) => g.push(slot),
            None => groups.push(vec![slot]),
        }
    }
    groups
}

impl Pool {
    /// Tools of every active server (or of one), with pool-unique ids. Disabled tools are left
    /// out. A server that cannot be reached is skipped when listing all (its failure shows in
    /// `connection:state`) and is an error when asked for alone.
    pub async fn list_tools(&self, server: Option<&str>) -> Result<Vec<ToolInfo>> {
        self.list_tools_with(server, ListOptions::default()).await
    }

    /// [`Pool::list_tools`], with [`ListOptions`].
    pub async fn list_tools_with(
        &self,
        server: Option<&str>,
        options: ListOptions,
    ) -> Result<Vec<ToolInfo>> {
        let _flight = self.inner.begin()?;
        let asked_since = options.refresh.then(Instant::now);
        match server {
            Some(HOST_TOOLS_SERVER) if self.inner.slot(HOST_TOOLS_SERVER).is_err() => {
                Ok(self.inner.local.list())
            }
            Some(s) => {
                let slot = self.inner.slot(s)?;
                let group = self.inner.prefix_group(&slot.name());
                let mut tools = self
                    .inner
                    .index_group(&group, Some(&slot.id), asked_since, options.known)
                    .await?;
                tools.retain(|t| t.server_id == slot.id);
                // In the order of a listing of every server.
                tools.sort_by(|a, b| a.id.cmp(&b.id));
                Ok(tools)
            }
            None => {
                // Nothing to ask any server: the last listing, copied out of the lists.
                let fresh = asked_since.is_none().then(|| self.inner.list_fresh());
                let out = match fresh.flatten() {
                    Some(out) => out,
                    None => self.list_every_server(asked_since, options.known).await,
                };
                if out.len() >= BULK_LIST {
                    crate::memory::trim_soon();
                }
                Ok(out)
            }
        }
    }

    /// Every active server's tools, fetched where its list is not fresh, in id order.
    async fn list_every_server(
        &self,
        asked_since: Option<Instant>,
        stopped_from_catalog: bool,
    ) -> Vec<ToolInfo> {
        let groups = prefix_groups(self.inner.active_slots());
        let lists = futures::future::join_all(groups.iter().map(|g| {
            self.inner
                .index_group(g, None, asked_since, stopped_from_catalog)
        }))
        .await;
        let mut out: Vec<ToolInfo> = lists.into_iter().flatten().flatten().collect();
        out.extend(self.inner.local.list());
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }

    /// Resources of every server that offers them (or of one), following pagination.
    pub async fn list_resources(&self, server: Option<&str>) -> Result<Vec<ResourceInfo>> {
        self.list_resources_with(server, ListOptions::default())
            .await
    }

    /// [`Pool::list_resources`], with [`ListOptions`].
    pub async fn list_resources_with(
        &self,
        server: Option<&str>,
        options: ListOptions,
    ) -> Result<Vec<ResourceInfo>> {
        self.listed(
            server,
            options,
            "resources/list",
            |c| c.resources.is_some(),
            |peer| async move { peer.list_all_resources().await },
            |server_id, server_name, resource| ResourceInfo {
                server_id,
                server_name,
                resource,
            },
        )
        .await
    }

    /// Resource templates of every server that offers them (or of one).
    pub async fn list_resource_templates(
        &self,
        server: Option<&str>,
    ) -> Result<Vec<ResourceTemplateInfo>> {
        self.list_resource_templates_with(server, ListOptions::default())
            .await
    }

    /// [`Pool::list_resource_templates`], with [`ListOptions`].
    pub async fn list_resource_templates_with(
        &self,
        server: Option<&str>,
        options: ListOptions,
    ) -> Result<Vec<ResourceTemplateInfo>> {
        self.listed(
            server,
            options,
            "resources/templates/list",
            |c| c.resources.is_some(),
            |peer| async move { peer.list_all_resource_templates().await },
            |server_id, server_name, template| ResourceTemplateInfo {
                server_id,
                server_name,
                template,
            },
        )
        .await
    }

    /// Prompts of every server that offers them (or of one), with the server's name.
    pub async fn list_prompts(&self, server: Option<&str>) -> Result<Vec<PromptInfo>> {
        self.list_prompts_with(server, ListOptions::default()).await
    }

    /// [`Pool::list_prompts`], with [`ListOptions`].
    pub async fn list_prompts_with(
        &self,
        server: Option<&str>,
        options: ListOptions,
    ) -> Result<Vec<PromptInfo>> {
        self.listed(
            server,
            options,
            "prompts/list",
            |c| c.prompts.is_some(),
            |peer| async move { peer.list_all_prompts().await },
            |server_id, server_name, prompt| PromptInfo {
                server_id,
                server_name,
                prompt,
            },
        )
        .await
    }

    /// The items of a list request of every capable server (or of one, see
    /// [`Inner::each_capable`]), each tagged with its server by `tag`.
    async fn listed<T, U, F, Fut>(
        &self,
        server: Option<&str>,
        options: ListOptions,
        method: &str,
        capable: impl Fn(&rmcp::model::ServerCapabilities) -> bool,
        fetch: F,
        tag: impl Fn(String, String, T) -> U,
    ) -> Result<Vec<U>>
    where
        F: Fn(Peer<RoleClient>) -> Fut,
        Fut: Future<Output = std::result::Result<Vec<T>, ServiceError>>,
    {
        let _flight = self.inner.begin()?;
        let per_server = self
            .inner
            .each_capable(server, options, method, capable, fetch)
            .await?;
        Ok(tag_servers(per_server, tag))
    }
}

impl Inner {
    /// Runs `f` on every active server (or one) whose capabilities pass `capable`; when asking
    /// all, servers that fail are skipped. A refresh first clears rmcp's cache of the
    /// connection's answers, which `f`'s list would otherwise come from.
    async fn each_capable<T, F, Fut>(
        self: &Arc<Self>,
        server: Option<&str>,
        options: ListOptions,
        method: &str,
        capable: impl Fn(&rmcp::model::ServerCapabilities) -> bool,
        f: F,
    ) -> Result<Vec<(Arc<Slot>, Vec<T>)>>
    where
        F: Fn(Peer<RoleClient>) -> Fut,
        Fut: Future<Output = std::result::Result<Vec<T>, ServiceError>>,
    {
        let slots = match server {
            Some(s) => vec![self.slot(s)?],
            None => self.active_slots(),
        };
        let jobs = slots.into_iter().map(|slot| {
            let capable = &capable;
            let f = &f;
            async move {
                let conn = slot.connection(self).await?;
                let caps = conn.peer.peer_info().map(|i| i.capabilities.clone());
                if !caps.as_ref().is_some_and(capable) {
                    return Ok((slot, Vec::new()));
                }
                if options.refresh {
                    conn.peer.clear_response_cache().await;
                }
                // A server that never answers must not hold the whole listing.
                let list = slot
                    .answer(self, &conn, method, f(conn.peer.clone()))
                    .await?;
                Ok((slot, list))
            }
        });
        let results = futures::future::join_all(jobs).await;
        if server.is_some() {
            return results.into_iter().collect();
        }
        let mut out: Vec<_> = results.into_iter().filter_map(Result::ok).collect();
        out.sort_by_key(|(s, _)| s.name());
        Ok(out)
    }
}
