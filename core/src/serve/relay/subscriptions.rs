//! Served clients' resource subscriptions: a client subscribes to a resource under its served
//! URI; the pool subscribes to the server's own URI once, however many clients want it (and
//! ends that when the last one leaves), and each `resource:updated` of the pool goes to every
//! subscriber under the URI it subscribed with. A client before 2026-07-28 subscribes with
//! `resources/subscribe` and hears on its session; a 2026-07-28 client names the URIs in its
//! `subscriptions/listen` filter and hears on that stream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};

use crate::error::Result;
use crate::events::Event;
use crate::pool::Pool;

/// Where a subscriber hears of updates.
#[derive(Clone)]
pub(crate) enum Subscriber {
    Session(Peer<RoleServer>),
    Stream(SubscriptionSink),
}

impl Subscriber {
    async fn tell(&self, uri: &str) -> bool {
        match self {
            Subscriber::Session(peer) => peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .is_ok(),
            Subscriber::Stream(sink) => sink.notify_resource_updated(uri.to_string()).await.is_ok(),
        }
    }
}

/// One client's subscription to one resource.
struct Subscription {
    /// The client (a session, or a listen stream), as numbered by its gateway.
    client: u64,
    /// The URI the client subscribed with.
    served: String,
    to: Subscriber,
}

/// Every served client's subscriptions of one pool.
pub(crate) struct Subscriptions {
    pool: Pool,
    /// By the server's id and the server's own URI.
    by_resource: Mutex<HashMap<(String, String), Vec<Subscription>>>,
    relaying: std::sync::Once,
}

impl Subscriptions {
    pub(crate) fn new(pool: Pool) -> Arc<Subscriptions> {
        Arc::new(Subscriptions {
            pool,
            by_resource: Mutex::default(),
            relaying: std::sync::Once::new(),
        })
    }

    /// Subscribes `client` to the server's resource `uri` (served as `served`); the pool
    /// subscribes on the first client's behalf.
    pub(crate) async fn add(
        self: &Arc<Self>,
        client: u64,
        (server, uri): (String, String),
        served: String,
        to: Subscriber,
    ) -> Result<()> {
        self.start_relay();
        let key = (server, uri);
        let first = {
            let mut by_resource = self.by_resource.lock().unwrap();
            let list = by_resource.entry(key.clone()).or_default();
            let first = list.is_empty();
            list.retain(|s| s.client != client || s.served != served);
            list.push(Subscription { client, served, to });
            first
        };
        if first && let Err(e) = self.pool.subscribe_resource(&key.0, &key.1).await {
            self.by_resource.lock().unwrap().remove(&key);
            return Err(e);
        }
        Ok(())
    }

    /// Ends `client`'s subscription to the server's resource `uri`; the pool's ends with the
    /// last client's.
    pub(crate) async fn remove(&self, client: u64, (server, uri): (String, String)) -> Result<()> {
        let key = (server, uri);
        let last = {
            let mut by_resource = self.by_resource.lock().unwrap();
            let Some(list) = by_resource.get_mut(&key) else {
                return Ok(());
            };
            list.retain(|s| s.client != client);
            let last = list.is_empty();
            if last {
                by_resource.remove(&key);
            }
            last
        };
        if last {
            self.pool.unsubscribe_resource(&key.0, &key.1).await?;
        }
        Ok(())
    }

    /// Ends every subscription of `client` (its stream closed, or its session ended).
    pub(crate) async fn remove_client(&self, client: u64) {
        let keys: Vec<(String, String)> = self
            .by_resource
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, list)| list.iter().any(|s| s.client == client))
            .map(|(key, _)| key.clone())
            .collect();
        for key in keys {
            let _ = self.remove(client, key).await;
        }
    }

    /// Relays the pool's `resource:updated` events to the subscribers, from the first
    /// subscription until the pool closes.
    fn start_relay(self: &Arc<Self>) {
        self.relaying.call_once(|| {
            let subscriptions = Arc::downgrade(self);
            let mut events = self.pool.events();
            tokio::spawn(async move {
                while let Some(event) = events.recv().await {
                    let Event::ResourceUpdated { server_id, uri } = event else {
                        continue;
                    };
                    let Some(subscriptions) = subscriptions.upgrade() else {
                        return;
                    };
                    subscriptions.tell(server_id, uri).await;
                }
            });
        });
    }

    async fn tell(&self, server_id: String, uri: String) {
        let key = (server_id, uri);
        let told: Vec<(u64, String, Subscriber)> = match self.by_resource.lock().unwrap().get(&key)
        {
            Some(list) => list
                .iter()
                .map(|s| (s.client, s.served.clone(), s.to.clone()))
                .collect(),
            None => return,
        };
        for (client, served, to) in told {
            // A client that cannot be told any more is gone: its subscriptions go too.
            if !to.tell(&served).await {
                self.remove_client(client).await;
            }
        }
    }
}
