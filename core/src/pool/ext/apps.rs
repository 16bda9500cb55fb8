//! MCP Apps (`io.modelcontextprotocol/ui`) for a host that renders them: a tool names an HTML
//! view (`_meta.ui.resourceUri`, a `ui://` resource) that the host shows in a sandboxed frame,
//! and the view calls its server's tools back through the host.
//!
//! The pool does the host's part that is the same everywhere: it declares the extension when
//! the host opts in ([`AppsOptions`]), keeps each tool to its audience (`_meta.ui.visibility`:
//! a tool for apps alone never reaches a model, a tool for the model alone is never called by
//! a view), reads and checks a view ([`Pool::app_view`]: the HTML, and the Content Security
//! Policy and frame permissions built from what the view declares, never looser) and is the
//! only path of a view's own requests ([`Pool::app_call`], [`Pool::app_read_resource`]: its
//! own server's tools that apps may call, its own server's resources).

use base64::Engine as _;
use rmcp::model::{CallToolResult, ReadResourceResult, ResourceContents};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::pool::{CallOptions, Pool};
use crate::tools::ToolInfo;

pub use crate::host::apps::{APP_HTML_MIME_TYPE, APPS_EXTENSION_ID, AppsOptions};

/// The scheme every view's URI has.
const VIEW_SCHEME: &str = "ui://";
/// The deprecated flat key some servers still set beside `ui.resourceUri`.
const LEGACY_RESOURCE_URI_KEY: &str = "ui/resourceUri";
/// The `_meta` key where `mcpmux serve` names a tool it serves under another name (`app__x`)
/// by its own server's name (`x`), for a host of views: a view calls its tools by those.
pub(crate) const OWN_NAME_META: &str = "io.github.mcpmux/ownName";

impl ToolInfo {
    /// The tool's `_meta`, parsed, if it has one that may name `key` (most tools' have none,
    /// and a listing asks every tool).
    fn meta_naming(&self, key: &str) -> Option<serde_json::Map<String, Value>> {
        let meta = self.meta.as_ref()?;
        if !meta.get().contains(key) {
            return None;
        }
        meta.parse().ok()
    }

    /// The tool's `_meta.ui`, if it has one.
    fn ui(&self) -> Option<serde_json::Map<String, Value>> {
        match self.meta_naming("\"ui\"")?.remove("ui")? {
            Value::Object(ui) => Some(ui),
            _ => None,
        }
    }

    /// Whether `audience` (`model` or `app`) may see and call the tool: its
    /// `_meta.ui.visibility` names it, or the tool declares none (both, by default).
    fn visible_to(&self, audience: &str) -> bool {
        if !self
            .meta
            .as_ref()
            .is_some_and(|m| m.get().contains("visibility"))
        {
            return true;
        }
        match self.ui().and_then(|mut ui| ui.remove("visibility")) {
            Some(Value::Array(list)) => list.iter().any(|a| a.as_str() == Some(audience)),
            _ => true,
        }
    }

    /// Whether a model may see and call the tool (an MCP App may keep a tool to its view).
    pub fn for_model(&self) -> bool {
        self.visible_to("model")
    }

    /// Whether an MCP App's view may call the tool.
    pub fn for_apps(&self) -> bool {
        self.visible_to("app")
    }

    /// The `ui://` view the tool's results are shown in, if it names one.
    pub fn view_uri(&self) -> Option<String> {
        let flat = || match self
            .meta_naming(LEGACY_RESOURCE_URI_KEY)?
            .remove(LEGACY_RESOURCE_URI_KEY)?
        {
            Value::String(uri) => Some(uri),
            _ => None,
        };
        match self.ui().and_then(|mut ui| ui.remove("resourceUri")) {
            Some(Value::String(uri)) => Some(uri),
            _ => flat(),
        }
    }

    /// The name the tool's own server gives it, when a gateway serves it under another.
    pub fn own_name(&self) -> Option<String> {
        match self.meta_naming(OWN_NAME_META)?.remove(OWN_NAME_META)? {
            Value::String(name) => Some(name),
            _ => None,
        }
    }

    #[cfg(feature = "serve")]
    /// The tool's `_meta` as an object to change, written back by [`ToolInfo::set_meta`].
    fn meta_object(&self) -> Option<serde_json::Map<String, Value>> {
        self.meta.as_ref()?.parse().ok()
    }

