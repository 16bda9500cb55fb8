//! A line a stdio server writes, as the direct path reads it: the reply to direct request N,
//! progress on it, or anything else (which goes to rmcp). Read without parsing the line where
//! it is written the way servers usually write it, with serde otherwise; the property tests
//! check that both readings agree on generated lines in any key order, escaping and cut.

use serde::Deserialize;
use serde_json::value::RawValue;

/// Direct ids, and the progress tokens of direct requests, are `"mcpmux-N"`.
pub(crate) const TOKEN_PREFIX: &str = "mcpmux-";

/// The same, as it starts in JSON.
pub(crate) const ID_PREFIX: &str = "\"mcpmux-";

#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ProgressProbe<'a> {
    #[serde(borrow, rename = "progressToken")]
    progress_token: &'a RawValue,
}

/// What a line from the server is to the direct side.
#[derive(Debug, PartialEq)]
pub(crate) enum Kind {
    /// The reply to direct request N.
    Reply(u64),
    /// Progress on direct request N.
    Progress(u64),
    Other,
}

/// Whether `line` is a reply to, or progress on, a direct request.
pub(crate) fn classify(line: &[u8]) -> Kind {
    if let Some(id) = leading_reply_id(line) {
        return Kind::Reply(id);
    }
    let Ok(probe) = serde_json::from_slice::<Probe>(line) else {
        return Kind::Other;
    };
    match probe.method.as_deref() {
        None => probe
            .id
            .and_then(direct_id)
            .map_or(Kind::Other, Kind::Reply),
        Some("notifications/progress") => probe
            .params
            .and_then(|p| serde_json::from_str::<ProgressProbe>(p.get()).ok())
            .and_then(|p| direct_id(p.progress_token))
            .map_or(Kind::Other, Kind::Progress),
        Some(_) => Kind::Other,
    }
}

/// The id of a reply to a direct request written the way servers usually write one, read
/// without scanning a possibly large result: `jsonrpc` then `id` then `result` or `error` (as
/// rmcp and the Python SDK write it), `id` first (keys sorted, as a `serde_json::Value` writes
/// it), or `result` or `error` first and `jsonrpc` and `id` last (the TypeScript SDK).
fn leading_reply_id(line: &[u8]) -> Option<u64> {
    const JSONRPC_FIRST: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":\"mcpmux-";
    const ID_FIRST: &[u8] = b"{\"id\":\"mcpmux-";
    if let Some(rest) = line.strip_prefix(JSONRPC_FIRST) {
        return id_before(rest, b"\",");
    }
    if let Some(rest) = line.strip_prefix(ID_FIRST) {
        return id_before(rest, b"\",\"jsonrpc\":\"2.0\",");
    }
    trailing_reply_id(line)
}

/// N, from `N` + `between` + `"result":` or `"error":` at the start of `rest`.
fn id_before(rest: &[u8], between: &[u8]) -> Option<u64> {
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let after = rest[digits..].strip_prefix(between)?;
    if !(after.starts_with(b"\"result\":") || after.starts_with(b"\"error\":")) {
        return None;
    }
    decimal(&rest[..digits])
}

/// The id of `{"result":...,"jsonrpc":"2.0","id":"mcpmux-N"}` (or `error`): the closing brace
/// is the object's own, so the keys before it are top-level ones.
fn trailing_reply_id(line: &[u8]) -> Option<u64> {
    const ID_LAST: &[u8] = b",\"jsonrpc\":\"2.0\",\"id\":\"mcpmux-";
    if !(line.starts_with(b"{\"result\":") || line.starts_with(b"{\"error\":")) {
        return None;
    }
    let rest = line.strip_suffix(b"\"}")?;
    let digits = rest.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let (rest, number) = rest.split_at(rest.len() - digits);
    rest.strip_suffix(ID_LAST)?;
    decimal(number)
}

/// The value of ASCII decimal `digits` (at least one), if it fits.
fn decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

