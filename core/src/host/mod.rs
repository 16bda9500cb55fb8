//! What the host application answers when servers ask the client: roots, sampling and
//! elicitation. One [`Host`] per pool; handlers can be set or replaced at any time.
#![allow(
    deprecated,
    reason = "roots and sampling are deprecated by SEP-2577 but servers still use them"
)]

pub mod answers;
pub(crate) mod apps;
pub(crate) mod forward;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, Root,
};

pub use crate::boxed_future::BoxFuture;

/// A request from a server, with the server it came from.
#[derive(Debug, Clone)]
pub struct HostRequest<P> {
    pub server_id: String,
    pub server_name: String,
    pub params: P,
}

/// What every binding hands its host: `{"serverId", "serverName", "params"}`, with
/// `params` an object even for a request that has none (`roots/list`).
impl<P: serde::Serialize> serde::Serialize for HostRequest<P> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeStruct};
        let params = match serde_json::to_value(&self.params).map_err(S::Error::custom)? {
            serde_json::Value::Null => serde_json::Value::Object(Default::default()),
            other => other,
        };
        let mut out = s.serialize_struct("HostRequest", 3)?;
        out.serialize_field("serverId", &self.server_id)?;
        out.serialize_field("serverName", &self.server_name)?;
        out.serialize_field("params", &params)?;
        out.end()
    }
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

/// What a host's [`SamplingHandler`] can answer beyond plain messages, declared to servers in
/// the client's capabilities. As JSON (the C API): `{"tools": true}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SamplingSupport {
    /// The handler reads the request's `tools` and `toolChoice`, and may answer `tool_use`
    /// content with stop reason `toolUse` (the `sampling.tools` capability). Without it,
    /// servers must not send tools.
    #[serde(default)]
    pub tools: bool,
}

/// Answers `elicitation/create` (form and URL modes).
pub type ElicitationHandler = Arc<
    dyn Fn(HostRequest<ElicitRequestParams>) -> BoxFuture<Result<ElicitResult, String>>
        + Send
        + Sync,
>;

/// The values a form elicitation's `requestedSchema` gives as defaults (SEP-1034), merged
/// under what the user entered: a host that shows a form pre-fills these, and one that
/// accepts without asking answers them. Only top-level properties with a `default` of the
/// declared type are taken.
pub fn fill_schema_defaults(
    requested_schema: &serde_json::Value,
    entered: serde_json::Map<String, serde_json::Value>,
) -> serde_json::Map<String, serde_json::Value> {
    use serde_json::Value;
    let mut out = serde_json::Map::new();
    if let Some(props) = requested_schema
        .get("properties")
        .and_then(Value::as_object)
    {
        for (name, prop) in props {
            let Some(default) = prop.get("default") else {
                continue;
            };
            let fits = match prop.get("type").and_then(Value::as_str) {
                Some("string") => default.is_string(),
                Some("integer") => default.is_i64() || default.is_u64(),
                Some("number") => default.is_number(),
                Some("boolean") => default.is_boolean(),
                Some("array") => default.is_array(),
                _ => true,
            };
            let in_enum = prop
                .get("enum")
                .and_then(Value::as_array)
                .is_none_or(|e| e.contains(default));
            if fits && in_enum {
                out.insert(name.clone(), default.clone());
            }
        }
    }
    out.extend(entered);
    out
}

/// Answers `roots/list` itself (e.g. the folders open in an editor right now); without one,
/// the lists set with `set_roots` / `set_server_roots` answer. An `Err` is sent to the server
/// as an error.
pub type RootsHandler =
    Arc<dyn Fn(HostRequest<()>) -> BoxFuture<Result<Vec<Root>, String>> + Send + Sync>;

/// The host side of a pool. Roots are per pool, optionally overridden per server.
pub struct Host {
    oauth: RwLock<Option<crate::auth::OAuthHandler>>,
    id_tokens: RwLock<Option<crate::auth::IdTokenFn>>,
    tokens: RwLock<Arc<dyn crate::auth::TokenStore>>,
    sampling: RwLock<Option<(SamplingHandler, SamplingSupport)>>,
    elicitation: RwLock<Option<ElicitationHandler>>,
    roots_handler: RwLock<Option<RootsHandler>>,
    roots: RwLock<Vec<Root>>,
    server_roots: RwLock<HashMap<String, Vec<Root>>>,
    /// The view types the host renders, when it opted in to MCP Apps.
    apps: RwLock<Option<apps::AppsOptions>>,
    /// Asks other clients instead of the handlers (a served pool's upstreams' requests).
    forwarder: RwLock<Option<Arc<dyn forward::Forwarder>>>,
}