    #[cfg(feature = "serve")]
    fn set_meta(&mut self, meta: serde_json::Map<String, Value>) {
        self.meta = (!meta.is_empty()).then(|| Value::Object(meta).into());
    }

    #[cfg(feature = "serve")]
    /// Says, for hosts of views, that the tool's own server names it `own`.
    pub(crate) fn set_own_name(&mut self, own: String) {
        let mut meta = self.meta_object().unwrap_or_default();
        meta.insert(OWN_NAME_META.into(), own.into());
        self.set_meta(meta);
    }

    #[cfg(feature = "serve")]
    /// The tool as a client that renders no views sees it: without `_meta.ui` or the flat
    /// key (a view's address it could not use, nor ask for).
    pub(crate) fn drop_view(&mut self) {
        let Some(mut meta) = self.meta_object() else {
            return;
        };
        let had_view = meta.remove("ui").is_some() | meta.remove(LEGACY_RESOURCE_URI_KEY).is_some();
        if had_view || meta.is_empty() {
            self.set_meta(meta);
        }
    }

    #[cfg(feature = "serve")]
    /// Points the tool's view at `uri`, wherever it names one (a gateway serves each server's
    /// views under addresses of its own).
    pub(crate) fn move_view(&mut self, uri: &str) {
        let Some(mut meta) = self.meta_object() else {
            return;
        };
        if let Some(ui) = meta.get_mut("ui").and_then(Value::as_object_mut)
            && ui.contains_key("resourceUri")
        {
            ui.insert("resourceUri".into(), uri.into());
        }
        if meta.contains_key(LEGACY_RESOURCE_URI_KEY) {
            meta.insert(LEGACY_RESOURCE_URI_KEY.into(), uri.into());
        }
        self.set_meta(meta);
    }
}

/// The origins a view may reach, as it declares them (`_meta.ui.csp`); only well-formed
/// origins are kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct AppCsp {
    /// fetch, XHR and WebSocket (`connect-src`).
    pub connect_domains: Vec<String>,
    /// Scripts, styles, images, fonts and media.
    pub resource_domains: Vec<String>,
    /// Nested frames (`frame-src`).
    pub frame_domains: Vec<String>,
    /// The document's base URIs (`base-uri`).
    pub base_uri_domains: Vec<String>,
}

/// The browser features a view asks for (`_meta.ui.permissions`); a host may grant them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct AppPermissions {
    pub camera: bool,
    pub microphone: bool,
    pub geolocation: bool,
    pub clipboard_write: bool,
}

/// A view ready to render: what the host puts in its sandboxed frame, and the tool it shows.
/// Bindings hand it to the host as JSON and take it back for `app_call`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppView {
    /// The tool whose view this is (the pool's id).
    pub tool_id: String,
    pub server_id: String,
    pub server_name: String,
    /// The view's `ui://` URI.
    pub resource_uri: String,
    /// One of the host's `AppsOptions.mime_types`.
    pub mime_type: String,
    /// The view's document.
    pub html: String,
    /// The origins the view declares.
    pub csp: AppCsp,
    /// The `Content-Security-Policy` to load the view under: the declared origins and
    /// nothing else (the extension's restrictive default when it declares none).
    pub content_security_policy: String,
    /// The features the view asks for.
    pub permissions: AppPermissions,
    /// The frame's `allow` attribute for those features (empty when none).
    pub allow: String,
    /// Whether the view wants a visible border (unset: the host decides).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
    /// A dedicated origin the view asks for (its format is the host's to check).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// The tool, as the view's host context describes it.
    pub tool: ToolInfo,
}

