//! The pool's tool index: which tool id belongs to which server, assigned per group of servers
//! whose names share a prefix, and each server's tool list fetched (once at a time) or taken
//! from its cache.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rmcp::model::CacheScope;

use crate::error::{Error, Result};
use crate::pool::Inner;
use crate::pool::server::slot::{CachedTools, Slot};
use crate::tools::stored_tool::StoredTool;
use crate::tools::{ToolInfo, describe, server_prefix};

/// Which server, and which of its tools, each tool id names.
/// A call looks its server up by id here: shared, neither name is copied for each call.
pub(in crate::pool) type ToolIndex = crate::fast_map::FastMap<String, (Arc<str>, Arc<str>)>;

/// Records that `id` names `server`'s tool `name`. Most listings name every tool as the last
/// one did: nothing is copied then.
pub(in crate::pool) fn remember(index: &mut ToolIndex, id: &str, server: &str, name: &str) {
    let known = index.get(id);
    if known.is_none_or(|(s, n)| &**s != server || &**n != name) {
        index.insert(id.to_string(), (Arc::from(server), Arc::from(name)));
    }
}

/// Forgets the ids of `server`'s tools that its list `tools` no longer holds: a call by such
/// an id is then answered by the pool ("tool not found", with the ids it may mean) rather
/// than sent to a server that has no such tool any more.
fn forget_unlisted(index: &mut ToolIndex, server: &str, tools: &[StoredTool]) {
    let listed: HashSet<&str> = tools.iter().map(StoredTool::name).collect();
    index.retain(|_, (s, name)| &**s != server || listed.contains(&**name));
}

impl Inner {
    /// Servers whose names share a tool id prefix: their ids are assigned together.
    pub(in crate::pool) fn prefix_group(&self, server_name: &str) -> Vec<Arc<Slot>> {
        let prefix = server_prefix(server_name);
        self.slots()
            .into_iter()
            .filter(|s| server_prefix(&s.name()) == prefix)
            .collect()
    }

    /// Fetches (or takes from the cache) the tools of a group of servers, assigns their ids in
    /// creation order and records them in the index. With `only`, other members of the group
    /// are taken from the cache alone, so asking for one server never connects another.
    /// With `asked_since`, the servers listed are asked again unless a list was asked for
    /// since that instant (a refresh).
    pub(in crate::pool) async fn index_group(
        self: &Arc<Self>,
        group: &[Arc<Slot>],
        only: Option<&str>,
        asked_since: Option<Instant>,
        stopped_from_catalog: bool,
    ) -> Result<Vec<ToolInfo>> {
        let mut lists = Vec::new();
        for slot in group {
            let tools = if only.is_none_or(|id| id == slot.id) {
                let listed = self.server_tools(slot, asked_since, stopped_from_catalog);
                match listed.await {
                    Ok(t) => t,
                    Err(e) if only.is_some() => return Err(e),
                    Err(_) => continue,
                }
            } else {
                match slot.tools.lock().unwrap().as_ref() {
                    Some(c) => c.tools.clone(),
                    None => continue,
                }
            };
            lists.push((slot.record(), tools));
        }
        let out = describe(lists);
        let mut index = self.tool_index.write().unwrap();
        for t in &out {
            remember(&mut index, &t.id, &t.server_id, &t.name);
        }
        Ok(out)
    }

    /// A server's tools, from the cache while it is fresh (TTL, no `list_changed` since) and,
    /// with `asked_since`, asked for since that instant. With `stopped_from_catalog`, a
    /// server not connected answers with its catalog entry, if it has one for its config,
    /// rather than being started.
    pub(in crate::pool) async fn server_tools(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
        asked_since: Option<Instant>,
        stopped_from_catalog: bool,
    ) -> Result<crate::tools::ToolList> {
        let generation = slot
            .shared
            .tools_generation
            .load(std::sync::atomic::Ordering::SeqCst);
        if let Some(c) = slot.tools.lock().unwrap().as_ref()
            && c.serves(generation, asked_since)
        {
            return Ok(c.tools.clone());
        }
        // A server whose connection failed is tried instead: if it still fails, it drops out.
        if stopped_from_catalog
            && asked_since.is_none()
            && slot.live_connection().is_none()
            && !slot.is_failing()
            && let Some(known) = self.catalog.get(&slot.id, &slot.config_key())
        {
            return Ok(known);
        }
        let conn = slot.connection(self).await?;
        self.fetch_tools(slot, &conn, generation, asked_since).await
    }

