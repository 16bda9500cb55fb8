//! `text/event-stream`, read incrementally: the events of a legacy HTTP+SSE server's stream
//! and of an LLM provider's streamed answer.

/// One parsed server-sent event.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// Incremental parser of `text/event-stream` (the WHATWG rules MCP servers rely on).
#[derive(Default)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    event: SseEvent,
    has_data: bool,
    max: usize,
    oversized: bool,
    /// Bytes of the event so far (every line), for what an oversized one is reported as.
    event_bytes: u64,
}

/// An event over the size limit, dropped; `size` is how many bytes it had.
#[derive(Debug, PartialEq)]
pub(crate) struct Oversized {
    pub size: u64,
}

impl std::fmt::Display for Oversized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "an event of {} bytes was larger than the limit and was dropped",
            self.size
        )
    }
}

impl SseParser {
    pub fn new(max: usize) -> Self {
        SseParser {
            max,
            ..Default::default()
        }
    }

    /// Feeds bytes; returns complete events, and `Err` for an event over the size limit
    /// (which is dropped).
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<std::result::Result<SseEvent, Oversized>> {
        let mut out = Vec::new();
        for &b in bytes {
            self.event_bytes += 1;
            if b != b'\n' {
                if self.line.len() <= self.max {
                    self.line.push(b);
                } else {
                    self.oversized = true;
                }
                continue;
            }
            let mut line = std::mem::take(&mut self.line);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.is_empty() {
                let event = std::mem::take(&mut self.event);
                let size = std::mem::take(&mut self.event_bytes);
                if std::mem::take(&mut self.oversized) {
                    out.push(Err(Oversized { size }));
                } else if std::mem::take(&mut self.has_data) {
                    out.push(Ok(event));
                }
                self.has_data = false;
                continue;
            }
            let line = String::from_utf8_lossy(&line);
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line.as_ref(), ""),
            };
            match field {
                "event" => self.event.event = Some(value.to_string()),
                "data" => {
                    if self.has_data {
                        self.event.data.push('\n');
                    }
                    self.event.data.push_str(value);
                    self.has_data = true;
                    if self.event.data.len() > self.max {
                        self.oversized = true;
                        self.event.data.clear();
                    }
                }
                _ => {}
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_events_across_chunks_and_line_endings() {
        let mut p = SseParser::new(1024);
        let mut got = p.feed(b"event: endpoint\r\ndata: /messages?session=1\r\n\r\n: comment\n");
        got.extend(p.feed(b"data: {\"a\":\n"));
        got.extend(p.feed(b"data: 1}\n\nevent: message\ndata:x\n\n"));
        let got: Vec<_> = got.into_iter().map(Result::unwrap).collect();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].event.as_deref(), Some("endpoint"));
        assert_eq!(got[0].data, "/messages?session=1");
        assert_eq!(got[1].data, "{\"a\":\n1}");
        assert_eq!(got[2].data, "x");
    }

    #[test]
    fn oversized_events_are_dropped_with_an_error() {
        let mut p = SseParser::new(16);
        let got = p.feed(b"data: 0123456789abcdefghij\n\ndata: ok\n\n");
        assert_eq!(got[0], Err(Oversized { size: 28 }));
        assert_eq!(got[1].as_ref().unwrap().data, "ok");
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// A field's text: anything but the line breaks that end it.
        fn text() -> impl Strategy<Value = String> {
            crate::arbitrary::string(16).prop_map(|s| s.replace(['\n', '\r'], " "))
        }

        /// An event as a server sends it: its name, if any, and the lines of its data.
        fn event() -> impl Strategy<Value = (Option<String>, Vec<String>)> {
            let name = prop::option::of(text().prop_filter("named", |n| !n.is_empty()));
            (name, prop::collection::vec(text(), 1..4))
        }

        /// `events` on the wire: each line ended with LF or CRLF, comments and fields the
        /// client ignores between them, a space after the colon or not.
        fn encode(events: &[(Option<String>, Vec<String>)], seed: u64) -> Vec<u8> {
            let mut out = Vec::new();
            let mut bits = seed;
            let mut line = |out: &mut Vec<u8>, text: &str| {
                bits = bits.rotate_left(7) ^ 0x9e37_79b9_7f4a_7c15;
                out.extend_from_slice(text.as_bytes());
                out.extend_from_slice(if bits & 1 == 0 { b"\n" } else { b"\r\n" });
                bits
            };
            for (name, data) in events {
                if line(&mut out, ": a comment") & 2 == 0 {
                    line(&mut out, "id: 7");
                }
                if let Some(name) = name {
                    line(&mut out, &format!("event: {name}"));
                }
                for d in data {
                    let spaced = format!("data: {d}");
                    let tight = format!("data:{d}");
                    // Without the space, a value that starts with one keeps it.
                    let tight_ok = !d.starts_with(' ');
                    let choice = line(&mut Vec::new(), "") & 4 == 0;
                    line(&mut out, if choice && tight_ok { &tight } else { &spaced });
                }
                line(&mut out, "");
            }
            out
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            /// Whatever the chunks a stream arrives in, the events are the ones sent.
            #[test]
            fn events_are_read_as_sent_however_the_stream_is_cut(
                events in prop::collection::vec(event(), 0..6),
                seed in any::<u64>(),
                cuts in prop::collection::vec(any::<usize>(), 0..8),
            ) {
                let wire = encode(&events, seed);
                let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (wire.len() + 1)).collect();
                cuts.push(wire.len());
                cuts.sort_unstable();
                let mut parser = SseParser::new(1 << 20);
                let mut got = Vec::new();
                let mut from = 0;
                for cut in cuts {
                    got.extend(parser.feed(&wire[from..cut]));
                    from = cut;
                }
                let got: Vec<SseEvent> = got.into_iter().map(Result::unwrap).collect();
                let want: Vec<SseEvent> = events
                    .into_iter()
                    .map(|(event, data)| SseEvent { event, data: data.join("\n") })
                    .collect();
                prop_assert_eq!(got, want);
            }

            /// Bytes of no shape: no panic, and no event larger than the limit.
            #[test]
            fn noise_never_gives_an_event_past_the_limit(
                bytes in prop::collection::vec(any::<u8>(), 0..400),
            ) {
                let mut parser = SseParser::new(32);
                for event in parser.feed(&bytes).into_iter().flatten() {
                    prop_assert!(event.data.len() <= 32);
                }
            }
        }
    }
}
