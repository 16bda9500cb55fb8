//! Tool calls written as text by models without native tool calling: Gemma 4
//! (`<|tool_call>call:name{key:<|"|>value<|"|>,n:42}<tool_call|>`), Hermes/Qwen
//! (`<tool_call>{"name": ..., "arguments": {...}}</tool_call>`) and plain JSON in a code fence.
//! Whatever cannot be read as a call stays text: partial or malformed output never panics and
//! never invents a call.

use serde_json::{Map, Value};

/// A call found in a model's text.
#[derive(Debug, Clone, PartialEq)]
pub struct TextToolCall {
    pub name: String,
    pub arguments: Value,
}

/// A reply split into its prose and its calls.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedReply {
    pub text: String,
    pub calls: Vec<TextToolCall>,
}

const GEMMA_OPEN: &str = "<|tool_call>";
const GEMMA_CLOSE: &str = "<tool_call|>";
const GEMMA_QUOTE: &str = "<|\"|>";
const HERMES_OPEN: &str = "<tool_call>";
const HERMES_CLOSE: &str = "</tool_call>";

/// Extracts every complete call; the rest is returned as text.
pub fn parse_tool_calls(reply: &str) -> ParsedReply {
    let mut out = ParsedReply::default();
    let mut rest = reply;
    loop {
        let next = [GEMMA_OPEN, HERMES_OPEN, "```"]
            .iter()
            .filter_map(|m| rest.find(m).map(|i| (i, *m)))
            .min_by_key(|(i, _)| *i);
        let Some((start, marker)) = next else {
            out.text.push_str(rest);
            break;
        };
        let (before, after_start) = rest.split_at(start);
        let body_start = &after_start[marker.len()..];
        let (close, parsed) = match marker {
            GEMMA_OPEN => match body_start.find(GEMMA_CLOSE) {
                Some(end) => (
                    Some(end + GEMMA_CLOSE.len()),
                    parse_gemma(&body_start[..end]),
                ),
                None => (None, None),
            },
            HERMES_OPEN => match body_start.find(HERMES_CLOSE) {
                Some(end) => (
                    Some(end + HERMES_CLOSE.len()),
                    serde_json::from_str::<Value>(body_start[..end].trim())
                        .ok()
                        .map(calls_from_json)
                        .filter(|c| !c.is_empty()),
                ),
                None => (None, None),
            },
            _ => match body_start.find("```") {
                Some(end) => {
                    let fenced = &body_start[..end];
                    let json = fenced.strip_prefix("json").unwrap_or(fenced);
                    (
                        Some(end + 3),
                        serde_json::from_str::<Value>(json.trim())
                            .ok()
                            .map(calls_from_json)
                            .filter(|c| !c.is_empty()),
                    )
                }
                None => (None, None),
            },
        };
        out.text.push_str(before);
        match (close, parsed) {
            (Some(len), Some(calls)) => {
                out.calls.extend(calls);
                rest = &body_start[len..];
            }
            // Not a call after all (prose in a fence, broken JSON, unterminated marker): keep
            // it as text and look further.
            (Some(len), None) => {
                out.text.push_str(&after_start[..marker.len() + len]);
                rest = &body_start[len..];
            }
            (None, _) => {
                out.text.push_str(after_start);
                break;
            }
        }
    }
    out.text = out.text.trim().to_string();
    out
}

/// `{"name": ..., "arguments": {...}}` and its common spellings, or an array of them.
fn calls_from_json(v: Value) -> Vec<TextToolCall> {
    match v {
        Value::Array(items) => {
            let calls: Vec<_> = items.into_iter().filter_map(one_call).collect();
            calls
        }
        other => one_call(other).into_iter().collect(),
    }
}

fn one_call(v: Value) -> Option<TextToolCall> {
    let Value::Object(mut m) = v else { return None };
    let name = ["name", "tool", "function", "tool_name"]
        .iter()
        .find_map(|k| m.get(*k).and_then(Value::as_str).map(str::to_string))?;
    let arguments = ["arguments", "parameters", "args", "input"]
        .iter()
        .find_map(|k| m.remove(*k))
        .map(|a| match a {
            // Some models put the arguments in a JSON string.
            Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
            other => other,
        })
        .unwrap_or_else(|| Value::Object(Map::new()));
    arguments
        .is_object()
        .then_some(TextToolCall { name, arguments })
}

/// `call:name{key:value,...}`.
fn parse_gemma(body: &str) -> Option<Vec<TextToolCall>> {
    let body = body.trim().strip_prefix("call:")?;
    let brace = body.find('{')?;
    let name = body[..brace].trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_alphanumeric() || "_-.".contains(c))
    {
        return None;
    }
    let mut p = GemmaParser {
        s: &body[brace..],
        pos: 0,
    };
    let arguments = p.value()?;
    p.skip_ws();
    if p.pos != p.s.len() || !arguments.is_object() {
        return None;
    }
    Some(vec![TextToolCall {
        name: name.to_string(),
        arguments,
    }])
}

/// Gemma's argument syntax: JSON-like, keys unquoted, strings between `<|"|>` marks.
struct GemmaParser<'a> {
    s: &'a str,
    pos: usize,
}

