//! What the host application answers when servers ask the client: roots, sampling and
//! elicitation. One [`Host`] per pool; handlers can be set or replaced at any time.
#![allow(
    deprecated,
    reason = "roots and sampling are deprecated by SEP-2577 but servers still use them"
)]

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, RwLock};

use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, Root,
};

/// A boxed future, as host handlers return.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// A request from a server, with the server it came from.
#[derive(Debug, Clone)]
pub struct HostRequest<P> {
    pub server_id: String,
    pub server_name: String,
    pub params: P,
}

/// Answers `sampling/createMessage`. An `Err` is the user's refusal, with a reason the
/// server will see.
pub type SamplingHandler = Arc<
    dyn Fn(
            HostRequest<CreateMessageRequestParams>,
        ) -> BoxFuture<Result<CreateMessageResult, String>>
        + Send
        + Sync,
>;

/// Answers `elicitation/create` (form and URL modes).
pub type ElicitationHandler = Arc<
    dyn Fn(HostRequest<ElicitRequestParams>) -> BoxFuture<Result<ElicitResult, String>>
        + Send
        + Sync,
>;

/// The host side of a pool. Roots are per pool, optionally overridden per server.
#[derive(Default)]
pub struct Host {
    sampling: RwLock<Option<SamplingHandler>>,
    elicitation: RwLock<Option<ElicitationHandler>>,
    roots: RwLock<Vec<Root>>,
    server_roots: RwLock<HashMap<String, Vec<Root>>>,
}

impl Host {
    pub fn sampling(&self) -> Option<SamplingHandler> {
        self.sampling.read().unwrap().clone()
    }

    pub fn elicitation(&self) -> Option<ElicitationHandler> {
        self.elicitation.read().unwrap().clone()
    }

    pub(crate) fn set_sampling(&self, handler: Option<SamplingHandler>) {
        *self.sampling.write().unwrap() = handler;
    }

    pub(crate) fn set_elicitation(&self, handler: Option<ElicitationHandler>) {
        *self.elicitation.write().unwrap() = handler;
    }

    /// The roots a server sees: its own if set, else the pool's.
    pub fn roots_for(&self, server_id: &str) -> Vec<Root> {
        if let Some(r) = self.server_roots.read().unwrap().get(server_id) {
            return r.clone();
        }
        self.roots.read().unwrap().clone()
    }

    pub(crate) fn set_roots(&self, roots: Vec<Root>) {
        *self.roots.write().unwrap() = roots;
    }

    pub(crate) fn set_server_roots(&self, server_id: &str, roots: Option<Vec<Root>>) {
        let mut map = self.server_roots.write().unwrap();
        match roots {
            Some(r) => map.insert(server_id.to_string(), r),
            None => map.remove(server_id),
        };
    }

    /// What the client declares in the handshake: roots always (the list may be empty),
    /// sampling and elicitation only when a handler is there to answer them.
    pub(crate) fn capabilities(&self) -> rmcp::model::ClientCapabilities {
        let mut caps = serde_json::json!({"roots": {"listChanged": true}});
        if self.sampling().is_some() {
            caps["sampling"] = serde_json::json!({});
        }
        if self.elicitation().is_some() {
            caps["elicitation"] = serde_json::json!({"form": {}, "url": {}});
        }
        serde_json::from_value(caps).unwrap_or_default()
    }
}