impl Default for Host {
    fn default() -> Self {
        Host {
            oauth: RwLock::default(),
            id_tokens: RwLock::default(),
            tokens: RwLock::new(Arc::new(crate::auth::MemoryTokenStore::default())),
            sampling: RwLock::default(),
            elicitation: RwLock::default(),
            roots_handler: RwLock::default(),
            roots: RwLock::default(),
            server_roots: RwLock::default(),
            apps: RwLock::default(),
            forwarder: RwLock::default(),
        }
    }
}

impl Host {
    /// How users authorize; `None` means the browser and a loopback listener.
    pub fn oauth_handler(&self) -> Option<crate::auth::OAuthHandler> {
        self.oauth.read().unwrap().clone()
    }

    pub(crate) fn set_oauth_handler(&self, handler: Option<crate::auth::OAuthHandler>) {
        *self.oauth.write().unwrap() = handler;
    }

    /// Where ID tokens for the enterprise-managed grant come from, besides the config.
    pub fn id_token_provider(&self) -> Option<crate::auth::IdTokenFn> {
        self.id_tokens.read().unwrap().clone()
    }

    pub(crate) fn set_id_token_provider(&self, provider: Option<crate::auth::IdTokenFn>) {
        *self.id_tokens.write().unwrap() = provider;
    }

    /// Where OAuth tokens live.
    pub fn token_store(&self) -> Arc<dyn crate::auth::TokenStore> {
        self.tokens.read().unwrap().clone()
    }

    pub(crate) fn set_token_store(&self, store: Arc<dyn crate::auth::TokenStore>) {
        *self.tokens.write().unwrap() = store;
    }

    pub fn roots_handler(&self) -> Option<RootsHandler> {
        self.roots_handler.read().unwrap().clone()
    }

    pub(crate) fn set_roots_handler(&self, handler: Option<RootsHandler>) {
        *self.roots_handler.write().unwrap() = handler;
    }

    pub fn sampling(&self) -> Option<SamplingHandler> {
        self.sampling
            .read()
            .unwrap()
            .as_ref()
            .map(|(h, _)| h.clone())
    }

    /// What the sampling handler supports; `None` without one.
    pub fn sampling_support(&self) -> Option<SamplingSupport> {
        self.sampling.read().unwrap().as_ref().map(|(_, s)| *s)
    }

    pub fn elicitation(&self) -> Option<ElicitationHandler> {
        self.elicitation.read().unwrap().clone()
    }

    pub(crate) fn set_sampling(&self, handler: Option<SamplingHandler>, support: SamplingSupport) {
        *self.sampling.write().unwrap() = handler.map(|h| (h, support));
    }

    pub(crate) fn set_elicitation(&self, handler: Option<ElicitationHandler>) {
        *self.elicitation.write().unwrap() = handler;
    }

    /// Who answers servers' requests in place of the handlers, if anyone.
    pub(crate) fn forwarder(&self) -> Option<Arc<dyn forward::Forwarder>> {
        self.forwarder.read().unwrap().clone()
    }

    pub(crate) fn set_forwarder(&self, forwarder: Option<Arc<dyn forward::Forwarder>>) {
        *self.forwarder.write().unwrap() = forwarder;
    }

    /// Drops every callback of the host (handlers, OAuth, token store): a closed pool keeps
    /// none, so what a binding attached to them (a C finalizer, a Python or JS function) is
    /// let go once no call of them is left.
    pub(crate) fn release(&self) {
        self.set_sampling(None, SamplingSupport::default());
        self.set_elicitation(None);
        self.set_roots_handler(None);
        self.set_forwarder(None);
        self.set_oauth_handler(None);
        self.set_id_token_provider(None);
        self.set_token_store(Arc::new(crate::auth::MemoryTokenStore::default()));
    }

