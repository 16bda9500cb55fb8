//! The host contract: how the application's answer to each kind of request is read, the
//! same way from C, Python and JS. A binding hands the answer over as JSON, after its own
//! language's sugar (a dataclass becomes a dict, a JS `undefined` becomes `null`), and core
//! reads it here. An answer that cannot be used is refused with a message that says what is
//! expected; what each binding then does with a refusal depends on whether its host can
//! answer again (C can; a Python or JS callback has returned).
//!
//! The table every binding's tests check against is `tests/contract/host_answers.json`.
#![allow(
    deprecated,
    reason = "roots and sampling are deprecated by SEP-2577 but servers still use them"
)]

use rmcp::model::{CallToolResult, ContentBlock, CreateMessageResult, ElicitResult, Root};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::message::Response;

/// The kinds of request a host answers, as the contract table names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    /// A call of a host tool.
    ToolResult,
    /// An agent's question before a tool runs.
    Approval,
    /// A server's `sampling/createMessage`.
    Sampling,
    /// A server's `elicitation/create`.
    Elicitation,
    /// A server's `roots/list`.
    Roots,
    /// A chat request to a provider the host implements.
    ProviderReply,
}

impl AnswerKind {
    /// Every kind.
    pub const ALL: [AnswerKind; 6] = [
        AnswerKind::ToolResult,
        AnswerKind::Approval,
        AnswerKind::Sampling,
        AnswerKind::Elicitation,
        AnswerKind::Roots,
        AnswerKind::ProviderReply,
    ];
}

/// The host's answer to "may this tool run?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    AllowOnce,
    /// For the rest of this agent's life.
    AllowAlways,
    Deny,
}

/// A host tool's answer: a CallToolResult (an object with a `content` array; `is_error` and
/// `structured_content` are read as their camelCase names) as it is; a string as one text
/// part; `null` as no content; any other JSON as its text, an object also as
/// `structuredContent`.
pub fn tool_result(answer: Value) -> std::result::Result<CallToolResult, String> {
    match answer {
        Value::Object(mut m) if m.get("content").is_some_and(Value::is_array) => {
            for (snake, camel) in [
                ("is_error", "isError"),
                ("structured_content", "structuredContent"),
            ] {
                if let Some(v) = m.remove(snake) {
                    m.entry(camel).or_insert(v);
                }
            }
            serde_json::from_value(Value::Object(m))
                .map_err(|e| format!("not a valid CallToolResult: {e}"))
        }
        Value::Null => Ok(CallToolResult::success(Vec::new())),
        Value::String(s) => Ok(CallToolResult::success(vec![ContentBlock::text(s)])),
        Value::Object(m) => {
            let value = Value::Object(m);
            let mut r = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
            r.structured_content = Some(value);
            Ok(r)
        }
        other => Ok(CallToolResult::success(vec![ContentBlock::text(
            other.to_string(),
        )])),
    }
}

/// An approval: `"once"` or `"allow"` or `true` allows this call, `"always"` allows the
/// tool for the rest of the agent's life, `"deny"` or `false` or `null` denies (words in any
/// case, surrounding spaces ignored). Anything else is refused.
pub fn approval(answer: &Value) -> std::result::Result<Approval, String> {
    let word = match answer {
        Value::Bool(true) => return Ok(Approval::AllowOnce),
        Value::Bool(false) | Value::Null => return Ok(Approval::Deny),
        Value::String(s) => s.trim().to_ascii_lowercase(),
        _ => String::new(),
    };
    match word.as_str() {
        "once" | "allow" => Ok(Approval::AllowOnce),
        "always" => Ok(Approval::AllowAlways),
        "deny" => Ok(Approval::Deny),
        _ => Err(format!(
            "an approval is \"once\" (or \"allow\", true), \"always\" or \"deny\" (or false, \
             null), not {answer}"
        )),
    }
}

/// An approval as an agent takes it from a callback of the host's (Python, JS): the answer
/// read as [`approval`] reads it, and a denial where there is no answer (the callback failed)
/// or none that can be read. A tool runs only when the host said so; each binding tells its
/// own language about the failure (an exception handler, a warning).
pub fn approval_or_deny(answer: std::result::Result<Value, String>) -> Approval {
    answer
        .ok()
        .and_then(|v| approval(&v).ok())
        .unwrap_or(Approval::Deny)
}

/// A sampling answer: MCP's CreateMessageResult, or just the text (a string), which becomes
/// an assistant text message from model `host` that ended its turn.
pub fn sampling_result(answer: Value) -> std::result::Result<CreateMessageResult, String> {
    let value = match answer {
        Value::String(text) => json!({
            "role": "assistant",
            "content": {"type": "text", "text": text},
            "model": "host",
            "stopReason": "endTurn",
        }),
        other => other,
    };
    serde_json::from_value(value).map_err(|e| {
        format!(
            "not a valid CreateMessageResult ({e}); answer {{\"role\": \"assistant\", \
             \"content\": {{\"type\": \"text\", \"text\": ...}}, \"model\": ...}} or just the text"
        )
    })
}

/// An elicitation answer: MCP's ElicitResult (`{"action": "accept" | "decline" | "cancel",
/// "content"?: {...}}`), or the content alone (an object without `action`: accepted), or
/// `null` (declined).
pub fn elicitation_result(answer: Value) -> std::result::Result<ElicitResult, String> {
    let value = match answer {
        Value::Null => json!({"action": "decline"}),
        Value::Object(m) if !m.contains_key("action") => {
            json!({"action": "accept", "content": Value::Object(m)})
        }
        other => other,
    };
    serde_json::from_value(value).map_err(|e| {
        format!(
            "not a valid ElicitResult ({e}); answer {{\"action\": \"accept\", \"content\": \
             {{...}}}}, the content alone, or null to decline"
        )
    })
}

