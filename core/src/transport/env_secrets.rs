//! The config env values of a stdio server (its tokens and keys), kept out of everything the
//! pool says about what the server wrote: its stderr lines, in errors and as `log` events,
//! and a stdout line that is not JSON-RPC, reported as an error event. A server that echoes
//! the token it was refused, or logs its settings to the wrong stream, is common.

use crate::config::record::ServerRecord;

/// Env values shorter than this are not taken for secrets (`1`, `true`, a port).
const SECRET_MIN_CHARS: usize = 6;

/// What `<redacted>` stands in for in a server's output.
#[derive(Debug, Default)]
pub(crate) struct EnvSecrets(Vec<String>);

impl EnvSecrets {
    /// The values of `record`'s env long enough to be secrets.
    pub(crate) fn of(record: &ServerRecord) -> EnvSecrets {
        EnvSecrets(
            (record.config.env.values())
                .filter(|v| v.chars().count() >= SECRET_MIN_CHARS)
                .cloned()
                .collect(),
        )
    }

    /// `text` with every secret in it replaced by `<redacted>`.
    pub(crate) fn redacted(&self, mut text: String) -> String {
        for secret in &self.0 {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), "<redacted>");
            }
        }
        text
    }

    /// The first `max` characters of `line` (lossily decoded), redacted, with `…` when cut.
    /// A secret that starts within them is redacted whole, even where it runs past `max`.
    pub(crate) fn shown(&self, line: &[u8], max: usize) -> String {
        let longest = self.0.iter().map(String::len).max().unwrap_or(0);
        // `max` characters are at most 4 bytes each; then room for a secret that starts
        // at the last of them.
        let window = &line[..line.len().min(max * 4 + longest)];
        let mut shown = self.redacted(String::from_utf8_lossy(window).into_owned());
        if let Some((cut, _)) = shown.char_indices().nth(max) {
            shown.truncate(cut);
            shown.push('…');
        }
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::EnvSecrets;

    fn secrets(values: &[&str]) -> EnvSecrets {
        EnvSecrets(values.iter().map(|v| v.to_string()).collect())
    }

    #[test]
    fn every_secret_is_redacted_wherever_it_is() {
        let s = secrets(&["ghp_token1", "sk-key-22"]);
        assert_eq!(
            s.redacted("a ghp_token1 b sk-key-22 c ghp_token1".into()),
            "a <redacted> b <redacted> c <redacted>"
        );
        assert_eq!(s.redacted("nothing here".into()), "nothing here");
    }

    #[test]
    fn a_shown_line_is_cut_after_redacting() {
        let s = secrets(&["ghp_token1"]);
        // The secret starts before the cut and ends after it: redacted whole, then cut.
        let line = format!("{}ghp_token1 and more", "x".repeat(8));
        assert_eq!(s.shown(line.as_bytes(), 12), "xxxxxxxx<red…");
        assert_eq!(s.shown(b"short", 12), "short");
        assert_eq!(secrets(&[]).shown("ééé".as_bytes(), 2), "éé…");
    }
}
