//! Which call a server's request belongs to, where Streamable HTTP tells: a server asks its
//! client for a sample, a form or its roots on the event stream of the POST that carries the
//! call it is working on. The pool marks a call it sends with a number of its own, under
//! [`RELATED_CALL_META`] in the request's `_meta`; the transport takes the mark out before the
//! request leaves (the server never sees it) and puts it on every request the server sends on
//! that call's stream, where the pool's handlers read it. Requests on the session's shared
//! stream, and on every other transport, carry none.

use futures::StreamExt;
use futures::stream::BoxStream;
use rmcp::model::{ClientJsonRpcMessage, GetMeta, JsonRpcMessage};
use rmcp::transport::streamable_http_client::SseError;

/// The `_meta` key of a call's number, on the call going out and on the server's requests
/// coming back on its stream.
pub(crate) const RELATED_CALL_META: &str = "io.github.mcpmux/relatedCall";

type SseStream = BoxStream<'static, Result<sse_stream::Sse, SseError>>;

/// Takes the number out of `message`'s `_meta`, if the pool marked it.
pub(crate) fn take(message: &mut ClientJsonRpcMessage) -> Option<u64> {
    let JsonRpcMessage::Request(request) = message else {
        return None;
    };
    let meta = request.request.get_meta_mut();
    meta.remove(RELATED_CALL_META)?.as_u64()
}

/// The number a server's request carries in `meta`, if it came on a marked call's stream.
pub(crate) fn of(meta: &serde_json::Map<String, serde_json::Value>) -> Option<u64> {
    meta.get(RELATED_CALL_META)?.as_u64()
}

/// `stream`, with `call` put on each request of the server in it.
pub(crate) fn mark(stream: SseStream, call: u64) -> SseStream {
    stream
        .map(move |event| {
            event.map(|mut event| {
                if let Some(data) = event.data.as_mut()
                    && let Some(marked) = marked(data, call)
                {
                    *data = marked;
                }
                event
            })
        })
        .boxed()
}

/// `data` with `call` in its `params._meta`, when it is a request (a `method` and an `id`);
/// `None` for anything else. Most events are results, often large: they are told by a
/// search for `"method"` and left unparsed.
fn marked(data: &str, call: u64) -> Option<String> {
    memchr::memmem::find(data.as_bytes(), b"\"method\"")?;
    let mut message: serde_json::Value = serde_json::from_str(data).ok()?;
    let object = message.as_object_mut()?;
    if !object.contains_key("id") || !object.get("method")?.is_string() {
        return None;
    }
    let params = object
        .entry("params")
        .or_insert_with(|| serde_json::json!({}))
        .as_object_mut()?;
    let meta = params
        .entry("_meta")
        .or_insert_with(|| serde_json::json!({}))
        .as_object_mut()?;
    meta.insert(RELATED_CALL_META.into(), call.into());
    serde_json::to_string(&message).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_servers_requests_are_marked() {
        let request = r#"{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"messages":[]}}"#;
        let sent: serde_json::Value = serde_json::from_str(&marked(request, 42).unwrap()).unwrap();
        assert_eq!(sent["params"]["_meta"][RELATED_CALL_META], json!(42));
        assert_eq!(sent["params"]["messages"], json!([]));
        let roots = r#"{"jsonrpc":"2.0","id":"r","method":"roots/list"}"#;
        let sent: serde_json::Value = serde_json::from_str(&marked(roots, 1).unwrap()).unwrap();
        assert_eq!(sent["params"]["_meta"][RELATED_CALL_META], json!(1));
        for other in [
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"\"method\""}]}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
            "not json \"method\"",
        ] {
            assert_eq!(marked(other, 1), None, "{other}");
        }
    }

    #[test]
    fn the_mark_is_taken_off_the_call_before_it_leaves() {
        let mut message: ClientJsonRpcMessage = serde_json::from_value(json!({
            "jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "t", "_meta": {RELATED_CALL_META: 9, "progressToken": 1}}
        }))
        .unwrap();
        assert_eq!(take(&mut message), Some(9));
        let sent = serde_json::to_value(&message).unwrap();
        assert_eq!(sent["params"]["_meta"], json!({"progressToken": 1}));
        assert_eq!(take(&mut message), None);
    }
}
