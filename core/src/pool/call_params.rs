//! `tools/call` params written as JSON text for the direct path, as serde writes them.
//!
//! serde_json writes each key and string through its general escaper, a byte at a time with
//! a write per piece; for the few short strings of a call that cost more than the rest of
//! writing the request. Here the struct's keys are written as the text they are, and the
//! keys and string values of `_meta` and the arguments are copied as they are when nothing in
//! them needs an escape; anything nested is serde's. The tests check the bytes are serde's.

use rmcp::model::{CallToolRequestParams, JsonObject};
use serde_json::Value;

use crate::json_text::write_str;

/// Writes `params` as `serde_json::to_writer` would.
pub(super) fn write(params: &CallToolRequestParams, out: &mut Vec<u8>) -> serde_json::Result<()> {
    // A retried round carries more fields: serde writes those, in its order.
    if params.input_responses.is_some() || params.request_state.is_some() {
        return serde_json::to_writer(out, params);
    }
    out.push(b'{');
    if let Some(meta) = &params.meta {
        out.extend_from_slice(b"\"_meta\":");
        write_object(&meta.0.0, out)?;
        out.push(b',');
    }
    out.extend_from_slice(b"\"name\":");
    write_str(&params.name, out);
    if let Some(arguments) = &params.arguments {
        out.extend_from_slice(b",\"arguments\":");
        write_object(arguments, out)?;
    }
    out.push(b'}');
    Ok(())
}

/// Writes `object` as serde_json does, its keys and string values past serde's escaper.
fn write_object(object: &JsonObject, out: &mut Vec<u8>) -> serde_json::Result<()> {
    out.push(b'{');
    for (i, (key, value)) in object.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(key, out);
        out.push(b':');
        match value {
            Value::String(s) => write_str(s, out),
            other => serde_json::to_writer(&mut *out, other)?,
        }
    }
    out.push(b'}');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(params: &CallToolRequestParams) -> String {
        let mut out = Vec::new();
        write(params, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn writes_what_serde_writes() {
        let json = |v: serde_json::Value| serde_json::from_value(v).unwrap();
        for params in [
            json(serde_json::json!({"name": "echo"})),
            json(serde_json::json!({"name": "echo", "arguments": {}})),
            json(serde_json::json!({
                "name": "a \"quoted\"\nname \\ é",
                "arguments": {"text": "hello", "n": 1, "nested": {"list": [1, "two", null]},
                    "esc\u{1}aped \"key\"": "tab\there", "": ""},
                "_meta": {"progressToken": "mcpmux-7", "traceparent": "00-ab-cd-01"},
            })),
            json(serde_json::json!({
                "name": "echo",
                "arguments": {"text": "again"},
                "_meta": {"progressToken": "mcpmux-8"},
                "inputResponses": {"ask": {"action": "accept", "content": {"ok": true}}},
                "requestState": "sealed-state",
            })),
            json(serde_json::json!({"name": "echo", "requestState": "s"})),
        ] {
            let ours: CallToolRequestParams = params;
            assert_eq!(written(&ours), serde_json::to_string(&ours).unwrap());
        }
    }
}