impl Pool {
    /// The view of tool `tool_id` (its `_meta.ui.resourceUri`), read from its server and
    /// checked: a `ui://` URI, one of the MIME types the host renders, HTML as text or
    /// base64. Needs `PoolOptions.apps`.
    pub async fn app_view(&self, tool_id: &str) -> Result<AppView> {
        let apps = self.apps_options()?;
        let tool = self.tool_info(tool_id).await?;
        let uri = tool.view_uri().ok_or_else(|| {
            Error::invalid(format!(
                "tool '{tool_id}' has no view (no _meta.ui.resourceUri)"
            ))
        })?;
        let protocol = |message: String| Error::Protocol {
            server: tool.server_name.clone(),
            message,
        };
        if !uri.starts_with(VIEW_SCHEME) {
            return Err(protocol(format!(
                "tool '{}' names the view '{uri}', which is not a ui:// URI",
                tool.name
            )));
        }
        let read = self.read_resource(&tool.server_id, &uri).await?;
        let contents = view_contents(&read, &uri)
            .ok_or_else(|| protocol(format!("reading the view '{uri}' gave no contents for it")))?;
        let (mime_type, html, meta) = view_document(contents).map_err(protocol)?;
        if !apps.mime_types.iter().any(|m| m == &mime_type) {
            return Err(protocol(format!(
                "the view '{uri}' is '{mime_type}', which this host does not render (it \
                 renders {:?}; see PoolOptions.apps.mimeTypes)",
                apps.mime_types
            )));
        }
        let ui = meta.as_ref().and_then(|m| m.get("ui"));
        let csp = declared_csp(ui.and_then(|u| u.get("csp")));
        let permissions = declared_permissions(ui.and_then(|u| u.get("permissions")));
        Ok(AppView {
            tool_id: tool.id.clone(),
            server_id: tool.server_id.clone(),
            server_name: tool.server_name.clone(),
            resource_uri: uri.to_owned(),
            mime_type,
            html,
            content_security_policy: content_security_policy(&csp),
            allow: allow_attribute(&permissions),
            csp,
            permissions,
            prefers_border: ui
                .and_then(|u| u.get("prefersBorder"))
                .and_then(Value::as_bool),
            domain: ui
                .and_then(|u| u.get("domain"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            tool,
        })
    }

    /// A tool call the view `view` makes: `name` is the tool's own name on the view's server
    /// (a view reaches no other server), and the tool must be visible to apps.
    pub async fn app_call(
        &self,
        view: &AppView,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<CallToolResult> {
        let tool = match self.indexed_tool(&view.server_id, name) {
            Some(id) => self.tool_info(&id).await?,
            None => {
                // Not listed yet, or a view reaching its tools through a fleet (`mcpmux
                // serve`), which calls them by their own servers' names.
                let tools = self.list_tools(Some(&view.server_id)).await?;
                let found = tools.iter().find(|t| t.name == name);
                found
                    .or_else(|| by_own_name(&tools, name))
                    .cloned()
                    .ok_or_else(|| {
                        Error::not_found(
                            "tool",
                            format!("{name} (of server '{}')", view.server_name),
                        )
                    })?
            }
        };
        if !tool.for_apps() {
            return Err(Error::invalid(format!(
                "tool '{name}' of server '{}' is not for apps (its _meta.ui.visibility leaves \
                 out \"app\"): a view may not call it",
                view.server_name
            )));
        }
        self.call_tool(&tool.id, arguments, options).await
    }

    /// The pool id of the tool its server `server_id` names `name`, when the pool has listed
    /// it: found without parsing the server's other tools, as a view may call often.
    fn indexed_tool(&self, server_id: &str, name: &str) -> Option<String> {
        let index = self.inner.tool_index.read().unwrap();
        index
            .iter()
            .find(|(_, (server, own))| &**server == server_id && &**own == name)
            .map(|(id, _)| id.clone())
    }

    /// A resource the view `view` reads: from the view's own server only.
    pub async fn app_read_resource(&self, view: &AppView, uri: &str) -> Result<ReadResourceResult> {
        self.read_resource(&view.server_id, uri).await
    }

    /// The host's opt-in, or why app calls are refused.
    fn apps_options(&self) -> Result<&AppsOptions> {
        self.options().apps.as_ref().ok_or_else(|| {
            Error::invalid(
                "MCP Apps are off: open the pool with the `apps` option (e.g. {\"apps\": {}}) \
                 to render views",
            )
        })
    }
}

/// The one tool a gateway (`mcpmux serve`) serves under another name that its own server
/// names `name`: how a view's call by its own server's name finds it through a fleet.
fn by_own_name<'a>(tools: &'a [ToolInfo], name: &str) -> Option<&'a ToolInfo> {
    let mut named = tools
        .iter()
        .filter(|t| t.own_name().as_deref() == Some(name));
    let one = named.next();
    named.next().is_none().then_some(one).flatten()
}

/// The contents of `uri` in a read's answer (the first, when none names it).
fn view_contents<'a>(read: &'a ReadResourceResult, uri: &str) -> Option<&'a ResourceContents> {
    let named = |c: &&ResourceContents| match c {
        ResourceContents::TextResourceContents { uri: u, .. }
        | ResourceContents::BlobResourceContents { uri: u, .. } => u == uri,
        _ => false,
    };
    read.contents
        .iter()
        .find(named)
        .or_else(|| read.contents.first())
}

