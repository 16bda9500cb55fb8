//! Servers that keep state for their client (`sessionScope: perClient` in the record: a
//! browser, a REPL, a signed-in session), in a pool that serves many clients. A client is a
//! view of the pool ([`Pool::for_client`]); through it, such a server's requests go to a
//! connection of that client's own (for a stdio server, its own process), never another
//! client's. Every other server stays shared.
//!
//! Each server has at most `maxClients` of them at once: past that, the one least recently
//! used with no request running is closed to make room (a client that comes back gets a new
//! one), and when every one is busy the request is refused with what to change. A client's
//! connections close when its view is dropped (a served session ends), when the pool's idle
//! stop finds them unused, or when the server's record changes; a stdio server's whole
//! process group is ended with it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::config::record::{DEFAULT_MAX_CLIENTS, SessionScope};
use crate::error::{Error, Result};
use crate::pool::server::slot::Slot;
use crate::pool::{Inner, Pool};

/// One client of the pool's `perClient` servers: what a view made by [`Pool::for_client`]
/// carries.
pub(crate) struct ClientScope {
    key: String,
    inner: Weak<Inner>,
    /// Whether the client's connections close with the view (a session's client), or stay
    /// until idle (a client that comes back without a session).
    end_on_drop: bool,
}

impl Drop for ClientScope {
    fn drop(&mut self) {
        if !self.end_on_drop {
            return;
        }
        let (Some(inner), Ok(runtime)) =
            (self.inner.upgrade(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let key = std::mem::take(&mut self.key);
        runtime.spawn(async move { inner.clients.end_client(&inner, &key).await });
    }
}

/// A client's own slot of a server.
struct Own {
    slot: Arc<Slot>,
    /// The server's `config_key` it was made with: a changed record makes a new one.
    config_key: String,
    used: Instant,
}

/// The slots clients have of their own, by server id and client.
#[derive(Default)]
pub(crate) struct ClientSlots {
    own: Mutex<HashMap<(String, String), Own>>,
}

impl ClientSlots {
    /// `client`'s slot of the server of `shared`, made (and room made for it) if needed.
    fn slot(
        &self,
        inner: &Arc<Inner>,
        shared: &Arc<Slot>,
        client: &str,
        max: usize,
    ) -> Result<Arc<Slot>> {
        let key = (shared.id.clone(), client.to_string());
        let config_key = shared.config_key();
        let mut closing = Vec::new();
        let slot = {
            let mut own = self.own.lock().unwrap();
            match own.get_mut(&key) {
                Some(o) if o.config_key == config_key => {
                    o.used = Instant::now();
                    return Ok(o.slot.clone());
                }
                Some(_) => closing.extend(own.remove(&key).map(|o| o.slot)),
                None => {}
            }
            if own.keys().filter(|(s, _)| *s == shared.id).count() >= max {
                let Some(idlest) = idlest(&own, &shared.id) else {
                    return Err(Error::connection(
                        shared.name(),
                        format!(
                            "{max} clients each have a connection of their own to it, all in \
                             use (sessionScope perClient): raise its maxClients, or end a session"
                        ),
                    ));
                };
                closing.extend(own.remove(&idlest).map(|o| o.slot));
            }
            let slot = Slot::for_client(shared.record(), inner, client);
            own.insert(
                key,
                Own {
                    slot: slot.clone(),
                    config_key,
                    used: Instant::now(),
                },
            );
            slot
        };
        close_later(inner, closing);
        Ok(slot)
    }

    /// Closes every connection of `client`.
    pub async fn end_client(&self, inner: &Inner, client: &str) {
        let ended = self.take(|(_, c), _| c == client);
        close(inner, ended).await;
    }

    /// Closes every client's connection to server `id` (its record changed, or it is gone).
    pub async fn end_server(&self, inner: &Inner, id: &str) {
        let ended = self.take(|(s, _), _| s == id);
        close(inner, ended).await;
    }

    /// Closes every client's connection (the pool closes).
    pub async fn end_all(&self, inner: &Inner) {
        let ended = self.take(|_, _| true);
        close(inner, ended).await;
    }

    /// Stops the connections no request took for `idle`, and forgets the clients whose
    /// connection is gone and that nobody uses.
    pub async fn stop_idle(&self, inner: &Inner, idle: Duration) {
        let slots: Vec<Arc<Slot>> = {
            let own = self.own.lock().unwrap();
            own.values().map(|o| o.slot.clone()).collect()
        };
        for slot in &slots {
            slot.stop_if_idle(inner, idle).await;
        }
        drop(slots);
        self.take(|_, o| {
            Arc::strong_count(&o.slot) == 1
                && o.slot.live_connection().is_none()
                && o.used.elapsed() >= idle
        });
    }

    /// Removes the entries `which` picks; their slots.
    fn take(&self, which: impl Fn(&(String, String), &Own) -> bool) -> Vec<Arc<Slot>> {
        let mut own = self.own.lock().unwrap();
        let keys: Vec<_> = own
            .iter()
            .filter(|(k, o)| which(k, o))
            .map(|(k, _)| k.clone())
            .collect();
        keys.iter()
            .filter_map(|k| own.remove(k))
            .map(|o| o.slot)
            .collect()
    }
}

/// The entry of server `id` least recently used with nothing running on it.
fn idlest(own: &HashMap<(String, String), Own>, id: &str) -> Option<(String, String)> {
    own.iter()
        .filter(|((s, _), o)| s == id && Arc::strong_count(&o.slot) == 1 && !o.slot.in_use())
        .min_by_key(|(_, o)| o.used)
        .map(|(k, _)| k.clone())
}

async fn close(inner: &Inner, slots: Vec<Arc<Slot>>) {
    futures::future::join_all(slots.iter().map(|s| {
        s.removed.store(true, std::sync::atomic::Ordering::SeqCst);
        s.disconnect(inner)
    }))
    .await;
}

/// Closes `slots` in the background (from under a lock, or from a caller that must not wait).
fn close_later(inner: &Arc<Inner>, slots: Vec<Arc<Slot>>) {
    if slots.is_empty() {
        return;
    }
    let inner = inner.clone();
    tokio::spawn(async move { close(&inner, slots).await });
}

impl Pool {
    /// This pool as one client sees it, for the servers whose `sessionScope` is `perClient`:
    /// their requests through the returned view go to a connection of `client`'s own (for a
    /// stdio server, a process of its own), made on first use and never used by another
    /// client; other servers are shared as ever. The connections close when the last clone
    /// of the view is dropped (e.g. when a served session ends), or sooner when idle.
    pub fn for_client(&self, client: impl Into<String>) -> Pool {
        self.scoped(client.into(), true)
    }

    /// Like [`Pool::for_client`], but the connections outlive the view: they close when idle
    /// (`PoolOptions::idle_stop_ms`), with [`Pool::end_client`], or to make room for another
    /// client. For a client that comes back without a session (e.g. one known by its access
    /// token).
    pub fn for_client_kept(&self, client: impl Into<String>) -> Pool {
        self.scoped(client.into(), false)
    }

    fn scoped(&self, key: String, end_on_drop: bool) -> Pool {
        Pool {
            inner: self.inner.clone(),
            client: Some(Arc::new(ClientScope {
                key,
                inner: Arc::downgrade(&self.inner),
                end_on_drop,
            })),
        }
    }

    /// Closes the connections `client` has of its own now.
    pub async fn end_client(&self, client: &str) {
        self.inner.clients.end_client(&self.inner, client).await;
    }

    /// The slot a request of this view goes to on the server of `shared`: the client's own
    /// for a `perClient` server, else `shared` itself.
    pub(in crate::pool) fn slot_for(&self, shared: &Arc<Slot>) -> Result<Arc<Slot>> {
        let Some(client) = &self.client else {
            return Ok(shared.clone());
        };
        let (scope, max) = {
            let record = shared.record.read().unwrap();
            (record.session_scope, record.max_clients)
        };
        if scope != SessionScope::PerClient {
            return Ok(shared.clone());
        }
        let max = max.unwrap_or(DEFAULT_MAX_CLIENTS).max(1) as usize;
        self.inner
            .clients
            .slot(&self.inner, shared, &client.key, max)
    }
}
