//! Generated JSON for the property tests of the readers mcpmux writes by hand (a stdio
//! server's reply lines, the plain-text call result, the call lane's lines, SSE frames, JWTs):
//! values a server or a client may send, and the ways they may be written (any key order,
//! whitespace between tokens, `\u` escapes, `\/`), so that each reader can be compared with
//! serde on what serde reads, and fed what it never expected without panicking.

use proptest::prelude::*;
use serde_json::{Map, Value};

/// Characters a JSON reader trips on: quotes, backslashes, control characters, `/`,
/// non-ASCII, astral (a surrogate pair when escaped), the line separators JavaScript minds.
fn tricky_char() -> impl Strategy<Value = char> + Clone {
    prop_oneof![
        4 => proptest::char::range('a', 'z'),
        2 => any::<char>(),
        1 => prop::sample::select(vec![
            '"', '\\', '/', '\n', '\r', '\t', '\u{0}', '\u{1f}', '\u{7f}', 'é', '€', '😀',
            '\u{2028}', '\u{feff}', ':', ',', '{', '}', '[', ']',
        ]),
    ]
}

/// A string of up to `max` tricky characters.
pub(crate) fn string(max: usize) -> impl Strategy<Value = String> + Clone {
    prop::collection::vec(tricky_char(), 0..max).prop_map(|chars| chars.into_iter().collect())
}

/// Any JSON value, a few levels deep.
pub(crate) fn value() -> impl Strategy<Value = Value> + Clone {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        string(12).prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((string(6), inner), 0..4)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// How a writer may lay out the same value.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    /// Whitespace between tokens (spaces, tabs, newlines are not written: a line is one line).
    pub spaced: bool,
    /// Every non-ASCII character (and `/`) written as an escape.
    pub escaped: bool,
}

pub(crate) fn style() -> impl Strategy<Value = Style> + Clone {
    (any::<bool>(), any::<bool>()).prop_map(|(spaced, escaped)| Style { spaced, escaped })
}

/// `members` written as one JSON object in the order given, each value as `style` says.
pub(crate) fn object(members: &[(&str, Value)], style: Style) -> String {
    let written: Vec<(&str, String)> = members
        .iter()
        .map(|(key, value)| (*key, written(value, style)))
        .collect();
    object_of(&written, style)
}

/// `value` written as JSON in `style`.
pub(crate) fn written(value: &Value, style: Style) -> String {
    let mut out = String::new();
    write(value, style, &mut out);
    out
}

/// `members`, each value already written as JSON, as one object in the order given.
pub(crate) fn object_of(members: &[(&str, String)], style: Style) -> String {
    let mut out = String::new();
    let gap = if style.spaced { " \t" } else { "" };
    out.push('{');
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(gap);
        write_string(key, style, &mut out);
        out.push_str(gap);
        out.push(':');
        out.push_str(gap);
        out.push_str(value);
        out.push_str(gap);
    }
    out.push('}');
    out
}

/// `value` written as JSON in `style`; object members in the map's order.
pub(crate) fn write(value: &Value, style: Style, out: &mut String) {
    let gap = if style.spaced { " " } else { "" };
    match value {
        Value::String(s) => write_string(s, style, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                    out.push_str(gap);
                }
                write(item, style, out);
            }
            out.push(']');
        }
        Value::Object(members) => {
            let members: Vec<(&str, Value)> = members
                .iter()
                .map(|(k, v)| (k.as_str(), v.clone()))
                .collect();
            out.push_str(&object(&members, style));
        }
        other => out.push_str(&other.to_string()),
    }
}

/// `s` as a JSON string: as serde writes it, or with `\u` escapes for everything past ASCII.
fn write_string(s: &str, style: Style, out: &mut String) {
    if !style.escaped {
        out.push_str(&Value::String(s.into()).to_string());
        return;
    }
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' => out.push_str("\\/"),
            c if (c as u32) < 0x20 || !c.is_ascii() => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04X}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `bytes` changed at one place: a byte flipped, cut short there, or a byte dropped.
pub(crate) fn mutated(bytes: &[u8], at: usize, how: u8) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if out.is_empty() {
        return out;
    }
    let at = at % out.len();
    match how % 3 {
        0 => out[at] ^= 1 << (how % 8),
        1 => out.truncate(at),
        _ => {
            out.remove(at);
        }
    }
    out
}

/// An object of `value()`s, for `_meta`, arguments and the like.
pub(crate) fn map() -> impl Strategy<Value = Map<String, Value>> + Clone {
    prop::collection::vec((string(6), value()), 0..4)
        .prop_map(|members| members.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest! {
        /// What the writer writes, serde reads back as the value it was.
        #[test]
        fn every_style_reads_back_as_the_value(v in value(), style in style()) {
            let mut text = String::new();
            write(&v, style, &mut text);
            prop_assert!(!text.contains('\n'));
            let read: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(read, v);
        }
    }
}