/// N, where `raw` is the JSON string `"mcpmux-N"`.
pub(crate) fn direct_id(raw: &RawValue) -> Option<u64> {
    raw.get()
        .strip_prefix(ID_PREFIX)?
        .strip_suffix('"')?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_to_direct_requests_are_recognised_in_any_field_order() {
        use Kind::{Other, Progress, Reply};
        let cases: &[(&str, Kind)] = &[
            (
                r#"{"jsonrpc":"2.0","id":"mcpmux-7","result":{"content":[]}}"#,
                Reply(7),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"mcpmux-12","error":{"code":1,"message":"x"}}"#,
                Reply(12),
            ),
            (r#"{"result":{},"id":"mcpmux-3","jsonrpc":"2.0"}"#, Reply(3)),
            // As the TypeScript SDK writes them.
            (
                r#"{"result":{"content":[{"type":"text","text":"}"}]},"jsonrpc":"2.0","id":"mcpmux-31"}"#,
                Reply(31),
            ),
            (
                r#"{"error":{"code":1,"message":"x"},"jsonrpc":"2.0","id":"mcpmux-32"}"#,
                Reply(32),
            ),
            // Only the object's own last keys count.
            (
                r#"{"result":{"a":{"jsonrpc":"2.0","id":"mcpmux-33"}},"jsonrpc":"2.0","id":7}"#,
                Other,
            ),
            (
                r#"{"method":"x","params":{},"jsonrpc":"2.0","id":"mcpmux-34"}"#,
                Other,
            ),
            // Keys sorted, as serde_json's maps write them.
            (
                r#"{"id":"mcpmux-15","jsonrpc":"2.0","result":{"content":[]}}"#,
                Reply(15),
            ),
            (
                r#"{"error":{"code":1,"message":"x"},"id":"mcpmux-16","jsonrpc":"2.0"}"#,
                Reply(16),
            ),
            (
                r#"{"id":"mcpmux-99999999999999999999","jsonrpc":"2.0","result":{}}"#,
                Other,
            ),
            (
                r#"{ "jsonrpc": "2.0", "id": "mcpmux-4", "result": {} }"#,
                Reply(4),
            ),
            // rmcp's own requests and the server's requests stay with rmcp.
            (r#"{"jsonrpc":"2.0","id":5,"result":{}}"#, Other),
            (
                r#"{"jsonrpc":"2.0","id":"mcpmux-9","method":"ping"}"#,
                Other,
            ),
            (
                r#"{"id":"mcpmux-9","jsonrpc":"2.0","method":"ping"}"#,
                Other,
            ),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
                Other,
            ),
            (r#"{"jsonrpc":"2.0","id":"mcpmux-","result":{}}"#, Other),
            (r#"{"jsonrpc":"2.0","id":"other-1","result":{}}"#, Other),
            ("not json", Other),
            // Progress on a direct request: noted, and left for rmcp (the progress event).
            (
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpmux-8","progress":1}}"#,
                Progress(8),
            ),
            (
                r#"{"method":"notifications/progress","params":{"progress":2,"progressToken":"mcpmux-21"},"jsonrpc":"2.0"}"#,
                Progress(21),
            ),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1}}"#,
                Other,
            ),
        ];
        for (line, want) in cases {
            assert_eq!(classify(line.as_bytes()), *want, "{line}");
        }
    }

    mod properties {
        use super::*;
        use crate::arbitrary;
        use proptest::prelude::*;
        use serde_json::{Value, json};

        /// What a line is by serde's reading alone: a reply to `mcpmux-N` (no method), or
        /// progress on it, or neither.
        fn by_serde(line: &[u8]) -> Kind {
            let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(line) else {
                return Kind::Other;
            };
            let number = |v: Option<&Value>| {
                v.and_then(Value::as_str)
                    .and_then(|s| s.strip_prefix("mcpmux-"))
                    .and_then(|n| n.parse::<u64>().ok())
            };
            match message.get("method").map(|m| m.as_str()) {
                None => number(message.get("id")).map_or(Kind::Other, Kind::Reply),
                Some(Some("notifications/progress")) => {
                    number(message.get("params").and_then(|p| p.get("progressToken")))
                        .map_or(Kind::Other, Kind::Progress)
                }
                Some(_) => Kind::Other,
            }
        }

        /// The digits after `mcpmux-`: most a number, some past u64 or not digits at all.
        fn digits() -> impl Strategy<Value = String> + Clone {
            prop_oneof![
                4 => any::<u64>().prop_map(|n| n.to_string()),
                1 => Just("18446744073709551616".to_string()),
                1 => Just("007".to_string()),
                1 => Just("+5".to_string()),
                1 => Just(String::new()),
                1 => "[0-9]{1,3}[a-z\\\"]".prop_map(|s| s),
            ]
        }

        /// A line a server writes: a reply (result or error) in one of the orders servers
        /// write, progress, a request of its own, or a notification.
        fn line() -> impl Strategy<Value = String> {
            let id = digits().prop_map(|d| Value::from(format!("mcpmux-{d}")));
            let result = prop_oneof![
                arbitrary::value().prop_map(|v| ("result", v)),
                arbitrary::value()
                    .prop_map(|d| ("error", json!({"code": -1, "message": "x", "data": d}))),
            ];
            let reply = (id.clone(), result, 0..4usize, arbitrary::style()).prop_map(
                |(id, (key, body), order, style)| {
                    let version = ("jsonrpc", Value::from("2.0"));
                    let members = match order {
                        0 => vec![version, ("id", id), (key, body)],
                        1 => vec![("id", id), version, (key, body)],
                        2 => vec![(key, body), version, ("id", id)],
                        _ => vec![(key, body), ("id", id), version],
                    };
                    arbitrary::object(&members, style)
                },
            );
            let progress = (id.clone(), arbitrary::style()).prop_map(|(token, style)| {
                let params = json!({"progressToken": token, "progress": 1});
                let members = [
                    ("jsonrpc", Value::from("2.0")),
                    ("method", Value::from("notifications/progress")),
                    ("params", params),
                ];
                arbitrary::object(&members, style)
            });
            let request =
                (id, arbitrary::string(12), arbitrary::style()).prop_map(|(id, method, style)| {
                    let members = [
                        ("jsonrpc", Value::from("2.0")),
                        ("id", id),
                        ("method", Value::from(method)),
                        ("params", json!({})),
                    ];
                    arbitrary::object(&members, style)
                });
            prop_oneof![4 => reply, 2 => progress, 1 => request]
        }

        /// `line`, classified as serde does when it is JSON; when not, not unless its own
        /// id says so.
        fn check(line: &[u8]) -> Result<(), TestCaseError> {
            let ours = classify(line);
            if serde_json::from_slice::<Value>(line).is_ok() {
                prop_assert_eq!(ours, by_serde(line), "{}", String::from_utf8_lossy(line));
            } else if let Kind::Reply(n) | Kind::Progress(n) = ours {
                // Some `"mcpmux-N"` in the line names request n, as a direct id reads.
                let named = memchr::memmem::find_iter(line, b"\"mcpmux-").any(|at| {
                    let rest = &line[at + 8..];
                    let end = rest.iter().position(|b| *b == b'"').unwrap_or(rest.len());
                    std::str::from_utf8(&rest[..end])
                        .ok()
                        .and_then(|d| d.parse().ok())
                        == Some(n)
                });
                prop_assert!(named, "{}", String::from_utf8_lossy(line));
            } else {
                prop_assert_eq!(ours, Kind::Other);
            }
            Ok(())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            /// The hand-read shortcuts never tell a line otherwise than serde reads it.
            #[test]
            fn a_line_is_what_serde_reads_it_as(line in line()) {
                prop_assert_eq!(classify(line.as_bytes()), by_serde(line.as_bytes()), "{}", line);
            }

            /// Nor does a line broken anywhere, or noise, while it is JSON. A line that is not
            /// JSON but starts and ends as a reply to request N does is taken as N's reply
            /// without reading its middle (what makes the shortcut short): N's call then fails
            /// on reading it, where serde's way would have left the call waiting for its time
            /// limit (and serde's own probe skips what it does not read, invalid UTF-8 in it
            /// too, so a broken line may be N's progress). Never another request's.
            #[test]
            fn a_broken_line_is_what_serde_reads_it_as(
                line in line(),
                at in any::<usize>(),
                how in any::<u8>(),
            ) {
                let broken = arbitrary::mutated(line.as_bytes(), at, how);
                check(&broken)?;
            }

            #[test]
            fn noise_is_what_serde_reads_it_as(bytes in prop::collection::vec(any::<u8>(), 0..120)) {
                check(&bytes)?;
            }
        }
    }
}