/// The view's MIME type, its HTML and its `_meta`.
fn view_document(
    contents: &ResourceContents,
) -> std::result::Result<(String, String, Option<Value>), String> {
    let meta_of =
        |m: &Option<rmcp::model::MetaObject>| m.as_ref().map(|m| Value::Object(m.0.clone()));
    match contents {
        ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text,
            meta,
        } => Ok((mime_of(uri, mime_type)?, text.clone(), meta_of(meta))),
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            meta,
        } => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(blob)
                .map_err(|e| format!("the view '{uri}' is a blob that is not base64: {e}"))?;
            let html = String::from_utf8(bytes)
                .map_err(|_| format!("the view '{uri}' is not UTF-8 text"))?;
            Ok((mime_of(uri, mime_type)?, html, meta_of(meta)))
        }
        _ => Err("the view is a kind of resource contents this host does not know".into()),
    }
}

fn mime_of(uri: &str, mime_type: &Option<String>) -> std::result::Result<String, String> {
    mime_type
        .clone()
        .ok_or_else(|| format!("the view '{uri}' has no MIME type"))
}

/// The origins `csp` declares, keeping only well-formed ones: an origin is written into the
/// policy as it is, so one carrying a `;`, a quote or a space could add directives of its own.
fn declared_csp(csp: Option<&Value>) -> AppCsp {
    let list = |key: &str| -> Vec<String> {
        csp.and_then(|c| c.get(key))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|o| is_origin(o))
            .map(str::to_owned)
            .collect()
    };
    AppCsp {
        connect_domains: list("connectDomains"),
        resource_domains: list("resourceDomains"),
        frame_domains: list("frameDomains"),
        base_uri_domains: list("baseUriDomains"),
    }
}

/// `https://host`, `wss://host:port`, `https://*.host`: a scheme and a host, nothing else.
fn is_origin(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once("://") else {
        return false;
    };
    let host_ok =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '*' | ':' | '[' | ']');
    !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !rest.is_empty()
        && rest.trim_end_matches('/').chars().all(host_ok)
}

fn declared_permissions(permissions: Option<&Value>) -> AppPermissions {
    let asks = |key: &str| {
        permissions
            .and_then(|p| p.get(key))
            .is_some_and(|v| !v.is_null())
    };
    AppPermissions {
        camera: asks("camera"),
        microphone: asks("microphone"),
        geolocation: asks("geolocation"),
        clipboard_write: asks("clipboardWrite"),
    }
}

