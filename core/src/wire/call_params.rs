//! `tools/call` params written as JSON text for the direct path, as serde writes them.
//!
//! serde_json writes each key and string through its general escaper, a byte at a time with
//! a write per piece; for the few short strings of a call that cost more than the rest of
//! writing the request. Here the struct's keys are written as the text they are, and the
//! keys and string values of `_meta` and the arguments are copied as they are when nothing in
//! them needs an escape; anything nested is serde's. The call's progress token is written
//! into `_meta` here too, rather than put in the params' map (an allocation for its key, a
//! tree node, and the map's drop after every call), and so are the `_meta` members a
//! 2026-07-28 session sends with every request, written as JSON once per connection
//! ([`SessionMeta`]). The tests check the result is serde's.

use std::cmp::Ordering;

use rmcp::model::{CallToolRequestParams, JsonObject, RequestMetaObject};
use serde_json::Value;
use serde_json::value::RawValue;

use super::json_text::write_str;

/// The key of a request's progress token in its `_meta`.
const PROGRESS_TOKEN: &str = "progressToken";

/// The `_meta` members a 2026-07-28 session sends with every request (the protocol version,
/// the client's info and capabilities), written as JSON once, when it connects, rather than
/// copied into every call's map as trees of values, written, and dropped again.
#[derive(Debug)]
pub(crate) struct SessionMeta {
    /// Sorted by key, as the params' own map.
    members: Vec<(String, Box<RawValue>)>,
}

impl SessionMeta {
    pub(crate) fn new(meta: &RequestMetaObject) -> serde_json::Result<SessionMeta> {
        let members = meta
            .iter()
            .map(|(key, value)| Ok((key.clone(), serde_json::value::to_raw_value(value)?)))
            .collect::<serde_json::Result<Vec<_>>>()?;
        Ok(SessionMeta { members })
    }

    /// Takes out of a call's `meta` the keys the session sets: the session's values win, as
    /// they did when they were put in the call's map over the caller's.
    pub(crate) fn take_over(&self, meta: &mut JsonObject) {
        if meta.is_empty() {
            return;
        }
        for (key, _) in &self.members {
            meta.remove(key);
        }
    }
}