    /// The roots a server sees: its own if set, else the pool's.
    pub fn roots_for(&self, server_id: &str) -> Vec<Root> {
        if let Some(r) = self.server_roots.read().unwrap().get(server_id) {
            return r.clone();
        }
        self.roots.read().unwrap().clone()
    }

    pub(crate) fn set_apps(&self, apps: Option<apps::AppsOptions>) {
        *self.apps.write().unwrap() = apps;
    }

    /// What this host declares that changes what servers offer in their lists (the MCP Apps
    /// views it renders, which servers answer with other tools), as text; `None` for a host
    /// that declares nothing of the kind.
    pub(crate) fn offers_key(&self) -> Option<String> {
        let apps = self.apps.read().unwrap();
        apps.as_ref()
            .map(|a| format!("apps:{}", a.mime_types.join(",")))
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
    /// sampling and elicitation only when a handler (or a forwarder) is there to answer them,
    /// sampling with tools only when its handler takes them, the tasks extension (the pool drives a
    /// server's tasks itself, see `pool/call/tasks.rs`), the skills extension (`pool/ext/skills.rs`)
    /// and MCP Apps when the host renders them (`pool/ext/apps.rs`).
    pub(crate) fn capabilities(&self) -> rmcp::model::ClientCapabilities {
        let mut caps = serde_json::json!({
            "roots": {"listChanged": true},
            "extensions": {
                rmcp::model::TASKS_EXTENSION_ID: {},
                rmcp::model::SKILLS_EXTENSION_ID: {},
            },
        });
        let forwards = self.forwarder().is_some();
        match self.sampling_support() {
            Some(SamplingSupport { tools: true }) => {
                caps["sampling"] = serde_json::json!({"tools": {}});
            }
            Some(_) => caps["sampling"] = serde_json::json!({}),
            None if forwards => caps["sampling"] = serde_json::json!({}),
            None => {}
        }
        if self.elicitation().is_some() || forwards {
            caps["elicitation"] = serde_json::json!({"form": {}, "url": {}});
        }
        if let Some(apps) = self.apps.read().unwrap().as_ref() {
            caps["extensions"][apps::APPS_EXTENSION_ID] = apps::capability(apps);
        }
        serde_json::from_value(caps).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_host_request_is_camel_case_json_with_params_an_object() {
        let r = HostRequest {
            server_id: "s1".into(),
            server_name: "files".into(),
            params: (),
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"serverId": "s1", "serverName": "files", "params": {}})
        );
        let r = HostRequest {
            server_id: r.server_id,
            server_name: r.server_name,
            params: json!({"maxTokens": 5}),
        };
        assert_eq!(serde_json::to_value(&r).unwrap()["params"]["maxTokens"], 5);
    }

    #[test]
    fn sampling_with_tools_is_declared_only_for_a_handler_that_takes_them() {
        let host = Host::default();
        let sampling = || serde_json::to_value(host.capabilities()).unwrap()["sampling"].clone();
        assert_eq!(sampling(), serde_json::Value::Null);
        let handler: SamplingHandler = Arc::new(|_req| Box::pin(async { Err("no".to_string()) }));
        host.set_sampling(Some(handler.clone()), SamplingSupport::default());
        assert_eq!(sampling(), json!({}));
        host.set_sampling(Some(handler), SamplingSupport { tools: true });
        assert_eq!(sampling(), json!({"tools": {}}));
        host.set_sampling(None, SamplingSupport { tools: true });
        assert_eq!(sampling(), serde_json::Value::Null);
    }

    #[test]
    fn defaults_fill_what_the_user_left_out() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "verified": {"type": "boolean", "default": true},
            "bad": {"type": "integer", "default": "thirty"},
            "off": {"type": "string", "enum": ["a"], "default": "b"},
            "none": {"type": "string"}
        }});
        let mut entered = serde_json::Map::new();
        entered.insert("name".into(), json!("Ada"));
        let filled = fill_schema_defaults(&schema, entered);
        assert_eq!(
            serde_json::Value::Object(filled),
            json!({"name": "Ada", "age": 30, "score": 95.5, "status": "active", "verified": true})
        );
    }
}
