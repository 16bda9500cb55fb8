//! Managing the server list (Elftia's list / add / addJson / update / remove / test / discover).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;

use super::server::slot::Slot;
use super::session::connection::Connection;
use super::{Inner, Pool, blocking};
use crate::config::consent::Consent;
use crate::config::import::parse_server_json;
use crate::config::record::{ServerInput, ServerPatch, ServerRecord};
use crate::error::{Error, Result};
use crate::events::Event;
use crate::pool::session::client_side::ServerShared;

/// The outcome of one entry of [`Pool::add_json`].
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportResult {
    pub name: String,
    pub success: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<ServerRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The server was saved before as this entry asks: nothing was added (an import run
    /// again).
    pub already_there: bool,
}

/// The outcome of [`Pool::add`]: the saved record, and whether the add found it already there.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddOutcome {
    #[serde(flatten)]
    pub record: ServerRecord,
    /// The server was saved before as asked: nothing was added or changed.
    pub already_there: bool,
}

/// The outcome of [`Pool::test_server`]: whether it connects, and its tools if so.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TestResult {
    pub success: bool,
    pub tools: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    pub duration_ms: u64,
}

/// Everything a server offers; prompts and resources may fail on their own.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    pub tools: Vec<rmcp::model::Tool>,
    pub prompts: Vec<rmcp::model::Prompt>,
    pub resources: Vec<rmcp::model::Resource>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources_error: Option<String>,
}

impl Pool {
    /// Every server this pool sees, re-read from the config file (so changes made by other
    /// processes show up), in creation order.
    pub async fn list_servers(&self) -> Result<Vec<ServerRecord>> {
        let store = self.inner.store.clone();
        let records = blocking(move || store.load()).await?;
        if self.inner.sync_slots(records.clone()).await {
            self.inner.events.emit(Event::ServersChanged);
        }
        let project = self.inner.opts.project_path.as_deref();
        Ok(records
            .into_iter()
            .filter(|r| r.visible_from(project))
            .collect())
    }

    /// One server by id or name.
    pub async fn get_server(&self, server: &str) -> Result<ServerRecord> {
        Ok(self.inner.slot(server)?.record())
    }

    /// Adds a server; [`Pool::add`] says too whether it was already there.
    pub async fn add_server(&self, input: ServerInput) -> Result<ServerRecord> {
        Ok(self.add(input).await?.record)
    }

    /// Adds a server. Its name must be unique among the servers that can be seen together.
    /// Adding a server that is already there as asked (a script run again, a host adding its
    /// servers at every start) answers the saved record and changes nothing: what the input
    /// leaves to its defaults (active, trusted, disabled tools...) is the saved record's, as a
    /// user may have changed it since. A server of that name that differs in what the input
    /// names is refused, with the fields that differ.
    /// With `connectOnAdd` (the default), an active server is connected in the background and
    /// its tools recorded in the catalog; a failure never fails the add (it becomes the
    /// server's `error` state, with a `connection:state` event).
    pub async fn add(&self, input: ServerInput) -> Result<AddOutcome> {
        let unasked = input.unasked();
        let added = input.into_record()?;
        let saved = added.clone();
        let store = self.inner.store.clone();
        let existing = blocking(move || {
            store.update(|records| {
                let Some(other) = records
                    .iter()
                    .find(|r| r.name == saved.name && r.shares_view_with(&saved))
                else {
                    records.push(saved);
                    return Ok(None);
                };
                let differences = other.differences_from(&saved, &unasked);
                if differences.is_empty() {
                    return Ok(Some(other.clone()));
                }
                Err(Error::invalid(format!(
                    "a server named '{}' already exists (id {}) with another {}: update that \
                     server, or remove it before adding it again",
                    other.name,
                    other.id,
                    differences.join(", ")
                )))
            })
        })
        .await?;
        let already_there = existing.is_some();
        let record = match existing {
            // Known to this pool already: nothing changed.
            Some(record) if self.inner.slot(&record.id).is_ok() => {
                return Ok(AddOutcome {
                    record,
                    already_there,
                });
            }
            // Added by another process since this pool last read the file: taken in now.
            Some(record) => record,
            None => added,
        };
        if record.visible_from(self.inner.opts.project_path.as_deref()) {
            let slot = Slot::new(record.clone(), &self.inner);
            self.inner
                .slots
                .write()
                .unwrap()
                .insert(record.id.clone(), slot.clone());
            // After the insert: an answer that saw the count before must look again.
            self.inner.tools_changed();
            if record.runs() && self.inner.opts.connect_on_add {
                self.inner.list_in_background(slot);
            }
        }
        if record.pending {
            self.inner.events.emit(Event::ServerPending {
                server_id: record.id.clone(),
                server_name: record.name.clone(),
                consent: Box::new(Consent::of(&record)),
            });
        }
        self.inner.events.emit(Event::ServersChanged);
        Ok(AddOutcome {
            record,
            already_there,
        })
    }

