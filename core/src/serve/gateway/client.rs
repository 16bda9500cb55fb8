//! What a request says of the client that sent it: its name, the principal its token names,
//! its capabilities (in `_meta` for a 2026-07-28 client, at `initialize` before), and whether
//! it renders views.

use rmcp::RoleServer;
use rmcp::service::RequestContext;

use crate::pool::APPS_EXTENSION_ID;

/// The `_meta` key of a 2026-07-28 request's client.
pub(super) const CLIENT_INFO_META: &str = "io.modelcontextprotocol/clientInfo";

/// The `_meta` key of what a 2026-07-28 request's client can answer (rmcp's is private).
pub(super) const CLIENT_CAPABILITIES_META: &str = "io.modelcontextprotocol/clientCapabilities";

/// The name the calling client gives itself: a 2026-07-28 client in each request's `_meta`
/// (it has no session), an older one once, at `initialize`.
pub(super) fn client_name(context: &RequestContext<RoleServer>) -> Option<String> {
    context
        .meta
        .get(CLIENT_INFO_META)
        .and_then(|info| info.get("name"))
        .and_then(|name| name.as_str())
        .map(str::to_string)
        .or_else(|| context.peer.peer_info().map(|i| i.client_info.name.clone()))
}

/// Behind OAuth, whom the request's access token was issued to.
pub(super) fn principal(
    context: &RequestContext<RoleServer>,
) -> Option<&crate::serve::resource_server::Principal> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| {
            parts
                .extensions
                .get::<crate::serve::resource_server::Principal>()
        })
}

/// Behind OAuth, the user the request's access token names.
pub(super) fn owner(context: &RequestContext<RoleServer>) -> Option<String> {
    principal(context).map(crate::serve::resource_server::Principal::owner)
}

/// What the calling client said it can answer: in the request's `_meta` (2026-07-28), else
/// at its `initialize`. An upstream is told these, not the pool's, so it asks only what this
/// client can give.
pub(super) fn client_capabilities(
    context: &RequestContext<RoleServer>,
) -> Option<serde_json::Value> {
    match context.meta.client_capabilities() {
        Some(declared) => serde_json::to_value(declared).ok(),
        None => serde_json::to_value(&context.peer.peer_info()?.capabilities).ok(),
    }
}

/// Whether the calling client takes tasks, by what it declared where `client_capabilities`
/// reads it, without a copy of its session's capabilities (rmcp's
/// `RequestContext::client_capabilities` makes one): asked on every call.
pub(in crate::serve) fn declares_tasks(context: &RequestContext<RoleServer>) -> bool {
    match context.meta.client_capabilities() {
        Some(declared) => declared.supports_tasks(),
        None => (context.peer.peer_info()).is_some_and(|info| info.capabilities.supports_tasks()),
    }
}

/// Whether the calling client renders MCP Apps views (declares `io.modelcontextprotocol/ui`),
/// where `client_capabilities` reads what it declared; looked up in place, as it is asked on
/// every call.
pub(super) fn renders_views(context: &RequestContext<RoleServer>) -> bool {
    match context.meta.get(CLIENT_CAPABILITIES_META) {
        Some(declared) => declared
            .get("extensions")
            .and_then(|e| e.get(APPS_EXTENSION_ID))
            .is_some(),
        None => context.peer.peer_info().is_some_and(|info| {
            let extensions = info.capabilities.extensions.as_ref();
            extensions.is_some_and(|e| e.contains_key(APPS_EXTENSION_ID))
        }),
    }
}

/// Whether the request is of protocol 2026-07-28 or later (stateless, asked in rounds).
pub(in crate::serve) fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v >= rmcp::model::ProtocolVersion::V_2026_07_28)
}