impl GemmaParser<'_> {
    fn rest(&self) -> &str {
        &self.s[self.pos..]
    }

    fn skip_ws(&mut self) {
        let trimmed = self.rest().trim_start();
        self.pos = self.s.len() - trimmed.len();
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Option<Value> {
        self.skip_ws();
        if self.eat("{") {
            let mut map = Map::new();
            if self.eat("}") {
                return Some(Value::Object(map));
            }
            loop {
                self.skip_ws();
                let key_len = self.rest().find(':')?;
                let key = self.rest()[..key_len].trim().trim_matches('"').to_string();
                if key.is_empty() || key.contains(['{', '}', ',', '[', ']']) {
                    return None;
                }
                self.pos += key_len + 1;
                let v = self.value()?;
                map.insert(key, v);
                if self.eat(",") {
                    continue;
                }
                return self.eat("}").then_some(Value::Object(map));
            }
        }
        if self.eat("[") {
            let mut items = Vec::new();
            if self.eat("]") {
                return Some(Value::Array(items));
            }
            loop {
                items.push(self.value()?);
                if self.eat(",") {
                    continue;
                }
                return self.eat("]").then_some(Value::Array(items));
            }
        }
        if self.eat(GEMMA_QUOTE) {
            let end = self.rest().find(GEMMA_QUOTE)?;
            let s = self.rest()[..end].to_string();
            self.pos += end + GEMMA_QUOTE.len();
            return Some(Value::String(s));
        }
        // A bare scalar: number, true, false, null, or a word taken as a string.
        let end = self
            .rest()
            .find([',', '}', ']'])
            .unwrap_or(self.rest().len());
        let raw = self.rest()[..end].trim().to_string();
        if raw.is_empty() {
            return None;
        }
        self.pos += end;
        Some(serde_json::from_str(&raw).unwrap_or(Value::String(raw)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gemma_calls_several_concatenated() {
        let r = parse_tool_calls(
            "Let me check.<|tool_call>call:get_weather{city:<|\"|>Paris, FR<|\"|>,days:3}<tool_call|>\
             <|tool_call>call:search{query:<|\"|>a {b}<|\"|>,tags:[<|\"|>x<|\"|>,2],opts:{deep:true}}<tool_call|>",
        );
        assert_eq!(r.text, "Let me check.");
        assert_eq!(r.calls.len(), 2);
        assert_eq!(r.calls[0].name, "get_weather");
        assert_eq!(
            r.calls[0].arguments,
            json!({"city": "Paris, FR", "days": 3})
        );
        assert_eq!(
            r.calls[1].arguments,
            json!({"query": "a {b}", "tags": ["x", 2], "opts": {"deep": true}})
        );
    }

    #[test]
    fn hermes_and_fenced_json() {
        let r = parse_tool_calls(
            "<tool_call>{\"name\": \"echo\", \"arguments\": {\"text\": \"hi\"}}</tool_call>\n\
             <tool_call>{\"name\": \"add\", \"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>",
        );
        assert_eq!(r.calls.len(), 2);
        assert_eq!(r.calls[1].arguments, json!({"a": 1}));
        let r = parse_tool_calls(
            "Here:\n```json\n{\"tool\": \"list_tools\", \"parameters\": {}}\n```\ndone",
        );
        assert_eq!(
            r.calls,
            [TextToolCall {
                name: "list_tools".into(),
                arguments: json!({})
            }]
        );
        assert_eq!(r.text, "Here:\n\ndone");
        let r = parse_tool_calls(
            "```json\n[{\"name\": \"a\"}, {\"name\": \"b\", \"args\": {\"x\": 1}}]\n```",
        );
        assert_eq!(r.calls.len(), 2);
    }

    #[test]
    fn partial_and_malformed_output_stays_text() {
        for s in [
            "<|tool_call>call:get_weather{city:<|\"|>Par",
            "<tool_call>{\"name\": \"echo\"",
            "<tool_call>not json</tool_call>",
            "<|tool_call>call:{x:1}<tool_call|>",
            "<|tool_call>call:f{x:}<tool_call|>",
            "```rust\nfn main() {}\n```",
            "```json\n{\"no_name\": 1}\n```",
        ] {
            let r = parse_tool_calls(s);
            assert!(r.calls.is_empty(), "{s:?} gave {:?}", r.calls);
            assert!(!r.text.is_empty(), "{s:?} lost its text");
        }
    }

    /// Random mixtures of markers, quotes, braces and prose: never a panic, and a valid call
    /// embedded anywhere is always found.
    #[test]
    fn fuzzed_inputs_never_panic() {
        use rand::{Rng, SeedableRng};
        let pieces = [
            GEMMA_OPEN,
            GEMMA_CLOSE,
            GEMMA_QUOTE,
            HERMES_OPEN,
            HERMES_CLOSE,
            "```",
            "```json",
            "call:",
            "{",
            "}",
            "[",
            "]",
            ":",
            ",",
            "\"",
            "name",
            "arguments",
            "é",
            "🙂",
            " ",
            "\n",
            "x",
            "42",
            "true",
            "{\"name\":\"t\",\"arguments\":{}}",
        ];
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..20_000 {
            let n = rng.random_range(0..24);
            let noise: String = (0..n)
                .map(|_| pieces[rng.random_range(0..pieces.len())])
                .collect();
            let _ = parse_tool_calls(&noise);
            let with_call = format!(
                "{noise}\n<tool_call>{{\"name\": \"real\", \"arguments\": {{}}}}</tool_call>"
            );
            let parsed = parse_tool_calls(&with_call);
            // Noise may itself open a fence or marker that swallows the call; the call is
            // found whenever the noise is balanced.
            if !noise.contains("```") && !noise.contains(GEMMA_OPEN) && !noise.contains(HERMES_OPEN)
            {
                assert!(
                    parsed.calls.iter().any(|c| c.name == "real"),
                    "{with_call:?}"
                );
            }
        }
    }
}
