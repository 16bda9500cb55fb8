//! A server's tool as the pool keeps it between listings: its fields as shared JSON text,
//! handed out by every listing without a parse or a copy.
//!
//! Why text: a pool of fifty servers keeps thousands of tools for hours, and a schema parsed
//! into `serde_json::Value` costs about ten times its text (one B-tree node of ~640 bytes per
//! JSON object, however few keys it has). Why shared: a listing of every tool is asked for
//! on each turn of an agent, and parsing each tool's text again made it cost milliseconds.

use serde::{Deserialize, Serialize};

use crate::shared_json::SharedJson;
use crate::tools::ToolInfo;

/// One tool of a server, as rmcp's `Tool` has it. A tool's `execution` (the tasks extension)
/// is not kept: rmcp's `Tool` has no such field, so it is gone by the time a listing reaches
/// the pool.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StoredTool {
    name: Box<str>,
    description: Option<Box<str>>,
    input_schema: SharedJson,
    /// The fields most tools leave out, kept apart so that a tool without them costs a
    /// pointer.
    rest: Option<Box<Rest>>,
}

/// A tool's less common fields.
#[derive(Debug, Clone, Default, PartialEq)]
struct Rest {
    title: Option<Box<str>>,
    /// What a listing shows as the title: the tool's own, else its annotations' one.
    shown_title: Option<Box<str>>,
    output_schema: Option<SharedJson>,
    annotations: Option<SharedJson>,
    icons: Option<SharedJson>,
    meta: Option<SharedJson>,
}

impl StoredTool {
    pub fn new(tool: &rmcp::model::Tool) -> StoredTool {
        let title = tool.title.as_deref().map(Box::from);
        let annotations_title = tool.annotations.as_ref().and_then(|a| a.title.as_deref());
        let rest = Rest {
            shown_title: title.clone().or_else(|| annotations_title.map(Box::from)),
            title,
            output_schema: tool.output_schema.as_deref().map(SharedJson::of),
            annotations: tool.annotations.as_ref().map(SharedJson::of),
            icons: tool.icons.as_ref().map(SharedJson::of),
            meta: tool.meta.as_ref().map(SharedJson::of),
        };
        StoredTool {
            name: tool.name.as_ref().into(),
            description: tool.description.as_deref().map(Box::from),
            input_schema: SharedJson::of(&*tool.input_schema),
            rest: (rest != Rest::default()).then(|| Box::new(rest)),
        }
    }

    fn rest(&self) -> &Rest {
        static NONE: Rest = Rest {
            title: None,
            shown_title: None,
            output_schema: None,
            annotations: None,
            icons: None,
            meta: None,
        };
        self.rest.as_deref().unwrap_or(&NONE)
    }

    /// The tool's own name on its server.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool's `outputSchema`, if it declares one.
    pub fn output_schema(&self) -> Option<serde_json::Value> {
        self.rest().output_schema.as_ref().map(SharedJson::to_value)
    }

    /// The tool under its pool id.
    pub fn info(&self, id: String, server_id: &str, server_name: &str) -> ToolInfo {
        let rest = self.rest();
        ToolInfo {
            id,
            server_id: server_id.to_string(),
            server_name: server_name.to_string(),
            name: self.name.to_string(),
            title: rest.shown_title.as_deref().map(str::to_string),
            description: self.description.as_deref().map(str::to_string),
            input_schema: self.input_schema.clone(),
            output_schema: rest.output_schema.clone(),
            annotations: rest.annotations.clone(),
            icons: rest.icons.clone(),
            meta: rest.meta.clone(),
        }
    }
}

/// Written as rmcp writes the tool (its fields in its order), for the catalog.
impl Serialize for StoredTool {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Written<'a> {
            name: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            title: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            description: Option<&'a str>,
            input_schema: &'a SharedJson,
            #[serde(skip_serializing_if = "Option::is_none")]
            output_schema: Option<&'a SharedJson>,
            #[serde(skip_serializing_if = "Option::is_none")]
            annotations: Option<&'a SharedJson>,
            #[serde(skip_serializing_if = "Option::is_none")]
            icons: Option<&'a SharedJson>,
            #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
            meta: Option<&'a SharedJson>,
        }
        let rest = self.rest();
        Written {
            name: &self.name,
            title: rest.title.as_deref(),
            description: self.description.as_deref(),
            input_schema: &self.input_schema,
            output_schema: rest.output_schema.as_ref(),
            annotations: rest.annotations.as_ref(),
            icons: rest.icons.as_ref(),
            meta: rest.meta.as_ref(),
        }
        .serialize(s)
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
        assert_eq!(
            info.output_schema.clone().unwrap(),
            json!({"type": "object"})
        );
        assert_eq!(
            info.annotations.as_ref().unwrap().to_value()["readOnlyHint"],
            true
        );
        assert_eq!(
            info.icons.as_ref().unwrap().to_value()[0]["mimeType"],
            "image/png"
        );
        assert_eq!(
            info.meta.clone().unwrap(),
            json!({"ui": {"resourceUri": "ui://w"}})
        );
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
