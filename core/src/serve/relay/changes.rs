//! What a connected client hears of changes: the pool's `tools:changed`, `prompts:changed`,
//! `resources:changed` and `servers:changed` events become the MCP `list_changed`
//! notifications, gathered over a short window so that a server restarting with ten changes
//! costs the client one listing.

use std::time::Duration;

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{SubscriptionContext, SubscriptionSink};
use rmcp::{Peer, RoleServer};

use crate::events::Event;
use crate::pool::Pool;

/// Changes arriving this close together are told once.
const DEBOUNCE: Duration = Duration::from_millis(100);

/// How often a quiet watcher checks whether its client is gone.
const CLIENT_CHECK: Duration = Duration::from_secs(10);

/// Which lists changed in one window.
#[derive(Default)]
struct Changed {
    tools: bool,
    prompts: bool,
    resources: bool,
}

impl Changed {
    fn note(&mut self, event: &Event) -> bool {
        match event {
            Event::ToolsChanged { .. } => self.tools = true,
            Event::PromptsChanged { .. } => self.prompts = true,
            Event::ResourcesChanged { .. } => self.resources = true,
            // A server added, removed, enabled or renamed changes every list.
            Event::ServersChanged => {
                self.tools = true;
                self.prompts = true;
                self.resources = true;
            }
            _ => return false,
        }
        true
    }
}

/// Where a client hears of changes: its session (before 2026-07-28), or its
/// `subscriptions/listen` stream (2026-07-28, which has no sessions).
enum Listener {
    Session(Peer<RoleServer>),
    Stream(SubscriptionSink),
}

impl Listener {
    fn gone(&self) -> bool {
        match self {
            Listener::Session(peer) => peer.is_transport_closed(),
            // The stream's end is awaited by `listen` itself.
            Listener::Stream(_) => false,
        }
    }

    async fn tell(&self, changed: &Changed) -> Result<(), ()> {
        let kinds = [
            (
                changed.tools,
                ServerNotification::ToolListChangedNotification(Default::default()),
            ),
            (
                changed.prompts,
                ServerNotification::PromptListChangedNotification(Default::default()),
            ),
            (
                changed.resources,
                ServerNotification::ResourceListChangedNotification(Default::default()),
            ),
        ];
        for (changed, notification) in kinds {
            if !changed {
                continue;
            }
            let sent = match self {
                Listener::Session(peer) => peer.send_notification(notification).await.is_ok(),
                Listener::Stream(sink) => sink.send(notification).await.is_ok(),
            };
            if !sent {
                return Err(());
            }
        }
        Ok(())
    }
}

/// Tells `peer` of the pool's changes until the client goes away or the pool closes.
pub(crate) fn watch(pool: Pool, peer: Peer<RoleServer>) {
    tokio::spawn(relay(pool, Listener::Session(peer)));
}

/// The list changes a 2026-07-28 client's `subscriptions/listen` stream accepts.
pub(crate) fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::new();
    accepted.tools_list_changed = requested.tools_list_changed;
    accepted.prompts_list_changed = requested.prompts_list_changed;
    accepted.resources_list_changed = requested.resources_list_changed;
    accepted
}

/// Tells a `subscriptions/listen` stream of the pool's changes until the client cancels it.
pub(crate) async fn stream(pool: Pool, context: SubscriptionContext) {
    let relaying = relay(pool, Listener::Stream(context.sink().clone()));
    tokio::select! {
        _ = context.cancelled() => {}
        _ = relaying => {}
    }
}

async fn relay(pool: Pool, listener: Listener) {
    let mut events = pool.list_changes();
    loop {
        let event = tokio::select! {
            e = events.recv() => match e {
                Some(e) => e,
                None => return,
            },
            _ = tokio::time::sleep(CLIENT_CHECK) => {
                if listener.gone() {
                    return;
                }
                continue;
            }
        };
        let mut changed = Changed::default();
        if !changed.note(&event) {
            continue;
        }
        let window = tokio::time::sleep(DEBOUNCE);
        tokio::pin!(window);
        loop {
            tokio::select! {
                _ = &mut window => break,
                e = events.recv() => match e {
                    Some(e) => { changed.note(&e); }
                    None => return,
                },
            }
        }
        if listener.tell(&changed).await.is_err() {
            return;
        }
    }
}