    /// Imports `{"mcpServers": {...}}` (Claude Desktop, Cursor), `{"servers": {...}}` (VS Code)
    /// or a bare `{name: config}` map. One result per entry; a bad entry fails alone.
    pub async fn add_json(&self, text: &str) -> Result<Vec<ImportResult>> {
        let mut out = Vec::new();
        for (name, input) in parse_server_json(text)? {
            let result = match input {
                Ok(input) => self.add(input).await,
                Err(e) => Err(e),
            };
            out.push(match result {
                Ok(added) => ImportResult {
                    name,
                    success: true,
                    record: Some(added.record),
                    error: None,
                    already_there: added.already_there,
                },
                Err(e) => ImportResult {
                    name,
                    success: false,
                    record: None,
                    error: Some(e.to_string()),
                    already_there: false,
                },
            });
        }
        Ok(out)
    }

    /// Merges `patch` into a server (id kept, `updatedAt` set). A change of `type` or `config`
    /// reconnects it and, with `connectOnAdd`, lists its tools again in the background (as
    /// enabling it does); deactivating disconnects it.
    pub async fn update_server(&self, server: &str, patch: ServerPatch) -> Result<ServerRecord> {
        let id = self.resolve_id(server).await?;
        // Trusting a server trusts its tools as they are now: each is pinned, and one that
        // changes later is asked about again. Pinned before the record is written, so no
        // moment sees the trust without them. (A server that cannot be listed now has its
        // tools pinned as they are first seen.)
        let pins = match patch.is_trusted {
            Some(true) => Some(self.current_pins(&id).await),
            _ => None,
        };
        let store = self.inner.store.clone();
        let (record, reconnect, enabled) = {
            let id = id.clone();
            blocking(move || {
                store.update(|records| {
                    let idx = records
                        .iter()
                        .position(|r| r.id == id)
                        .ok_or_else(|| Error::not_found("server", &id))?;
                    let mut updated = records[idx].clone();
                    let trust = patch.is_trusted;
                    let changed = updated.apply(patch)?;
                    match trust {
                        Some(true) => updated.trusted_tools = pins.clone().flatten(),
                        Some(false) => updated.trusted_tools = None,
                        None => {}
                    }
                    // Enabled, or approved: it may run now where it could not.
                    let enabled = updated.runs() && !records[idx].runs();
                    if let Some(other) = records.iter().find(|r| {
                        r.id != updated.id && r.name == updated.name && r.shares_view_with(&updated)
                    }) {
                        return Err(Error::invalid(format!(
                            "a server named '{}' already exists (id {})",
                            other.name, other.id
                        )));
                    }
                    records[idx] = updated.clone();
                    Ok((updated, changed, enabled))
                })
            })
            .await?
        };
        let list = self.inner.opts.connect_on_add && (reconnect || enabled);
        self.inner
            .apply_record(record.clone(), reconnect, list)
            .await;
        self.inner.events.emit(Event::ServersChanged);
        Ok(record)
    }

    /// Approves a server that waits for the user's approval (one imported from another host's
    /// file): it may run from now on, and with `connectOnAdd` it is connected and listed. The
    /// host shows the user [`Consent::of`] its record first (the `server:pending` event
    /// carries it). Approving a server that does not wait changes nothing.
    pub async fn approve_server(&self, server: &str) -> Result<ServerRecord> {
        let record = self.get_server(server).await?;
        if !record.pending {
            return Ok(record);
        }
        let approve = ServerPatch {
            pending: Some(false),
            ..Default::default()
        };
        self.update_server(&record.id, approve).await
    }

    /// The pins of `server_id`'s tools as the pool knows them now (listing them if it must);
    /// none when they cannot be listed.
    async fn current_pins(&self, server_id: &str) -> Option<crate::tools::pins::TrustedTools> {
        match self.list_tools(Some(server_id)).await {
            Ok(tools) => Some(crate::tools::pins::pin(&tools)),
            Err(e) => {
                tracing::info!(server = %server_id, "trusted without pins, listing failed: {e}");
                None
            }
        }
    }

