//! What the user trusted when they trusted a server, as its record holds it
//! (`trustedTools`): each tool's digest and description then. How a tool is pinned and checked
//! against it is `tools::pins`'.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One tool as the user trusted it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrustedTool {
    /// `sha256:` and the hex SHA-256 of the tool's definition.
    pub digest: String,
    /// Its description then, to show what changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A server's tools as trusted, by their own names.
pub type TrustedTools = BTreeMap<String, TrustedTool>;
