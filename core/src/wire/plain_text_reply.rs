//! The most common `tools/call` reply, text content and nothing else, read by hand.
//!
//! Through serde each key of the reply is matched by a generic field visitor and the content
//! array built through layers of `Option`, `Vec` and enum visitors: for a short reply that
//! cost more than the rest of the pool's own work on the call. This reader takes that one
//! shape byte by byte and gives up (`None`) at anything else, which serde then reads as
//! before; what it does read, it reads as rmcp does (the tests compare the two).

use std::borrow::Cow;

use rmcp::model::{CallToolResult, ContentBlock, ResultType};

/// The result of `{"jsonrpc":..,"id":"..","result":{"content":[{"type":"text","text":..}, ..],
/// "isError":..,"resultType":"complete"}}`, keys in any order, `isError` and `resultType`
/// optional; `None` for any other reply (an error, more keys, other content, `_meta`).
pub(crate) fn read(line: &[u8]) -> Option<CallToolResult> {
    // Checked once here, so that every slice taken below is a `str` already.
    let text = std::str::from_utf8(line).ok()?;
    let mut cursor = Cursor { text, at: 0 };
    let result = cursor.reply()?;
    cursor.skip_space();
    (cursor.at == text.len()).then_some(result)
}

/// A place in the reply's text.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

/// The parts of a result as they are read.
#[derive(Default)]
struct Parts {
    content: Option<Vec<ContentBlock>>,
    is_error: Option<Option<bool>>,
    result_type: Option<ResultType>,
}

impl<'a> Cursor<'a> {
    /// The top-level object: `jsonrpc` and `id` (strings) and `result`.
    fn reply(&mut self) -> Option<CallToolResult> {
        let (mut jsonrpc, mut id, mut result) = (false, false, None);
        self.object(|c, key| match key {
            "jsonrpc" if !jsonrpc => {
                jsonrpc = true;
                c.string().map(drop)
            }
            "id" if !id => {
                id = true;
                c.string().map(drop)
            }
            "result" if result.is_none() => {
                result = Some(c.result()?);
                Some(())
            }
            _ => None,
        })?;
        result
    }

    /// `{"content":[..],"isError":..,"resultType":"complete"}`.
    fn result(&mut self) -> Option<CallToolResult> {
        let mut parts = Parts::default();
        self.object(|c, key| match key {
            "content" if parts.content.is_none() => {
                parts.content = Some(c.blocks()?);
                Some(())
            }
            "isError" if parts.is_error.is_none() => {
                parts.is_error = Some(c.bool_or_null()?);
                Some(())
            }
            // Any other result type (input_required, task) is a different result.
            "resultType" if parts.result_type.is_none() => {
                (c.string()? == "complete").then(|| parts.result_type = Some(ResultType::COMPLETE))
            }
            _ => None,
        })?;
        let mut result = CallToolResult::default();
        result.content = parts.content?;
        result.is_error = parts.is_error.flatten();
        result.result_type = parts.result_type;
        Some(result)
    }