/// A `roots/list` answer: a list of roots, each `{"uri": ..., "name"?: ...}` or a URI
/// string; `null` is no roots.
pub fn roots(answer: Value) -> std::result::Result<Vec<Root>, String> {
    let items = match answer {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        other => {
            return Err(format!(
                "roots are a list of {{\"uri\", \"name\"?}}, not {other}"
            ));
        }
    };
    items
        .into_iter()
        .map(|item| {
            let value = match item {
                Value::String(uri) => json!({ "uri": uri }),
                other => other,
            };
            serde_json::from_value::<Root>(value.clone()).map_err(|e| {
                format!("a root is a URI or {{\"uri\", \"name\"?}}, not {value} ({e})")
            })
        })
        .collect()
}

/// A host provider's reply: the agent's [`Response`] (`{"content": [text and tool_use
/// blocks], "stopReason"?, "usage"?}`), or just the text (a string).
pub fn provider_reply(provider: &str, answer: Value) -> Result<Response> {
    let value = match answer {
        Value::String(text) => json!({"content": [{"type": "text", "text": text}]}),
        other => other,
    };
    serde_json::from_value(value).map_err(|e| {
        Error::invalid(format!(
            "provider '{provider}' answered an invalid response ({e}); expected \
             {{\"content\": [{{\"type\": \"text\", \"text\": ...}} | {{\"type\": \"tool_use\", \
             \"id\": ..., \"name\": ..., \"input\": {{...}}}}], \"stopReason\": ..., \"usage\": \
             {{\"inputTokens\": n, \"outputTokens\": n}}}} or just the text"
        ))
    })
}

/// Reads `answer` as `kind` and gives back what core made of it, as core's JSON: what the
/// contract table states, and what a host can check an answer with before giving it.
pub fn read(kind: AnswerKind, answer: Value) -> Result<Value> {
    fn as_json<T: Serialize>(r: std::result::Result<T, String>) -> Result<Value> {
        r.map_err(Error::invalid).and_then(|v| {
            serde_json::to_value(v).map_err(|e| Error::invalid(format!("cannot encode: {e}")))
        })
    }
    match kind {
        AnswerKind::ToolResult => as_json(tool_result(answer)),
        AnswerKind::Approval => as_json(approval(&answer).map(|a| match a {
            Approval::AllowOnce => "once",
            Approval::AllowAlways => "always",
            Approval::Deny => "deny",
        })),
        AnswerKind::Sampling => as_json(sampling_result(answer)),
        AnswerKind::Elicitation => as_json(elicitation_result(answer)),
        AnswerKind::Roots => as_json(roots(answer)),
        AnswerKind::ProviderReply => {
            let reply = provider_reply("host", answer)?;
            serde_json::to_value(reply).map_err(|e| Error::invalid(format!("cannot encode: {e}")))
        }
    }
}

/// One row of the contract table: an answer of a kind, and what it must give.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContractCase {
    pub kind: AnswerKind,
    /// What the row shows, for the failure message.
    pub about: String,
    pub answer: Value,
    /// The answer as core reads it (core's JSON), when it is accepted.
    #[serde(default)]
    pub accepted: Option<Value>,
    /// The error kind (`invalid_argument`) when it is refused.
    #[serde(default)]
    pub refused: Option<String>,
    /// Words the refusal's message contains.
    #[serde(default)]
    pub says: Option<String>,
}

/// The contract table, `tests/contract/host_answers.json`.
pub fn contract_table() -> Vec<ContractCase> {
    let table: Map<String, Value> =
        serde_json::from_str(include_str!("../../../tests/contract/host_answers.json"))
            .expect("the contract table is valid JSON");
    serde_json::from_value(table["cases"].clone()).expect("the contract table's rows are valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_or_unreadable_approval_denies() {
        assert_eq!(
            approval_or_deny(Err("the callback raised".into())),
            Approval::Deny
        );
        assert_eq!(approval_or_deny(Ok(json!("perhaps"))), Approval::Deny);
        assert_eq!(approval_or_deny(Ok(json!({"allow": true}))), Approval::Deny);
        assert_eq!(approval_or_deny(Ok(json!("always"))), Approval::AllowAlways);
        assert_eq!(approval_or_deny(Ok(json!(true))), Approval::AllowOnce);
    }

    #[test]
    fn every_answer_of_the_contract_table_gives_what_the_table_says() {
        let cases = contract_table();
        assert!(cases.len() >= 30, "{} rows", cases.len());
        for case in cases {
            let got = read(case.kind, case.answer.clone());
            match (&case.accepted, &case.refused, got) {
                (Some(want), None, Ok(v)) => {
                    assert_eq!(&v, want, "{:?} {}: {}", case.kind, case.about, case.answer)
                }
                (None, Some(kind), Err(e)) => {
                    assert_eq!(e.kind().as_str(), kind, "{:?} {}", case.kind, case.about);
                    if let Some(words) = &case.says {
                        assert!(e.to_string().contains(words), "{}: {e}", case.about);
                    }
                }
                (_, _, got) => panic!(
                    "{:?} {} ({}): the table says accepted {:?} / refused {:?}, core gave {got:?}",
                    case.kind, case.about, case.answer, case.accepted, case.refused
                ),
            }
        }
    }
}
