//! A served call's answer as the JSON-RPC line rmcp would write. The most common answer, one
//! block of plain text, is written by hand: through serde it passes rmcp's untagged message
//! and result enums and the tagged content enum, which cost the front as much as reading the
//! call did. Any other answer goes through serde. The bytes are serde's either way (the tests
//! compare the two).

use rmcp::model::{
    CallToolResult, ContentBlock, JsonRpcMessage, RequestId, ResultType, ServerJsonRpcMessage,
    ServerResult,
};

use super::json_text::write_str;

/// Appends `message` to `out` as one JSON text (no newline).
pub(crate) fn write(message: &ServerJsonRpcMessage, out: &mut Vec<u8>) -> serde_json::Result<()> {
    if let JsonRpcMessage::Response(response) = message
        && let ServerResult::CallToolResult(result) = &response.result
        && let Some(text) = plain_text(result)
    {
        write_plain_text(&response.id, result, text, out);
        return Ok(());
    }
    serde_json::to_writer(out, message)
}

/// The text of a result that is one block of text and nothing else serde would write beside
/// it but `resultType: "complete"` and `isError`.
fn plain_text(result: &CallToolResult) -> Option<&str> {
    let [ContentBlock::Text(block)] = result.content.as_slice() else {
        return None;
    };
    let plain = block.meta.is_none()
        && block.annotations.is_none()
        && result.structured_content.is_none()
        && result.meta.is_none()
        && result
            .result_type
            .as_ref()
            .is_none_or(|t| *t == ResultType::COMPLETE);
    plain.then_some(block.text.as_str())
}

/// `{"jsonrpc":"2.0","id":..,"result":{..}}` with the result's fields in serde's order.
fn write_plain_text(id: &RequestId, result: &CallToolResult, text: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    match id {
        RequestId::Number(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
        RequestId::String(s) => write_str(s, out),
    }
    out.extend_from_slice(br#","result":{"#);
    if result.result_type.is_some() {
        out.extend_from_slice(br#""resultType":"complete","#);
    }
    out.extend_from_slice(br#""content":[{"type":"text","text":"#);
    write_str(text, out);
    out.extend_from_slice(b"}]");
    match result.is_error {
        Some(true) => out.extend_from_slice(br#","isError":true"#),
        Some(false) => out.extend_from_slice(br#","isError":false"#),
        None => {}
    }
    out.extend_from_slice(b"}}");
}

#[cfg(test)]
mod tests {
    use rmcp::model::{Annotations, ErrorData, MetaObject, TextContent};

    use super::*;

    fn ours(message: &ServerJsonRpcMessage) -> String {
        let mut out = Vec::new();
        write(message, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn answer(result: CallToolResult, id: RequestId) -> ServerJsonRpcMessage {
        ServerJsonRpcMessage::response(ServerResult::CallToolResult(result), id)
    }

    #[test]
    fn plain_text_answers_are_serdes_bytes() {
        let texts = [
            "hello",
            "",
            "quote \" backslash \\ slash / tab \t newline \n nul \u{0} esc \u{1b} del \u{7f}",
            "é ü 中文 😀 \u{2028}\u{2029}",
            &"long ".repeat(2000),
        ];
        let ids = [
            RequestId::Number(0),
            RequestId::Number(-7),
            RequestId::Number(i64::MAX),
            RequestId::String("mcpmux-1".into()),
            RequestId::String("a \"quoted\" \\ id\n".into()),
        ];
        for text in texts {
            for id in &ids {
                for is_error in [None, Some(false), Some(true)] {
                    for result_type in [None, Some(ResultType::COMPLETE)] {
                        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
                        result.is_error = is_error;
                        result.result_type = result_type;
                        let message = answer(result, id.clone());
                        let serde = serde_json::to_string(&message).unwrap();
                        assert_eq!(ours(&message), serde);
                    }
                }
            }
        }
    }

    #[test]
    fn every_other_answer_goes_through_serde() {
        let id = RequestId::Number(3);
        let mut annotated = TextContent::new("a");
        annotated.annotations = Some(Annotations::default());
        let mut with_meta = TextContent::new("a");
        with_meta.meta = Some(MetaObject::default());
        let mut structured = CallToolResult::success(vec![ContentBlock::text("{}")]);
        structured.structured_content = Some(serde_json::json!({}));
        let mut result_meta = CallToolResult::success(vec![ContentBlock::text("a")]);
        result_meta.meta = Some(MetaObject::default());
        let mut other_type = CallToolResult::success(vec![ContentBlock::text("a")]);
        other_type.result_type = Some(ResultType::INPUT_REQUIRED);
        let results = [
            CallToolResult::success(vec![]),
            CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::text("b")]),
            CallToolResult::success(vec![ContentBlock::image("aGk=", "image/png")]),
            CallToolResult::success(vec![ContentBlock::Text(annotated)]),
            CallToolResult::success(vec![ContentBlock::Text(with_meta)]),
            structured,
            result_meta,
            other_type,
        ];
        for result in results {
            assert!(plain_text(&result).is_none(), "{result:?}");
            let message = answer(result, id.clone());
            assert_eq!(ours(&message), serde_json::to_string(&message).unwrap());
        }
        let error = ServerJsonRpcMessage::error(ErrorData::invalid_params("no", None), Some(id));
        assert_eq!(ours(&error), serde_json::to_string(&error).unwrap());
    }

    mod properties {
        use proptest::prelude::*;

        use super::*;
        use crate::arbitrary;

        fn id() -> impl Strategy<Value = RequestId> {
            prop_oneof![
                any::<i64>().prop_map(RequestId::Number),
                arbitrary::string(10).prop_map(|s| RequestId::String(s.into())),
            ]
        }

        proptest! {
            /// A one-text answer, written by hand, is serde's bytes whatever its text and id.
            #[test]
            fn a_plain_text_answer_is_serdes_bytes(
                text in arbitrary::string(64),
                id in id(),
                is_error in proptest::option::of(any::<bool>()),
                complete in any::<bool>(),
            ) {
                let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
                result.is_error = is_error;
                result.result_type = complete.then_some(ResultType::COMPLETE);
                let message = answer(result, id);
                prop_assert_eq!(ours(&message), serde_json::to_string(&message).unwrap());
            }

            /// Any other answer (structured content, several parts) is serde's too.
            #[test]
            fn any_other_answer_is_serdes_bytes(
                texts in prop::collection::vec(arbitrary::string(16), 0..3),
                structured in proptest::option::of(arbitrary::value()),
                id in id(),
            ) {
                let blocks = texts.into_iter().map(ContentBlock::text).collect();
                let mut result = CallToolResult::success(blocks);
                result.structured_content = structured;
                let message = answer(result, id);
                prop_assert_eq!(ours(&message), serde_json::to_string(&message).unwrap());
            }
        }
    }
}
