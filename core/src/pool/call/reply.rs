//! Reading direct `tools/call` replies.

use rmcp::model::{CallToolResult, CreateTaskResult, InputRequiredResult, ServerResult, Task};
use rmcp::service::ServiceError;

use crate::transport::direct::{Reply, TypedReply};
use crate::wire::plain_text_reply;

/// What a server's answer to `tools/call` asks of the call: done, or another round with the
/// host's input.
#[derive(Debug)]
pub(in crate::pool) enum Answer {
    Result(CallToolResult),
    InputRequired(InputRequiredResult),
    /// The server runs the call as a task (see `tasks.rs`).
    Task(Task),
}

impl Answer {
    /// The answer in an rmcp result, which may be of a type `tools/call` never answers.
    pub(in crate::pool) fn of(result: ServerResult) -> Option<Answer> {
        match result {
            ServerResult::CallToolResult(r) => Some(Answer::Result(r)),
            ServerResult::InputRequiredResult(r) => Some(Answer::InputRequired(r)),
            ServerResult::CreateTaskResult(r) => Some(Answer::Task(r.task)),
            _ => None,
        }
    }
}

/// Reads a direct `tools/call` reply: a final result, a 2026-07-28 request for input, or the
/// server's JSON-RPC error. `Err` says what was wrong with a reply that is none of those.
/// Read straight into [`Answer`], not rmcp's `ServerResult`: an enum of every result, several
/// times its size, moved on every call.
pub(in crate::pool) fn call_reply(
    line: &[u8],
) -> std::result::Result<Result<Answer, ServiceError>, String> {
    if let Some(r) = plain_text_reply::read(line) {
        return Ok(Ok(Answer::Result(r)));
    }
    // One pass for the usual final result; anything else is read again, more slowly.
    if let Ok(reply) = serde_json::from_slice::<TypedReply<CallToolResult>>(line) {
        match (reply.result, reply.error) {
            (_, Some(error)) => return Ok(Err(ServiceError::McpError(error))),
            (Some(r), None) => return Ok(Ok(Answer::Result(r))),
            (None, None) => {}
        }
    }
    let reply: Reply =
        serde_json::from_slice(line).map_err(|e| format!("unreadable reply: {e}"))?;
    match (reply.result, reply.error) {
        (_, Some(error)) => Ok(Err(ServiceError::McpError(error))),
        (Some(raw), None) => match serde_json::from_str::<CallToolResult>(raw.get()) {
            Ok(r) => Ok(Ok(Answer::Result(r))),
            Err(e) => match serde_json::from_str::<InputRequiredResult>(raw.get()) {
                Ok(r) => Ok(Ok(Answer::InputRequired(r))),
                // The tasks extension: the server runs the call as a task.
                Err(_) => match serde_json::from_str::<CreateTaskResult>(raw.get()) {
                    Ok(r) => Ok(Ok(Answer::Task(r.task))),
                    Err(_) => Err(format!("not a tool result: {e}")),
                },
            },
        },
        (None, None) => Err("a reply with neither result nor error".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What rmcp's own reading makes of a reply's result.
    fn general(line: &str) -> CallToolResult {
        let reply: serde_json::Value = serde_json::from_str(line).unwrap();
        serde_json::from_value(reply["result"].clone()).unwrap()
    }

    #[test]
    fn plain_text_results_read_as_rmcp_reads_them() {
        for line in [
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"text","text":"hi"}]}}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"text","text":"a"},{"text":"b\n\u00e9","type":"text"}],"isError":true}}"#,
            r#"{"result":{"isError":false,"content":[],"resultType":"complete"},"jsonrpc":"2.0","id":"mcpmux-2"}"#,
        ] {
            let fast = plain_text_reply::read(line.as_bytes()).expect(line);
            assert_eq!(fast, general(line), "{line}");
            match call_reply(line.as_bytes()) {
                Ok(Ok(Answer::Result(r))) => assert_eq!(r, fast),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn anything_more_than_plain_text_takes_the_general_path() {
        for line in [
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"text","text":"x","annotations":{"priority":1}}]}}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[],"_meta":{"k":1}}}"#,
        ] {
            assert!(plain_text_reply::read(line.as_bytes()).is_none(), "{line}");
            match call_reply(line.as_bytes()) {
                Ok(Ok(Answer::Result(r))) => assert_eq!(r, general(line)),
                other => panic!("{other:?}"),
            }
        }
        // Not a final result at all.
        let input = r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"resultType":"input_required","inputRequests":{}}}"#;
        assert!(plain_text_reply::read(input.as_bytes()).is_none());
        let error = r#"{"jsonrpc":"2.0","id":"mcpmux-1","error":{"code":-32602,"message":"bad"}}"#;
        assert!(plain_text_reply::read(error.as_bytes()).is_none());
        assert!(matches!(
            call_reply(error.as_bytes()),
            Ok(Err(ServiceError::McpError(_)))
        ));
    }
}
