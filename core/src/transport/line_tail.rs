//! The last lines a server wrote that were not JSON-RPC: its stderr, and lines on its stdout,
//! where only JSON-RPC belongs. A server that dies as it starts (a token not set, a module
//! not installed) says why there and nowhere else, and its user needs to read it in the
//! connection's error rather than in a log they did not open.

use std::collections::VecDeque;
use std::sync::Mutex;

/// How many of the last lines are kept, and how much of each: enough for the end of a Python
/// traceback or a Node stack's message.
const TAIL_LINES: usize = 5;
const TAIL_LINE_CHARS: usize = 300;

/// A server's last lines on one stream, already redacted (`EnvSecrets`).
#[derive(Default)]
pub(crate) struct LineTail {
    lines: Mutex<VecDeque<String>>,
}

impl LineTail {
    /// Keeps a line among the last ones, cut to its first characters.
    pub(crate) fn keep(&self, line: &str) {
        let mut line = line.trim_end().to_string();
        if line.is_empty() {
            return;
        }
        if let Some((cut, _)) = line.char_indices().nth(TAIL_LINE_CHARS) {
            line.truncate(cut);
            line.push('…');
        }
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The lines kept, one per line; `None` when there are none.
    pub(crate) fn text(&self) -> Option<String> {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        (!lines.is_empty()).then(|| lines.iter().cloned().collect::<Vec<_>>().join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::LineTail;

    #[test]
    fn the_last_lines_are_kept_cut_and_blank_ones_skipped() {
        let tail = LineTail::default();
        assert_eq!(tail.text(), None);
        for n in 0..7 {
            tail.keep(&format!("line {n}\n"));
            tail.keep("   ");
        }
        tail.keep(&"x".repeat(400));
        let text = tail.text().unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(&lines[..4], ["line 3", "line 4", "line 5", "line 6"]);
        assert_eq!(lines[4].chars().count(), 301);
        assert!(lines[4].ends_with('…'));
    }
}