    /// Lists a server's tools on `conn` and stores them in the cache, the catalog and search.
    /// `generation` is the server's `list_changed` count read before the request was sent.
    ///
    /// One fetch at a time per server: a caller that waited for another's fetch on the same
    /// connection takes its list (the refresh a connect starts and the caller that asked for
    /// the connect would otherwise both send `tools/list`), if it was asked for since
    /// `asked_since`. A refresh also clears rmcp's cache of the connection's answers.
    pub(in crate::pool) async fn fetch_tools(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
        conn: &Arc<crate::pool::session::connection::Connection>,
        generation: u64,
        asked_since: Option<Instant>,
    ) -> Result<crate::tools::ToolList> {
        let _one = slot.fetching.lock().await;
        if let Some(c) = slot.tools.lock().unwrap().as_ref()
            && c.connection == conn.generation
            && c.serves(generation, asked_since)
        {
            return Ok(c.tools.clone());
        }
        if asked_since.is_some() {
            conn.peer.clear_response_cache().await;
        }
        let asked = Instant::now();
        // Under `fetching`, and a call of a tool not listed yet waits for it: a list that
        // never comes (a server stuck in it, an answer lost with its session) ends in the
        // request timeout rather than hold every later call of the server; the connection
        // is then checked, and replaced if it is dead.
        let limit = slot.request_limit(self);
        let listing = conn.peer.list_all_tools_with_cache_hint();
        let listed = match tokio::time::timeout(limit, listing).await {
            Ok(listed) => listed.map_err(|e| {
                slot.connection_failed(self, conn);
                conn.failure(&slot.name(), "tools/list", e)
            })?,
            Err(_) => return Err(slot.no_answer(self, conn, "tools/list", limit)),
        };
        let tools = Arc::new(crate::tools::stored_tool::store(&listed.items));
        // A 2026-07-28 server's hints (SEP-2549): a shorter freshness than the pool's, and
        // whether the list may be reused beyond the authorization context that got it.
        let ttl = listed
            .ttl_ms
            .map(Duration::from_millis)
            .map_or(self.opts.tools_ttl(), |t| t.min(self.opts.tools_ttl()));
        let catalog_changed = self.catalog.put(
            &slot.id,
            &slot.name(),
            &conn.config_key,
            tools.clone(),
            catalog_may_keep(listed.cache_scope, conn.authorized),
        );
        if catalog_changed {
            self.tools_changed();
        }
        if slot.config_key() != conn.config_key {
            // The record changed while listing: this connection is on its way out, and its
            // list (saved under its own config) is not the server's now.
            return Ok(tools);
        }
        slot.listed(&conn.config_key);
        let previous = slot.tools.lock().unwrap().replace(CachedTools {
            tools: tools.clone(),
            fetched: asked,
            ttl,
            generation,
            connection: conn.generation,
        });
        let changed = previous.filter(|p| p.tools != tools);
        let differs = changed.is_some();
        if differs {
            slot.validators.clear();
        }
        // A change the server announced (a `list_changed` heard since the last list was
        // asked for, or while this one was on its way) was told to hosts as it was heard; one
        // found otherwise (a refresh after the TTL, a reconnect, a server that forgot to say)
        // is told now. Not twice for one announced change: every host would list again for
        // nothing. A list that arrives before the server's own `list_changed` is told, and
        // then the notification is: the pool cannot know that one is on its way.
        let heard = slot.shared.tools_generation.load(Ordering::SeqCst);
        if changed.is_some_and(|p| p.generation == heard) {
            slot.shared.tools_changed();
        }
        if differs || catalog_changed {
            forget_unlisted(&mut self.tool_index.write().unwrap(), &slot.id, &tools);
        }
        Ok(tools)
    }