    #[cfg(feature = "agent")]
    /// The pins of a trusted server whose record has none yet (trusted as it was added, or
    /// before pins were kept): its tools as seen now, saved. What was trusted without being
    /// seen is pinned at its first sight, so that what changes after it is asked about.
    pub(crate) async fn pins_of(
        &self,
        record: &ServerRecord,
    ) -> Option<crate::tools::pins::TrustedTools> {
        if let Some(pins) = &record.trusted_tools {
            return Some(pins.clone());
        }
        let pins = self.current_pins(&record.id).await?;
        let (store, id, saved) = (self.inner.store.clone(), record.id.clone(), pins.clone());
        let written = blocking(move || {
            store.update(|records| {
                if let Some(r) = records.iter_mut().find(|r| r.id == id)
                    && r.is_trusted
                    && r.trusted_tools.is_none()
                {
                    r.trusted_tools = Some(saved);
                }
                Ok(())
            })
        })
        .await;
        if let Err(e) = written {
            tracing::warn!(server = %record.name, "the trusted tools were not saved: {e}");
        }
        // The pool's copy too, as the file has it now (its tools' cache stays: only what was
        // trusted changed).
        if let Ok(slot) = self.inner.slot(&record.id) {
            let mut current = slot.record();
            if current.is_trusted && current.trusted_tools.is_none() {
                current.trusted_tools = Some(pins.clone());
                slot.set_record(current).await;
            }
        }
        Some(pins)
    }

    /// Removes a server and closes its connection.
    pub async fn remove_server(&self, server: &str) -> Result<ServerRecord> {
        let id = self.resolve_id(server).await?;
        let store = self.inner.store.clone();
        let removed = blocking(move || {
            store.update(|records| {
                let idx = records
                    .iter()
                    .position(|r| r.id == id)
                    .ok_or_else(|| Error::not_found("server", &id))?;
                Ok(records.remove(idx))
            })
        })
        .await?;
        self.inner.drop_slot(&removed.id).await;
        self.inner.catalog.remove(&removed.id);
        self.inner.events.emit(Event::ServersChanged);
        Ok(removed)
    }

    /// Connects to a saved server on a fresh, separate connection, lists its tools and closes.
    pub async fn test_server(&self, server: &str) -> Result<TestResult> {
        let record = self.inner.slot(server)?.record();
        Ok(self.test_record(&record).await)
    }

    /// Like [`Pool::test_server`] for a server that is not saved.
    pub async fn test_config(&self, input: ServerInput) -> Result<TestResult> {
        let record = input.into_record()?;
        Ok(self.test_record(&record).await)
    }

    async fn test_record(&self, record: &ServerRecord) -> TestResult {
        let started = Instant::now();
        let shared = ServerShared::new(
            &record.id,
            crate::events::EventBus::new(16),
            self.inner.opts.client_name.clone(),
            self.inner.host.clone(),
        );
        let timeout = record
            .timeouts
            .connect()
            .unwrap_or(self.inner.opts.connect_timeout());
        let attempt = async {
            let conn = Connection::open(
                record,
                shared,
                0,
                self.inner.opts.max_message_bytes,
                self.inner.opts.tools_ttl(),
                Box::new(|_| {}),
            )
            .await?;
            let tools = conn.peer.list_all_tools().await.map_err(|e| {
                conn.too_large(&record.name).unwrap_or_else(|| {
                    Error::connection(&record.name, format!("tools/list failed: {e}"))
                })
            });
            conn.close(Duration::from_secs(2)).await;
            Ok::<_, Error>((conn.protocol_version.clone(), tools?))
        };
        let outcome = match tokio::time::timeout(timeout, attempt).await {
            Ok(r) => r,
            Err(_) => Err(Error::Timeout {
                what: format!("testing server '{}'", record.name),
                after: timeout,
            }),
        };
        let duration_ms = started.elapsed().as_millis() as u64;
        match outcome {
            Ok((protocol, tools)) => TestResult {
                success: true,
                tools: tools.iter().map(|t| t.name.to_string()).collect(),
                error: None,
                protocol_version: Some(protocol),
                duration_ms,
            },
            Err(e) => TestResult {
                success: false,
                tools: Vec::new(),
                error: Some(e.to_string()),
                protocol_version: None,
                duration_ms,
            },
        }
    }

    /// Tools, prompts and resources of one server, through the pool's connection.
    pub async fn discover(&self, server: &str) -> Result<DiscoverResult> {
        let _flight = self.inner.begin()?;
        let slot = self.inner.slot(server)?;
        let conn = slot.connection(&self.inner).await?;
        let inner = &self.inner;
        let tools = conn.peer.list_all_tools();
        let tools = slot.answer(inner, &conn, "tools/list", tools).await?;
        let caps = conn.peer.peer_info().map(|i| i.capabilities.clone());
        let (prompts, prompts_error) = match caps.as_ref().and_then(|c| c.prompts.as_ref()) {
            None => (Vec::new(), None),
            Some(_) => apart(
                slot.answer(inner, &conn, "prompts/list", conn.peer.list_all_prompts())
                    .await,
            ),
        };
        let (resources, resources_error) = match caps.as_ref().and_then(|c| c.resources.as_ref()) {
            None => (Vec::new(), None),
            Some(_) => apart(
                slot.answer(
                    inner,
                    &conn,
                    "resources/list",
                    conn.peer.list_all_resources(),
                )
                .await,
            ),
        };
        Ok(DiscoverResult {
            tools,
            prompts,
            resources,
            prompts_error,
            resources_error,
        })
    }

