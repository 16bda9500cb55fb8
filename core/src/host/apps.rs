//! The host's opt-in to MCP Apps (`io.modelcontextprotocol/ui`): which view types it renders,
//! and the extension's entry in the capabilities it declares to servers. What the pool then
//! does with views is `pool::ext::apps`'.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The extension's identifier, in capabilities.
pub const APPS_EXTENSION_ID: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an HTML view.
pub const APP_HTML_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// A host's opt-in to MCP Apps (`PoolOptions.apps`): servers learn that it renders views of
/// these MIME types, and may then offer them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppsOptions {
    /// The view types the host renders (default: `text/html;profile=mcp-app`).
    #[serde(default = "default_mime_types")]
    pub mime_types: Vec<String>,
}

impl Default for AppsOptions {
    fn default() -> Self {
        AppsOptions {
            mime_types: default_mime_types(),
        }
    }
}

fn default_mime_types() -> Vec<String> {
    vec![APP_HTML_MIME_TYPE.to_owned()]
}

/// The extension's entry in the host's capabilities.
pub(crate) fn capability(options: &AppsOptions) -> Value {
    serde_json::json!({ "mimeTypes": options.mime_types })
}
