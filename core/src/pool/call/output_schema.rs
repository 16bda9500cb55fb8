//! A tool's result checked against its `outputSchema`, as both official SDKs do: a tool that
//! declares one promises `structuredContent` that validates (JSON Schema 2020-12 unless the
//! schema says otherwise; `$ref`s resolve inside the schema only, never over the network).
//! A result that breaks the promise is an `invalid_result` error naming each value at fault,
//! so a host, or an agent's model, learns of it; a result with `isError` is not checked. Each
//! tool's validator is compiled once per listing of its server.

use std::sync::{Arc, Mutex};

use rmcp::model::CallToolResult;

use crate::error::{Error, Result};
use crate::fast_map::FastMap;
use crate::pool::server::slot::Slot;
use crate::tools::host_tools::schema_problems;

/// The compiled output schemas of one server's tools, by tool name (`None`: the tool declares
/// none, or its schema cannot be used).
#[derive(Default)]
pub(crate) struct OutputValidators(Mutex<FastMap<Box<str>, Option<Arc<jsonschema::Validator>>>>);

impl OutputValidators {
    /// Forgets every validator: the server's tools were listed again.
    pub fn clear(&self) {
        self.0.lock().unwrap().clear();
    }
}

impl Slot {
    /// The validator of `tool`'s output schema, compiled on first use.
    fn output_validator(&self, tool: &str) -> Option<Arc<jsonschema::Validator>> {
        if let Some(known) = self.validators.0.lock().unwrap().get(tool) {
            return known.clone();
        }
        let schema = {
            let cached = self.tools.lock().unwrap();
            cached
                .as_ref()
                .and_then(|c| c.tools.iter().find(|t| t.name() == tool).cloned())
        }
        .and_then(|t| t.output_schema());
        let compiled = schema.and_then(|schema| match jsonschema::validator_for(&schema) {
            Ok(v) => Some(Arc::new(v)),
            Err(e) => {
                tracing::warn!(server = %self.name(), %tool, "its outputSchema cannot be used: {e}");
                None
            }
        });
        self.validators
            .0
            .lock()
            .unwrap()
            .insert(tool.into(), compiled.clone());
        compiled
    }

    /// `result` if it keeps the promise of `tool`'s output schema, else the error that says
    /// how it does not.
    pub(in crate::pool) fn checked_output(
        &self,
        tool: &str,
        result: CallToolResult,
    ) -> Result<CallToolResult> {
        if result.is_error == Some(true) {
            return Ok(result);
        }
        let Some(validator) = self.output_validator(tool) else {
            return Ok(result);
        };
        let problems = match &result.structured_content {
            None => vec!["no structuredContent, which the tool's outputSchema requires".into()],
            Some(content) => schema_problems(&validator, content),
        };
        if problems.is_empty() {
            return Ok(result);
        }
        Err(Error::InvalidResult {
            server: self.name(),
            tool: tool.to_string(),
            problems,
        })
    }
}
