//! A server's tool as the pool keeps it between listings: compact JSON text, parsed when a
//! listing asks for it.
//!
//! Why text: a pool of fifty servers keeps thousands of tools for hours, and a schema parsed
//! into `serde_json::Value` costs about ten times its text (one B-tree node of ~640 bytes per
//! JSON object, however few keys it has). Listings parse the text straight into `ToolInfo`,
//! which costs about what deep-cloning parsed schemas did.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::tools::ToolInfo;

/// One tool of a server: its name, and the whole tool as rmcp serializes it.
#[derive(Debug, Clone)]
pub(crate) struct StoredTool {
    name: Box<str>,
    json: Box<RawValue>,
}

/// The fields of a stored tool a listing hands out (`name` is kept apart). A tool's
/// `execution` (the tasks extension) is not among them: rmcp's `Tool` has no such field, so
/// it is gone by the time a listing reaches the pool.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Described {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    input_schema: serde_json::Value,
    #[serde(default)]
    output_schema: Option<serde_json::Value>,
    #[serde(default)]
    annotations: Option<serde_json::Value>,
    #[serde(default)]
    icons: Option<serde_json::Value>,
    #[serde(default, rename = "_meta")]
    meta: Option<serde_json::Value>,
}

impl StoredTool {
    pub fn new(tool: &rmcp::model::Tool) -> StoredTool {
        let json = serde_json::value::to_raw_value(tool)
            // rmcp's Tool is plain data with string keys: serializing it cannot fail.
            .expect("a tool serializes to JSON");
        StoredTool {
            name: tool.name.as_ref().into(),
            json,
        }
    }

    /// The tool's own name on its server.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool's `outputSchema`, if it declares one.
    pub fn output_schema(&self) -> Option<serde_json::Value> {
        #[derive(Deserialize)]
        struct Output {
            #[serde(default, rename = "outputSchema")]
            output_schema: Option<serde_json::Value>,
        }
        serde_json::from_str::<Output>(self.json.get())
            .ok()
            .and_then(|o| o.output_schema)
    }

    /// The tool under its pool id.
    pub fn info(&self, id: String, server_id: &str, server_name: &str) -> ToolInfo {
        // The text was written by `new` from a valid tool (or checked the same way when read
        // from the catalog), so it always parses back.
        let d: Described =
            serde_json::from_str(self.json.get()).expect("a stored tool parses back");
        let annotation_title = || {
            d.annotations
                .as_ref()
                .and_then(|a| a.get("title"))
                .and_then(|t| t.as_str())
                .map(str::to_string)
        };
        ToolInfo {
            id,
            server_id: server_id.to_string(),
            server_name: server_name.to_string(),
            name: self.name.to_string(),
            title: d.title.or_else(annotation_title),
            description: d.description,
            input_schema: d.input_schema,
            output_schema: d.output_schema,
            annotations: d.annotations,
            icons: d.icons,
            meta: d.meta,
        }
    }
}

impl PartialEq for StoredTool {
    fn eq(&self, other: &StoredTool) -> bool {
        self.json.get() == other.json.get()
    }
}

impl Serialize for StoredTool {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(s)
    }
}

/// Read back (from the catalog) through rmcp's `Tool`, so a stored tool is always one rmcp
/// accepts and its text is written the same way as a fresh listing's.
impl<'de> Deserialize<'de> for StoredTool {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<StoredTool, D::Error> {
        rmcp::model::Tool::deserialize(d).map(|t| StoredTool::new(&t))
    }
}

/// Turns a fresh listing into stored tools.
pub(crate) fn store(tools: &[rmcp::model::Tool]) -> Vec<StoredTool> {
    tools.iter().map(StoredTool::new).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(v: serde_json::Value) -> rmcp::model::Tool {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_listing_reads_back_what_the_server_described() {
        let t = tool(json!({
            "name": "get.weather",
            "description": "Weather for a city.",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
            "outputSchema": {"type": "object"},
            "annotations": {"title": "Weather", "readOnlyHint": true},
            "icons": [{"src": "https://example.com/w.png", "mimeType": "image/png"}],
            "_meta": {"ui": {"resourceUri": "ui://w"}}
        }));
        let stored = StoredTool::new(&t);
        assert_eq!(stored.name(), "get.weather");
        let info = stored.info("mcp__s__get_weather".into(), "id1", "s");
        assert_eq!(info.name, "get.weather");
        assert_eq!(info.title.as_deref(), Some("Weather"));
        assert_eq!(info.description.as_deref(), Some("Weather for a city."));
        assert_eq!(
            info.input_schema,
            json!({"type": "object", "properties": {"city": {"type": "string"}}})
        );
        assert_eq!(info.output_schema, Some(json!({"type": "object"})));
        assert_eq!(info.annotations.as_ref().unwrap()["readOnlyHint"], true);
        assert_eq!(info.icons.as_ref().unwrap()[0]["mimeType"], "image/png");
        assert_eq!(info.meta, Some(json!({"ui": {"resourceUri": "ui://w"}})));
        let out = serde_json::to_value(&info).unwrap();
        assert_eq!(out["_meta"]["ui"]["resourceUri"], "ui://w");
        // Its own title wins over the annotations' one.
        let mut titled = t.clone();
        titled.title = Some("Own".into());
        let info = StoredTool::new(&titled).info("x".into(), "id1", "s");
        assert_eq!(info.title.as_deref(), Some("Own"));
    }

    #[test]
    fn stored_tools_round_trip_as_the_tools_themselves() {
        let t = tool(json!({"name": "a", "inputSchema": {"type": "object"}}));
        let stored = StoredTool::new(&t);
        let text = serde_json::to_string(&stored).unwrap();
        assert_eq!(text, serde_json::to_string(&t).unwrap());
        let back: StoredTool = serde_json::from_str(&text).unwrap();
        assert_eq!(back, stored);
        assert_ne!(
            back,
            StoredTool::new(&tool(
                json!({"name": "b", "inputSchema": {"type": "object"}})
            ))
        );
    }

    #[test]
    fn a_catalog_entry_that_is_not_a_tool_is_refused() {
        assert!(serde_json::from_str::<StoredTool>(r#"{"inputSchema": {}}"#).is_err());
        assert!(serde_json::from_str::<StoredTool>(r#"{"name": 3}"#).is_err());
    }
}
