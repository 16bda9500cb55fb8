//! `tools/call` params written as JSON text for the direct path, as serde writes them.
//!
//! serde_json writes each key and string through its general escaper, a byte at a time with
//! a write per piece; for the few short strings of a call that cost more than the rest of
//! writing the request. Here the struct's keys are written as the text they are, and the
//! keys and string values of `_meta` and the arguments are copied as they are when nothing in
//! them needs an escape; anything nested is serde's. The call's progress token is written
//! into `_meta` here too, rather than put in the params' map (an allocation for its key, a
//! tree node, and the map's drop after every call). The tests check the result is serde's.

use rmcp::model::{CallToolRequestParams, JsonObject};
use serde_json::Value;

use crate::json_text::write_str;

/// The key of a request's progress token in its `_meta`.
const PROGRESS_TOKEN: &str = "progressToken";

/// Writes `params` as `serde_json::to_writer` would, with `progress_token` in `_meta` in place
/// of any the params hold (first, where serde would sort it among the other keys).
pub(super) fn write(
    params: &CallToolRequestParams,
    progress_token: Option<&str>,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    out.push(b'{');
    let meta = params.meta.as_ref().map(|m| &m.0.0);
    if meta.is_some() || progress_token.is_some() {
        out.extend_from_slice(b"\"_meta\":");
        write_meta(meta, progress_token, out)?;
        out.push(b',');
    }
    out.extend_from_slice(b"\"name\":");
    write_str(&params.name, out);
    if let Some(arguments) = &params.arguments {
        out.extend_from_slice(b",\"arguments\":");
        write_object(arguments.iter(), out)?;
    }
    // A retried round's answers to the server's questions, and the state it echoes.
    if let Some(responses) = &params.input_responses {
        out.extend_from_slice(b",\"inputResponses\":");
        serde_json::to_writer(&mut *out, responses)?;
    }
    if let Some(state) = &params.request_state {
        out.extend_from_slice(b",\"requestState\":");
        write_str(state, out);
    }
    out.push(b'}');
    Ok(())
}

/// `_meta`: the progress token, then the map's other keys.
fn write_meta(
    meta: Option<&JsonObject>,
    progress_token: Option<&str>,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    let Some(token) = progress_token else {
        return write_object(meta.into_iter().flatten(), out);
    };
    out.extend_from_slice(b"{\"progressToken\":");
    write_str(token, out);
    for (key, value) in meta.into_iter().flatten() {
        if key != PROGRESS_TOKEN {
            out.push(b',');
            write_member(key, value, out)?;
        }
    }
    out.push(b'}');
    Ok(())
}

/// Writes an object of `members` as serde_json writes a map.
fn write_object<'a>(
    members: impl Iterator<Item = (&'a String, &'a Value)>,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    out.push(b'{');
    for (i, (key, value)) in members.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_member(key, value, out)?;
    }
    out.push(b'}');
    Ok(())
}

/// `"key":value`, the key and a string value past serde's escaper.
fn write_member(key: &str, value: &Value, out: &mut Vec<u8>) -> serde_json::Result<()> {
    write_str(key, out);
    out.push(b':');
    match value {
        Value::String(s) => write_str(s, out),
        other => serde_json::to_writer(&mut *out, other)?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(params: &CallToolRequestParams, token: Option<&str>) -> String {
        let mut out = Vec::new();
        write(params, token, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn cases() -> Vec<CallToolRequestParams> {
        let json = |v: serde_json::Value| serde_json::from_value(v).unwrap();
        vec![
            json(serde_json::json!({"name": "echo"})),
            json(serde_json::json!({"name": "echo", "arguments": {}})),
            json(serde_json::json!({
                "name": "a \"quoted\"\nname \\ é",
                "arguments": {"text": "hello", "n": 1, "nested": {"list": [1, "two", null]},
                    "esc\u{1}aped \"key\"": "tab\there", "": ""},
                "_meta": {"progressToken": "theirs", "traceparent": "00-ab-cd-01", "a": {"b": 1}},
            })),
            json(serde_json::json!({
                "name": "echo",
                "arguments": {"text": "again"},
                "_meta": {"io.modelcontextprotocol/logLevel": "info"},
                "inputResponses": {"ask": {"action": "accept", "content": {"ok": true}}},
                "requestState": "sealed \"state\"",
            })),
            json(serde_json::json!({"name": "echo", "requestState": "s", "_meta": {}})),
        ]
    }

    #[test]
    fn writes_what_serde_writes() {
        for params in cases() {
            assert_eq!(
                written(&params, None),
                serde_json::to_string(&params).unwrap()
            );
        }
    }

    /// With a progress token: the JSON serde writes once the token is put in `_meta` (its
    /// keys in another order, which JSON does not tell apart).
    #[test]
    fn writes_the_progress_token_in_place_of_any_other() {
        for mut params in cases() {
            let ours: Value = serde_json::from_str(&written(&params, Some("mcpmux-7"))).unwrap();
            params
                .meta
                .get_or_insert_default()
                .insert(PROGRESS_TOKEN.into(), "mcpmux-7".into());
            assert_eq!(ours, serde_json::to_value(&params).unwrap());
        }
    }
}