/// The policy the extension prescribes for the declared origins: nothing is loaded, framed or
/// reached that the view did not declare, and plugins never.
fn content_security_policy(csp: &AppCsp) -> String {
    let with = |base: &str, extra: &[String]| {
        std::iter::once(base.to_owned())
            .chain(extra.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let or = |list: &[String], otherwise: &str| {
        if list.is_empty() {
            otherwise.to_owned()
        } else {
            list.join(" ")
        }
    };
    let resources = &csp.resource_domains;
    let connect = if csp.connect_domains.is_empty() {
        "'none'".to_owned()
    } else {
        with("'self'", &csp.connect_domains)
    };
    [
        "default-src 'none'".to_owned(),
        format!("script-src {}", with("'self' 'unsafe-inline'", resources)),
        format!("style-src {}", with("'self' 'unsafe-inline'", resources)),
        format!("connect-src {connect}"),
        format!("img-src {}", with("'self' data:", resources)),
        format!("font-src {}", with("'self'", resources)),
        format!("media-src {}", with("'self' data:", resources)),
        format!("frame-src {}", or(&csp.frame_domains, "'none'")),
        "object-src 'none'".to_owned(),
        format!("base-uri {}", or(&csp.base_uri_domains, "'self'")),
    ]
    .join("; ")
}

/// The frame's `allow` attribute (Permissions Policy) for what the view asks.
fn allow_attribute(p: &AppPermissions) -> String {
    [
        (p.camera, "camera"),
        (p.microphone, "microphone"),
        (p.geolocation, "geolocation"),
        (p.clipboard_write, "clipboard-write"),
    ]
    .iter()
    .filter(|(asked, _)| *asked)
    .map(|(_, feature)| *feature)
    .collect::<Vec<_>>()
    .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(meta: Option<Value>) -> ToolInfo {
        ToolInfo {
            id: "mcp__s__t".into(),
            server_id: "s1".into(),
            server_name: "s".into(),
            name: "t".into(),
            title: None,
            description: None,
            input_schema: json!({"type": "object"}).into(),
            output_schema: None,
            annotations: None,
            icons: None,
            meta: meta.map(Into::into),
        }
    }

    #[test]
    fn a_tool_is_for_both_audiences_unless_its_visibility_says_otherwise() {
        let cases = [
            (None, true, true),
            (Some(json!({"ui": {"resourceUri": "ui://a"}})), true, true),
            (Some(json!({"ui": {"visibility": ["app"]}})), false, true),
            (Some(json!({"ui": {"visibility": ["model"]}})), true, false),
            (Some(json!({"ui": {"visibility": []}})), false, false),
        ];
        for (meta, model, app) in cases {
            let t = tool(meta.clone());
            assert_eq!((t.for_model(), t.for_apps()), (model, app), "{meta:?}");
        }
    }

    #[test]
    fn the_view_uri_is_read_from_ui_then_from_the_deprecated_flat_key() {
        assert_eq!(
            tool(Some(
                json!({"ui": {"resourceUri": "ui://new"}, "ui/resourceUri": "ui://old"})
            ))
            .view_uri(),
            Some("ui://new".into())
        );
        assert_eq!(
            tool(Some(json!({"ui/resourceUri": "ui://old"}))).view_uri(),
            Some("ui://old".into())
        );
        assert_eq!(tool(None).view_uri(), None);
    }

    #[test]
    fn the_policy_is_the_restrictive_default_without_declarations() {
        let policy = content_security_policy(&AppCsp::default());
        for part in [
            "default-src 'none'",
            "script-src 'self' 'unsafe-inline'",
            "connect-src 'none'",
            "img-src 'self' data:",
            "frame-src 'none'",
            "object-src 'none'",
            "base-uri 'self'",
        ] {
            assert!(policy.split("; ").any(|p| p == part), "{part} in {policy}");
        }
    }

    #[test]
    fn declared_origins_open_their_directives_and_malformed_ones_are_dropped() {
        let csp = declared_csp(Some(&json!({
            "connectDomains": ["https://api.example.com", "https://x.com; script-src *"],
            "resourceDomains": ["https://*.cdn.example", "'unsafe-eval'"],
            "frameDomains": ["https://www.youtube.com"],
        })));
        assert_eq!(csp.connect_domains, ["https://api.example.com"]);
        assert_eq!(csp.resource_domains, ["https://*.cdn.example"]);
        let policy = content_security_policy(&csp);
        assert!(
            policy.contains("connect-src 'self' https://api.example.com;"),
            "{policy}"
        );
        assert!(policy.contains("script-src 'self' 'unsafe-inline' https://*.cdn.example;"));
        assert!(policy.contains("frame-src https://www.youtube.com;"));
        assert!(!policy.contains("unsafe-eval") && !policy.contains("x.com"));
    }

    #[test]
    fn asked_permissions_become_the_frame_allow_attribute() {
        let p = declared_permissions(Some(&json!({"camera": {}, "clipboardWrite": {}})));
        assert_eq!(allow_attribute(&p), "camera; clipboard-write");
        assert_eq!(allow_attribute(&AppPermissions::default()), "");
    }

    #[test]
    fn apps_options_default_to_html_views() {
        let o: AppsOptions = serde_json::from_str("{}").unwrap();
        assert_eq!(o.mime_types, [APP_HTML_MIME_TYPE]);
        assert!(serde_json::from_str::<AppsOptions>(r#"{"nope": 1}"#).is_err());
    }
}
