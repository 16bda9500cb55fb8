//! The pool's host-side settings: roots and the sampling and elicitation handlers.
#![allow(
    deprecated,
    reason = "roots and sampling are deprecated by SEP-2577 but servers still use them"
)]

use rmcp::model::Root;

use crate::error::Result;
use crate::events::ConnectionState;
use crate::host::{ElicitationHandler, SamplingHandler, SamplingSupport};
use crate::pool::Pool;

impl Pool {
    /// Answers servers' `sampling/createMessage`; `None` refuses them. Servers learn that
    /// sampling is available when they connect, so set it before connecting.
    pub fn set_sampling_handler(&self, handler: Option<SamplingHandler>) {
        self.set_sampling_handler_with(handler, SamplingSupport::default());
    }

    /// [`Pool::set_sampling_handler`] for a handler that also supports what `support` says
    /// (tools: the request's `tools` and `toolChoice`, answered with `tool_use` content).
    pub fn set_sampling_handler_with(
        &self,
        handler: Option<SamplingHandler>,
        support: SamplingSupport,
    ) {
        self.inner.host.set_sampling(handler, support);
    }

    /// Answers servers' `elicitation/create`; `None` declines them. Set it before connecting.
    pub fn set_elicitation_handler(&self, handler: Option<ElicitationHandler>) {
        self.inner.host.set_elicitation(handler);
    }

    /// Answers servers' `roots/list` with a host callback (`None`: the lists set with
    /// `set_roots` / `set_server_roots`). Call `notify_roots_changed` when its answer changes.
    pub fn set_roots_handler(&self, handler: Option<crate::host::RootsHandler>) {
        self.inner.host.set_roots_handler(handler);
    }

    #[cfg(feature = "serve")]
    /// Answers servers' requests through `forwarder` instead of the handlers (`serve`'s,
    /// which asks the client whose call each request belongs to). Set it before connecting.
    pub(crate) fn set_forwarder(
        &self,
        forwarder: Option<std::sync::Arc<dyn crate::host::forward::Forwarder>>,
    ) {
        self.inner.host.set_forwarder(forwarder);
    }

    /// Tells every connected server that the roots changed (they ask again).
    pub async fn notify_roots_changed(&self) {
        for slot in self.inner.slots() {
            self.notify_slot_roots_changed(&slot).await;
        }
    }

    /// The roots the server with id `server_id` sees when no roots handler answers: its own,
    /// else the pool's.
    pub fn roots_of(&self, server_id: &str) -> Vec<Root> {
        self.inner.host.roots_for(server_id)
    }

    /// The roots every server sees unless it has its own.
    pub fn roots(&self) -> Vec<Root> {
        self.inner.host.roots_for("")
    }

    /// Replaces the pool's roots and tells connected servers that the list changed.
    pub async fn set_roots(&self, roots: Vec<Root>) {
        self.inner.host.set_roots(roots);
        self.notify_roots_changed().await;
    }

    /// Gives one server its own roots (`None`: back to the pool's) and tells it.
    pub async fn set_server_roots(&self, server: &str, roots: Option<Vec<Root>>) -> Result<()> {
        let slot = self.inner.slot(server)?;
        self.inner.host.set_server_roots(&slot.id, roots);
        self.notify_slot_roots_changed(&slot).await;
        Ok(())
    }

    async fn notify_slot_roots_changed(&self, slot: &crate::pool::server::slot::Slot) {
        if slot.status().state != ConnectionState::Connected {
            return;
        }
        if let Some(conn) = slot.live_connection() {
            // A server that cannot take the notification learns the roots on its next list.
            let _ = conn.peer.notify_roots_list_changed().await;
        }
    }
}