/// Writes `params` as `serde_json::to_writer` would, with `progress_token` in `_meta` in place
/// of any the params hold (first, where serde would sort it among the other keys), and the
/// members of `session` among the params' own (which win where both have a key).
pub(crate) fn write(
    params: &CallToolRequestParams,
    progress_token: Option<&str>,
    session: Option<&SessionMeta>,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    out.push(b'{');
    let meta = params.meta.as_ref().map(|m| &m.0.0);
    if meta.is_some() || progress_token.is_some() || session.is_some() {
        out.extend_from_slice(b"\"_meta\":");
        let shared = session.map_or(&[][..], |s| &s.members[..]);
        write_meta(meta, progress_token, shared, out)?;
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

/// `_meta`: the progress token, then the map's other keys and the session's members, merged
/// in key order (the map's where both have a key).
fn write_meta(
    meta: Option<&JsonObject>,
    progress_token: Option<&str>,
    session: &[(String, Box<RawValue>)],
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    if progress_token.is_none() && session.is_empty() {
        return write_object(meta.into_iter().flatten(), out);
    }
    out.push(b'{');
    let mut first = true;
    let mut comma = |out: &mut Vec<u8>| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
    };
    if let Some(token) = progress_token {
        comma(out);
        out.extend_from_slice(b"\"progressToken\":");
        write_str(token, out);
    }
    let mut own = meta
        .into_iter()
        .flatten()
        .filter(|(key, _)| progress_token.is_none() || key.as_str() != PROGRESS_TOKEN)
        .peekable();
    let mut shared = session.iter().peekable();
    loop {
        let order = match (own.peek(), shared.peek()) {
            (None, None) => break,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((key, _)), Some((theirs, _))) => key.as_str().cmp(theirs.as_str()),
        };
        if order == Ordering::Equal {
            // The call's own value stands.
            shared.next();
        }
        comma(out);
        if order != Ordering::Greater {
            if let Some((key, value)) = own.next() {
                write_member(key, value, out)?;
            }
        } else if let Some((key, value)) = shared.next() {
            write_str(key, out);
            out.push(b':');
            out.extend_from_slice(value.get().as_bytes());
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
        written_in(params, token, None)
    }

    fn written_in(
        params: &CallToolRequestParams,
        token: Option<&str>,
        session: Option<&SessionMeta>,
    ) -> String {
        let mut out = Vec::new();
        write(params, token, session, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// What a 2026-07-28 session sends with each request, with a key sorted before, between
    /// and after the cases' own.
    fn session() -> RequestMetaObject {
        let mut meta = RequestMetaObject::default();
        for (key, value) in [
            (
                "io.modelcontextprotocol/clientInfo",
                serde_json::json!({"name": "mcpmux", "version": "1"}),
            ),
            (
                "io.modelcontextprotocol/protocolVersion",
                serde_json::json!("2026-07-28"),
            ),
            ("0-first", serde_json::json!([1, "é\n"])),
            (
                "traceparent",
                serde_json::json!("the session's, not the call's"),
            ),
            ("zz-last", serde_json::json!(null)),
        ] {
            meta.insert(key.into(), value);
        }
        meta
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

    /// A session's members: serde's bytes for the params with them in `_meta` (the call's
    /// own value where both have a key), with and without a progress token.
    #[test]
    fn writes_a_sessions_members_among_the_calls_own() {
        let shared = SessionMeta::new(&session()).unwrap();
        for mut params in cases() {
            let with_token: Value =
                serde_json::from_str(&written_in(&params, Some("mcpmux-7"), Some(&shared)))
                    .unwrap();
            let ours = written_in(&params, None, Some(&shared));
            let mine = params.meta.get_or_insert_default();
            for (key, value) in session().iter() {
                mine.entry(key.clone()).or_insert_with(|| value.clone());
            }
            assert_eq!(ours, serde_json::to_string(&params).unwrap());
            params
                .meta
                .get_or_insert_default()
                .insert(PROGRESS_TOKEN.into(), "mcpmux-7".into());
            assert_eq!(with_token, serde_json::to_value(&params).unwrap());
        }
    }

    /// The session's values win over what a caller put in `_meta`, but for what the call sets
    /// after `take_over` (its own client capabilities).
    #[test]
    fn a_sessions_values_take_over_the_callers() {
        let shared = SessionMeta::new(&session()).unwrap();
        let mut meta = JsonObject::new();
        meta.insert("traceparent".into(), "the caller's".into());
        meta.insert(
            "io.modelcontextprotocol/protocolVersion".into(),
            "1999".into(),
        );
        meta.insert("kept".into(), true.into());
        shared.take_over(&mut meta);
        meta.insert("zz-last".into(), "this call's".into());
        let params: CallToolRequestParams =
            serde_json::from_value(serde_json::json!({"name": "echo", "_meta": meta})).unwrap();
        let sent: Value = serde_json::from_str(&written_in(&params, None, Some(&shared))).unwrap();
        let sent = &sent["_meta"];
        assert_eq!(sent["traceparent"], "the session's, not the call's");
        assert_eq!(
            sent["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(sent["kept"], true);
        assert_eq!(sent["zz-last"], "this call's");
        assert_eq!(sent["0-first"], serde_json::json!([1, "é\n"]));
    }

    mod properties {
        use proptest::prelude::*;

        use super::*;
        use crate::arbitrary;

        /// Any call a caller may make: any name, arguments, `_meta` and state.
        fn params() -> impl Strategy<Value = CallToolRequestParams> {
            (
                arbitrary::string(16),
                proptest::option::of(arbitrary::map()),
                proptest::option::of(arbitrary::map()),
                proptest::option::of(arbitrary::string(12)),
            )
                .prop_map(|(name, arguments, meta, state)| {
                    let mut call = serde_json::json!({ "name": name });
                    if let Some(arguments) = arguments {
                        call["arguments"] = Value::Object(arguments);
                    }
                    if let Some(meta) = meta {
                        call["_meta"] = Value::Object(meta);
                    }
                    if let Some(state) = state {
                        call["requestState"] = state.into();
                    }
                    serde_json::from_value(call).unwrap()
                })
        }

        proptest! {
            #[test]
            fn any_call_is_written_as_serde_writes_it(params in params()) {
                prop_assert_eq!(written(&params, None), serde_json::to_string(&params).unwrap());
            }

            /// With a progress token and a session's members: what serde writes once both are
            /// put in `_meta` (the session's values over the caller's, the token over both).
            #[test]
            fn a_token_and_a_session_are_written_as_serde_would_put_them(
                params in params(),
                token in arbitrary::string(8),
            ) {
                let session = SessionMeta::new(&session()).unwrap();
                let sent: Value =
                    serde_json::from_str(&written_in(&params, Some(&token), Some(&session)))
                        .unwrap();
                let mut expected = serde_json::to_value(&params).unwrap();
                let mut meta = expected["_meta"].as_object().cloned().unwrap_or_default();
                for (key, value) in self::session().iter() {
                    meta.insert(key.clone(), value.clone());
                }
                meta.insert("progressToken".into(), token.into());
                expected["_meta"] = Value::Object(meta);
                prop_assert_eq!(sent, expected);
            }
        }
    }
}