    /// `[{"type":"text","text":".."}, ..]`.
    fn blocks(&mut self) -> Option<Vec<ContentBlock>> {
        let mut blocks = Vec::with_capacity(1);
        if !self.eat(b'[') {
            return None;
        }
        if self.eat(b']') {
            return Some(blocks);
        }
        loop {
            blocks.push(self.text_block()?);
            if self.eat(b']') {
                return Some(blocks);
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    /// `{"type":"text","text":".."}`, in either order, nothing else.
    fn text_block(&mut self) -> Option<ContentBlock> {
        let (mut kind, mut text) = (false, None);
        self.object(|c, key| match key {
            "type" if !kind => {
                kind = true;
                (c.string()? == "text").then_some(())
            }
            "text" if text.is_none() => {
                text = Some(c.string()?.into_owned());
                Some(())
            }
            _ => None,
        })?;
        if !kind {
            return None;
        }
        Some(ContentBlock::text(text?))
    }

    /// An object whose every member `member` reads (given its key, after the colon); `None` if
    /// it is not an object or `member` gives up.
    fn object(&mut self, mut member: impl FnMut(&mut Self, &str) -> Option<()>) -> Option<()> {
        if !self.eat(b'{') {
            return None;
        }
        loop {
            let key = self.string()?;
            if !self.eat(b':') {
                return None;
            }
            member(self, &key)?;
            if self.eat(b'}') {
                return Some(());
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    /// `true`, `false` or `null` (which serde reads as no value).
    fn bool_or_null(&mut self) -> Option<Option<bool>> {
        self.skip_space();
        let rest = &self.text.as_bytes()[self.at..];
        let (value, len) = if rest.starts_with(b"true") {
            (Some(true), 4)
        } else if rest.starts_with(b"false") {
            (Some(false), 5)
        } else if rest.starts_with(b"null") {
            (None, 4)
        } else {
            return None;
        };
        self.at += len;
        Some(value)
    }

    /// A string; one with escapes is decoded by serde_json, which also rejects bad ones.
    #[inline]
    fn string(&mut self) -> Option<Cow<'a, str>> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        let bytes = self.text.as_bytes();
        let end = start + super::json_text::escape_at(&bytes[start..])?;
        match bytes[end] {
            b'"' => {
                self.at = end + 1;
                Some(Cow::Borrowed(&self.text[start..end]))
            }
            b'\\' => self.escaped_string(start),
            _ => None,
        }
    }

    /// The rest of a string that holds an escape, from its first character at `start`.
    #[cold]
    fn escaped_string(&mut self, start: usize) -> Option<Cow<'a, str>> {
        let bytes = self.text.as_bytes();
        let mut end = start;
        loop {
            end += super::json_text::escape_at(bytes.get(end..)?)?;
            match bytes[end] {
                b'"' => break,
                b'\\' => end += 2,
                _ => return None,
            }
        }
        self.at = end + 1;
        serde_json::from_str(self.text.get(start - 1..end + 1)?).ok()
    }

    /// Skips white space, then takes `byte` if it comes next.
    #[inline]
    fn eat(&mut self, byte: u8) -> bool {
        // Most replies have no white space between their tokens: the next byte is looked at
        // once, and only a space makes it look for more.
        let next = match self.text.as_bytes().get(self.at) {
            Some(&b) if b == byte => true,
            Some(b' ' | b'\t' | b'\n' | b'\r') => {
                self.skip_space();
                self.text.as_bytes().get(self.at) == Some(&byte)
            }
            _ => false,
        };
        if next {
            self.at += 1;
        }
        next
    }

    fn skip_space(&mut self) {
        let bytes = self.text.as_bytes();
        while matches!(bytes.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What rmcp's own reading makes of a reply's result, if it reads one.
    fn general(line: &str) -> Option<CallToolResult> {
        #[derive(serde::Deserialize)]
        struct Reply {
            result: CallToolResult,
        }
        serde_json::from_str::<Reply>(line).ok().map(|r| r.result)
    }

    #[test]
    fn reads_text_results_as_rmcp_does() {
        for line in [
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"text","text":"hi"}]}}"#,
            r#"{"id":"mcpmux-5","jsonrpc":"2.0","result":{"content":[{"text":"hello","type":"text"}]}}"#,
            r#"{"result":{"isError":false,"content":[],"resultType":"complete"},"jsonrpc":"2.0","id":"mcpmux-2"}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"text","text":"a"},{"text":"b\n\u00e9","type":"text"}],"isError":true}}"#,
            " {\n \"jsonrpc\" : \"2.0\" ,\t\"id\":\"mcpmux-3\",\r\n\"result\" : { \"content\" : [ { \"type\" : \"text\" , \"text\" : \"x y\" } ] , \"isError\" : null } } \n",
            r#"{"jsonrpc":"2.0","id":"mcpmux-4","result":{"content":[{"type":"text","text":"quote \" slash \\ \/ \b\f\n\r\t \ud83d\ude00 é 日本"}]}}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-6","result":{"content":[{"type":"t\u0065xt","text":""}]}}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-7","result":{"c\u006fntent":[{"type":"text","text":"escaped key"}]}}"#,
        ] {
            let fast = read(line.as_bytes()).unwrap_or_else(|| panic!("not read: {line}"));
            assert_eq!(Some(fast), general(line), "{line}");
        }
    }

    #[test]
    fn reads_long_texts_with_escapes_anywhere() {
        for text in [
            "line one\nline \"two\"\t\\ end ".repeat(300),
            format!("{}\u{1}{}", "x".repeat(4097), "é".repeat(50)),
            "no escape at all, only a long text ".repeat(200),
        ] {
            let line = serde_json::json!({
                "jsonrpc": "2.0",
                "id": "mcpmux-9",
                "result": {"content": [{"type": "text", "text": text}]},
            })
            .to_string();
            let fast = read(line.as_bytes()).expect("read");
            assert_eq!(Some(fast), general(&line));
        }
    }

    #[test]
    fn gives_up_on_anything_else() {
        for line in [
            // Other content, annotations, more result keys: serde reads them.
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"text","text":"x","annotations":{"priority":1}}]}}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[],"_meta":{"k":1}}}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"text","text":"x"}]},"extra":1}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}]}}"#,
            // Not a final result.
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"resultType":"input_required","inputRequests":{}}}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[],"resultType":"task"}}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","error":{"code":-32602,"message":"bad"}}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"isError":true}}"#,
            // Not JSON, or not one value.
            "{\"jsonrpc\":\"2.0\",\"id\":\"mcpmux-1\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"raw\nnewline\"}]}}",
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"text","text":"bad \q escape"}]}}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"text","text":"x"}]}} {}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"text","text":"x"},]}}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"text","text":"x"}]}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"text","text":"x"}],"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":"mcpmux-1","result":{"content":[{"type":"text","text":"x\"#,
            "",
            "{}",
        ] {
            assert!(read(line.as_bytes()).is_none(), "{line}");
        }
        assert!(read(b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}}").is_none());
    }

    mod properties {
        use super::*;
        use crate::arbitrary;
        use proptest::prelude::*;
        use serde_json::{Value, json};

        /// A reply of the shape the reader takes, or near it: text blocks (sometimes another
        /// kind, or one with a key more), `isError` and `resultType` sometimes, keys in any
        /// order, written any way; and whether it is of the shape (text content alone).
        fn reply() -> impl Strategy<Value = (String, bool)> {
            let block = prop_oneof![
                6 => arbitrary::string(20).prop_map(|t| (json!({"type": "text", "text": t}), true)),
                1 => Just((json!({"type": "image", "data": "AA==", "mimeType": "image/png"}), false)),
                1 => arbitrary::string(5).prop_map(|t| (json!({"type": "text", "text": t, "x": 1}), false)),
            ];
            let result_type = prop_oneof![Just(None), Just(Some("complete")), Just(Some("task"))];
            let is_error = prop_oneof![
                Just(None),
                Just(Some(Value::Null)),
                any::<bool>().prop_map(|b| Some(Value::Bool(b))),
            ];
            (
                prop::collection::vec(block, 0..4),
                is_error,
                result_type,
                arbitrary::string(8),
                any::<u64>(),
                arbitrary::style(),
            )
                .prop_map(|(blocks, is_error, result_type, id, order, style)| {
                    let plain = blocks.iter().all(|(_, plain)| *plain)
                        && result_type.is_none_or(|t| t == "complete");
                    let content = blocks.into_iter().map(|(block, _)| block).collect();
                    let mut result = vec![("content", Value::Array(content))];
                    if let Some(e) = is_error {
                        result.push(("isError", e));
                    }
                    if let Some(t) = result_type {
                        result.push(("resultType", Value::from(t)));
                    }
                    let result = arbitrary::object(&in_order(result, order), style);
                    let top = vec![
                        ("jsonrpc", arbitrary::written(&Value::from("2.0"), style)),
                        ("id", arbitrary::written(&Value::from(id), style)),
                        ("result", result),
                    ];
                    (
                        arbitrary::object_of(&in_order(top, order >> 8), style),
                        plain,
                    )
                })
        }

        /// `members` in one of their orders, as `seed` picks.
        fn in_order<T>(mut members: Vec<T>, seed: u64) -> Vec<T> {
            let n = members.len().max(1);
            members.rotate_left(seed as usize % n);
            if seed & 0x80 != 0 {
                members.reverse();
            }
            members
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            /// What the reader reads is what serde reads, and a reply of text content alone
            /// it reads (anything else it leaves to serde).
            #[test]
            fn reads_as_serde_does((line, plain) in reply()) {
                let general = general(&line);
                match read(line.as_bytes()) {
                    Some(fast) => prop_assert_eq!(Some(fast), general, "{}", line),
                    None => prop_assert!(!plain, "a text reply was not read: {}", line),
                }
            }

            /// A reply broken anywhere is never read as something serde would not read.
            #[test]
            fn a_broken_reply_is_never_misread(
                (line, _) in reply(),
                at in any::<usize>(),
                how in any::<u8>(),
            ) {
                let broken = arbitrary::mutated(line.as_bytes(), at, how);
                if let Some(fast) = read(&broken) {
                    let text = std::str::from_utf8(&broken).unwrap();
                    prop_assert_eq!(Some(fast), general(text), "{}", text);
                }
            }

            /// Bytes of no shape at all: no panic, and nothing serde would not read.
            #[test]
            fn noise_is_never_misread(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
                if let Some(fast) = read(&bytes) {
                    let text = std::str::from_utf8(&bytes).unwrap();
                    prop_assert_eq!(Some(fast), general(text));
                }
            }
        }
    }
}
