//! What a connected client hears of changes: the pool's `tools:changed`, `prompts:changed`,
//! `resources:changed` and `servers:changed` events become the MCP `list_changed`
//! notifications, gathered over a short window so that a server restarting with ten changes
//! costs the client one listing.

use std::time::Duration;

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

/// Tells `peer` of the pool's changes until the client goes away or the pool closes.
pub(crate) fn watch(pool: Pool, peer: Peer<RoleServer>) {
    let mut events = pool.events();
    tokio::spawn(async move {
        loop {
            let event = tokio::select! {
                e = events.recv() => match e {
                    Some(e) => e,
                    None => return,
                },
                _ = tokio::time::sleep(CLIENT_CHECK) => {
                    if peer.is_transport_closed() {
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
            if tell(&peer, &changed).await.is_err() {
                return;
            }
        }
    });
}

async fn tell(
    peer: &Peer<RoleServer>,
    changed: &Changed,
) -> Result<(), rmcp::service::ServiceError> {
    if changed.tools {
        peer.notify_tool_list_changed().await?;
    }
    if changed.prompts {
        peer.notify_prompt_list_changed().await?;
    }
    if changed.resources {
        peer.notify_resource_list_changed().await?;
    }
    Ok(())
}
