//! Host ("local") tools: functions of the application itself, offered next to the servers'
//! tools and dispatched in-process (WebMCP Auto-UI's local WebMCP layer). Arguments are
//! checked against the tool's JSON Schema first; a bad call answers with the errors and the
//! schema, so an agent can correct itself.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

use crate::boxed_future::BoxFuture;
use crate::error::{Error, Result};
use crate::tools::{ToolInfo, sanitize};

/// The server id and name under which host tools appear.
pub const HOST_TOOLS_SERVER: &str = "local";

/// Runs a host tool: gets the validated arguments, answers a result or a failure message.
pub type HostToolHandler =
    Arc<dyn Fn(Value) -> BoxFuture<std::result::Result<CallToolResult, String>> + Send + Sync>;

/// A tool the host application provides.
#[derive(Clone)]
pub struct HostTool {
    /// Also its id: `[A-Za-z0-9_-]`, at most 64 characters, not starting with `mcp__`.
    pub name: String,
    pub description: String,
    /// A JSON Schema for the arguments (an object schema).
    pub input_schema: Value,
    pub handler: HostToolHandler,
}

struct Registered {
    info: ToolInfo,
    validator: Arc<jsonschema::Validator>,
    handler: HostToolHandler,
}

/// The host's tools, by id.
#[derive(Default)]
pub(crate) struct HostTools {
    tools: RwLock<BTreeMap<String, Registered>>,
}

impl HostTools {
    /// Adds or replaces a tool; returns how it is listed.
    pub fn register(&self, tool: HostTool) -> Result<ToolInfo> {
        let id = tool.name.clone();
        if id.is_empty() || id.len() > crate::tools::MAX_TOOL_ID_LEN || sanitize(&id) != id {
            return Err(Error::invalid(format!(
                "host tool name '{id}' must be 1 to 64 characters of [A-Za-z0-9_-]"
            )));
        }
        if id.starts_with("mcp__") || id == "search_tools" {
            return Err(Error::invalid(format!(
                "host tool name '{id}' is reserved for server tools and discovery"
            )));
        }
        if tool.input_schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(Error::invalid(format!(
                "host tool '{id}': the input schema must be an object schema (\"type\": \"object\")"
            )));
        }
        let validator = jsonschema::validator_for(&tool.input_schema)
            .map_err(|e| Error::invalid(format!("host tool '{id}': invalid JSON Schema: {e}")))?;
        let info = ToolInfo {
            id: id.clone(),
            server_id: HOST_TOOLS_SERVER.into(),
            server_name: HOST_TOOLS_SERVER.into(),
            name: id.clone(),
            description: Some(tool.description),
            input_schema: tool.input_schema.into(),
            ..Default::default()
        };
        self.tools.write().unwrap().insert(
            id,
            Registered {
                info: info.clone(),
                validator: Arc::new(validator),
                handler: tool.handler,
            },
        );
        Ok(info)
    }

    pub fn unregister(&self, id: &str) -> bool {
        self.tools.write().unwrap().remove(id).is_some()
    }

    /// Removes every tool (a closed pool's).
    pub fn clear(&self) {
        self.tools.write().unwrap().clear();
    }

    pub fn list(&self) -> Vec<ToolInfo> {
        self.tools
            .read()
            .unwrap()
            .values()
            .map(|r| r.info.clone())
            .collect()
    }

    pub fn contains(&self, id: &str) -> bool {
        self.tools.read().unwrap().contains_key(id)
    }

    /// Validates and runs a host tool. Invalid arguments and handler failures are results
    /// with `isError` (the agent reads them); only an unknown id is an error.
    pub async fn call(&self, id: &str, arguments: Value) -> Result<CallToolResult> {
        let (validator, handler, schema) = {
            let tools = self.tools.read().unwrap();
            let r = tools.get(id).ok_or_else(|| Error::not_found("tool", id))?;
            (
                r.validator.clone(),
                r.handler.clone(),
                r.info.input_schema.clone(),
            )
        };
        let arguments = if arguments.is_null() {
            Value::Object(Default::default())
        } else {
            arguments
        };
        let problems = schema_problems(&validator, &arguments);
        if !problems.is_empty() {
            let text = format!(
                "invalid arguments for '{id}':\n- {}\nexpected schema: {schema}",
                problems.join("\n- ")
            );
            let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
            r.structured_content = Some(serde_json::json!({"errors": problems, "schema": schema}));
            return Ok(r);
        }
        match handler(arguments).await {
            Ok(r) => Ok(r),
            Err(message) => Ok(CallToolResult::error(vec![ContentBlock::text(message)])),
        }
    }
}

/// What is wrong with `value` for `validator`'s schema, one line a problem, each led by the
/// JSON pointer of the value at fault (none for the value itself).
pub(crate) fn schema_problems(validator: &jsonschema::Validator, value: &Value) -> Vec<String> {
    validator
        .iter_errors(value)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn adder() -> HostTool {
        HostTool {
            name: "add".into(),
            description: "Add two numbers".into(),
            input_schema: json!({
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"]
            }),
            handler: Arc::new(|args| {
                Box::pin(async move {
                    let sum = args["a"].as_f64().unwrap() + args["b"].as_f64().unwrap();
                    Ok(CallToolResult::success(vec![ContentBlock::text(
                        sum.to_string(),
                    )]))
                })
            }),
        }
    }

    #[tokio::test]
    async fn valid_calls_run_and_invalid_ones_explain_the_schema() {
        let tools = HostTools::default();
        tools.register(adder()).unwrap();
        let r = tools.call("add", json!({"a": 2, "b": 3})).await.unwrap();
        assert_eq!(r.is_error, Some(false));
        let r = tools.call("add", json!({"a": "two"})).await.unwrap();
        assert_eq!(r.is_error, Some(true));
        let s = r.structured_content.unwrap();
        assert_eq!(s["errors"].as_array().unwrap().len(), 2, "{s}");
        assert_eq!(s["schema"]["required"], json!(["a", "b"]));
        assert_eq!(
            tools.call("nope", json!({})).await.unwrap_err().kind(),
            crate::error::ErrorKind::NotFound
        );
    }

    #[test]
    fn bad_names_and_schemas_are_refused() {
        let tools = HostTools::default();
        for name in ["", "has space", "mcp__x__y", "search_tools"] {
            assert!(
                tools
                    .register(HostTool {
                        name: name.into(),
                        ..adder()
                    })
                    .is_err(),
                "{name}"
            );
        }
        let bad = HostTool {
            input_schema: json!({"type": "object", "properties": {"a": {"type": 7}}}),
            ..adder()
        };
        assert!(
            tools
                .register(bad)
                .unwrap_err()
                .to_string()
                .contains("JSON Schema")
        );
        assert!(
            tools
                .register(HostTool {
                    input_schema: json!({"type": "string"}),
                    ..adder()
                })
                .is_err()
        );
    }
}