    /// The server and tool a pool id names, if the index knows it.
    pub(in crate::pool) fn find_tool(&self, tool_id: &str) -> Option<(Arc<Slot>, Arc<str>)> {
        let (server_id, tool) = self.tool_index.read().unwrap().get(tool_id).cloned()?;
        let slot = self.slots.read().unwrap().get(&*server_id).cloned()?;
        Some((slot, tool))
    }

    /// Finds which server and tool a pool id names, listing the servers it could belong to
    /// when the index does not know it yet.
    pub(in crate::pool) async fn resolve_tool(
        self: &Arc<Self>,
        tool_id: &str,
    ) -> Result<(Arc<Slot>, Arc<str>)> {
        if let Some(hit) = self.find_tool(tool_id) {
            return Ok(hit);
        }
        let candidates: Vec<_> = self
            .slots()
            .into_iter()
            .filter(|s| tool_id.starts_with(&server_prefix(&s.name())))
            .collect();
        if candidates.is_empty() {
            return Err(self.tool_not_found(tool_id));
        }
        // Every server of a prefix group, so ids come out as a full listing assigns them.
        let mut group = Vec::new();
        for c in &candidates {
            for s in self.prefix_group(&c.name()) {
                if !group.iter().any(|g: &Arc<Slot>| g.id == s.id) {
                    group.push(s);
                }
            }
        }
        let mut last_error = None;
        for slot in &group {
            if let Err(e) = self.server_tools(slot, None, false).await {
                last_error = Some(e);
            }
        }
        self.index_group(&group, None, None, false).await?;
        if let Some(hit) = self.find_tool(tool_id) {
            return Ok(hit);
        }
        // Disabled tools are not indexed; say so rather than "not found".
        for slot in &candidates {
            let record = slot.record();
            if let Some(tool) = record
                .disabled_tools
                .iter()
                .find(|t| crate::tools::tool_id(&record.name, t) == tool_id)
            {
                return Err(Error::invalid(format!(
                    "tool '{tool}' of server '{}' is disabled",
                    record.name
                )));
            }
        }
        match last_error {
            Some(e) if candidates.len() == 1 => Err(e),
            _ => Err(self.tool_not_found(tool_id)),
        }
    }

    /// "Tool not found" for `tool_id`, offering the tools it may have meant among those the
    /// pool knows without connecting anything.
    fn tool_not_found(&self, tool_id: &str) -> Error {
        self.tool_not_found_among(tool_id, |_| true)
    }

    /// "Tool not found" for `tool_id`, offering only known tools that `offerable` keeps (a
    /// caller that may not call every tool is not offered the others).
    pub(crate) fn tool_not_found_among(
        &self,
        tool_id: &str,
        offerable: impl Fn(&ToolInfo) -> bool,
    ) -> Error {
        let known = self.known();
        let forms = known
            .tools
            .iter()
            .filter(|t| offerable(t))
            .map(|t| (t.id.as_str(), t.name.as_str()));
        Error::NotFound {
            kind: "tool",
            name: tool_id.into(),
            hint: crate::tools::suggest::offer(&crate::tools::suggest::meant(tool_id, forms)),
        }
    }
}

/// Whether the catalog file may keep a list of this cache scope. It keeps lists by config
/// (the headers and env that authorize a server are in it), which is the authorization
/// context a private list may be reused in, unless OAuth tokens, which the config does not
/// name, authorized it. (rmcp and the Python SDK mark every list private unless told.)
fn catalog_may_keep(scope: Option<CacheScope>, authorized: bool) -> bool {
    scope != Some(CacheScope::Private) || !authorized
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_private_list_got_with_oauth_tokens_stays_out_of_the_catalog_file() {
        for (scope, authorized, kept) in [
            (None, false, true),
            (None, true, true),
            (Some(CacheScope::Public), true, true),
            (Some(CacheScope::Private), false, true),
            (Some(CacheScope::Private), true, false),
        ] {
            assert_eq!(
                catalog_may_keep(scope, authorized),
                kept,
                "{scope:?} {authorized}"
            );
        }
    }
}