    /// Resolves an id or a name against the file (another process may have added it).
    async fn resolve_id(&self, server: &str) -> Result<String> {
        if let Ok(slot) = self.inner.slot(server) {
            return Ok(slot.id.clone());
        }
        let records = self.list_servers().await?;
        records
            .iter()
            .find(|r| r.id == server)
            .or_else(|| records.iter().find(|r| r.name == server))
            .map(|r| r.id.clone())
            .ok_or_else(|| Error::not_found("server", server))
    }
}

impl Inner {
    /// Brings the in-memory servers in line with the records read from the file; whether any
    /// server was added, removed or changed.
    pub(super) async fn sync_slots(self: &Arc<Self>, records: Vec<ServerRecord>) -> bool {
        let project = self.opts.project_path.clone();
        let visible: Vec<_> = records
            .into_iter()
            .filter(|r| r.visible_from(project.as_deref()))
            .collect();
        let gone: Vec<String> = {
            let slots = self.slots.read().unwrap();
            slots
                .keys()
                .filter(|id| !visible.iter().any(|r| &r.id == *id))
                .cloned()
                .collect()
        };
        let mut changed = !gone.is_empty();
        for id in gone {
            self.drop_slot(&id).await;
        }
        for record in visible {
            let existing = self.slots.read().unwrap().get(&record.id).cloned();
            match existing {
                None => {
                    let slot = Slot::new(record.clone(), self);
                    self.slots.write().unwrap().insert(record.id.clone(), slot);
                    self.tools_changed();
                    changed = true;
                }
                Some(slot) => {
                    let old = slot.record();
                    if old != record {
                        let reconnect =
                            old.transport != record.transport || old.config != record.config;
                        self.apply_record(record, reconnect, false).await;
                        changed = true;
                    }
                }
            }
        }
        changed
    }

    /// Stores a changed record in its slot and reconnects or disconnects as the change needs;
    /// with `list`, an active server is connected and listed in the background either way.
    async fn apply_record(self: &Arc<Self>, record: ServerRecord, reconnect: bool, list: bool) {
        self.tools_changed();
        let project = self.opts.project_path.as_deref();
        if !record.visible_from(project) {
            self.drop_slot(&record.id).await;
            return;
        }
        let slot = self.slots.read().unwrap().get(&record.id).cloned();
        let Some(slot) = slot else {
            let slot = Slot::new(record.clone(), self);
            self.slots
                .write()
                .unwrap()
                .insert(record.id.clone(), slot.clone());
            self.tools_changed();
            if list && record.runs() {
                self.list_in_background(slot);
            }
            return;
        };
        let active = record.runs();
        // Ids were assigned from the old record (name, disabled tools, config): forget them,
        // so a call with a stale id is resolved again, not sent to a server that may not
        // have that tool any more.
        self.tool_index
            .write()
            .unwrap()
            .retain(|_, (server_id, _)| **server_id != *record.id);
        slot.set_record(record).await;
        *slot.tools.lock().unwrap() = None;
        // Again now that the change is in: an answer may have looked in between.
        self.tools_changed();
        let mut was_connected = false;
        if reconnect || !active {
            was_connected = slot.status().state == crate::events::ConnectionState::Connected;
            slot.disconnect(self).await;
            self.clients.end_server(self, &slot.id).await;
        }
        if active && (list || (reconnect && was_connected)) {
            self.list_in_background(slot);
        }
    }

    /// Connects a server and records its tools in the catalog, in the background; a failure
    /// shows as the server's state (and is what discovery answers until it is tried again).
    fn list_in_background(self: &Arc<Self>, slot: Arc<Slot>) {
        let inner = self.clone();
        tokio::spawn(async move {
            let _ = inner.list_for_catalog(&slot).await;
        });
    }

    async fn drop_slot(&self, id: &str) {
        self.tools_changed();
        let slot = self.slots.write().unwrap().remove(id);
        if let Some(slot) = slot {
            slot.removed.store(true, Ordering::SeqCst);
            slot.disconnect(self).await;
            self.clients.end_server(self, id).await;
            self.tool_index
                .write()
                .unwrap()
                .retain(|_, (server_id, _)| &**server_id != id);
        }
    }
}

/// A listing that may fail without failing the whole answer: what it listed, or its error.
fn apart<T>(listed: Result<Vec<T>>) -> (Vec<T>, Option<String>) {
    match listed {
        Ok(items) => (items, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    }
}
