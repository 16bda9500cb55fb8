//! How a served pool shows its tools. `direct` lists every tool (for clients with their own
//! tool search); `search` lists three, whatever the size of the fleet: `search_tools` (BM25
//! over the catalog, with the input schemas of the best hits), `describe_tools` and
//! `call_tool`, which fits every client's tool cap (Cursor's 40, VS Code's 128), keeps the
//! model's context small and never needs `list_changed`; `auto` is `direct` while the fleet
//! has at most `auto_limit` tools, `search` past it.

use std::str::FromStr;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::{Value, json};

/// Which tools a client sees. Its schema (the names `from_str` takes) is the bindings'
/// `ServeMode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(rename = "ServeMode")]
pub enum Exposure {
    /// Every tool of every server.
    Direct,
    /// `search_tools`, `describe_tools` and `call_tool` only.
    Search,
    /// `direct` up to `ServeOptions::auto_limit` tools, `search` past it.
    #[default]
    Auto,
}

impl std::fmt::Display for Exposure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Exposure::Direct => "direct",
            Exposure::Search => "search",
            Exposure::Auto => "auto",
        })
    }
}

impl FromStr for Exposure {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "direct" => Ok(Exposure::Direct),
            "search" => Ok(Exposure::Search),
            "auto" => Ok(Exposure::Auto),
            other => Err(format!(
                "unknown exposure mode '{other}': direct, search or auto"
            )),
        }
    }
}

/// The default `auto_limit`: Cursor's cap, the smallest of the common clients'.
pub const AUTO_LIMIT: usize = 40;

/// How many hits of `search_tools` carry their input schema (the others only their name and
/// description), so one search is usually enough to call.
pub const SCHEMAS_IN_SEARCH: usize = 3;

pub const SEARCH_TOOLS: &str = "search_tools";
pub const DESCRIBE_TOOLS: &str = "describe_tools";
pub const CALL_TOOL: &str = "call_tool";

fn tool(name: &'static str, description: &'static str, schema: Value) -> Tool {
    let Value::Object(schema) = schema else {
        unreachable!("the schemas below are objects")
    };
    Tool::new(name, description, std::sync::Arc::new(schema))
}

/// The three tools of `search` mode.
pub fn search_surface() -> Vec<Tool> {
    vec![
        tool(
            SEARCH_TOOLS,
            "Find tools of the connected MCP servers by what they do. Returns the best matches, \
             best first, with the input schema of the first few; call one with call_tool.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What the tool should do, in words"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50,
                              "description": "How many matches (default 10)"}
                },
                "required": ["query"]
            }),
        ),
        tool(
            DESCRIBE_TOOLS,
            "The full definitions (description, input schema) of tools by name, as search_tools \
             names them. Names that are no tool's come back in `unknown`, and the names they \
             may mean in `didYouMean`.",
            json!({
                "type": "object",
                "properties": {
                    "names": {"type": "array", "items": {"type": "string"}, "minItems": 1}
                },
                "required": ["names"]
            }),
        ),
        tool(
            CALL_TOOL,
            "Call a tool by name (as search_tools names it) with its arguments.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "arguments": {"type": "object", "description": "The tool's arguments"}
                },
                "required": ["name"]
            }),
        ),
    ]
}

/// A meta tool's answer: the JSON as text (what every client shows a model) and as
/// `structuredContent`.
pub fn answer(value: Value) -> CallToolResult {
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(value);
    result
}

/// The arguments of a meta tool call, read into `T`; a clear error naming what is wrong.
pub fn arguments<T: serde::de::DeserializeOwned>(
    tool: &str,
    arguments: Option<serde_json::Map<String, Value>>,
) -> Result<T, ErrorData> {
    serde_json::from_value(Value::Object(arguments.unwrap_or_default()))
        .map_err(|e| ErrorData::invalid_params(format!("{tool}: bad arguments: {e}"), None))
}

#[derive(serde::Deserialize)]
pub struct SearchArgs {
    pub query: String,
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(serde::Deserialize)]
pub struct DescribeArgs {
    pub names: Vec<String>,
}

#[derive(serde::Deserialize)]
pub struct CallArgs {
    pub name: String,
    #[serde(default)]
    pub arguments: Option<serde_json::Map<String, Value>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bindings' `ServeMode` is generated from the schema: it names what `from_str` takes.
    #[test]
    fn the_schema_names_each_mode_as_it_is_parsed_and_shown() {
        let schema = serde_json::to_value(schemars::schema_for!(Exposure)).unwrap();
        // Documented variants: a `oneOf` of constants, each with its doc.
        let names: Vec<&str> = schema["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["const"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["direct", "search", "auto"]);
        for name in names {
            assert_eq!(name.parse::<Exposure>().unwrap().to_string(), name);
        }
    }

    #[test]
    fn modes_parse_and_name_the_choices() {
        assert_eq!("search".parse::<Exposure>(), Ok(Exposure::Search));
        let e = "everything".parse::<Exposure>().unwrap_err();
        assert!(e.contains("direct, search or auto"), "{e}");
    }

    #[test]
    fn the_surface_is_three_tools_whose_names_no_server_tool_can_take() {
        let names: Vec<String> = search_surface()
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        assert_eq!(names, [SEARCH_TOOLS, DESCRIBE_TOOLS, CALL_TOOL]);
        // Served tools are always `server__tool`.
        assert!(names.iter().all(|n| !n.contains("__")));
    }
}
