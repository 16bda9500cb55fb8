//! The YAML front matter of a Markdown file (`---`, YAML, `---`, body): how recipes and
//! skills' `SKILL.md` files say what they are.

/// Why a text has no front matter block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Missing {
    /// It does not start with `---`.
    Start,
    /// The block is not closed by a `---` line.
    End,
}

/// The YAML of `markdown`'s front matter and the body after it (a byte order mark and
/// leading blank space are skipped).
pub(crate) fn split(markdown: &str) -> Result<(&str, &str), Missing> {
    let text = markdown.trim_start_matches('\u{feff}').trim_start();
    let rest = text.strip_prefix("---").ok_or(Missing::Start)?;
    let end = rest.find("\n---").ok_or(Missing::End)?;
    let body = rest[end + 4..].trim_start_matches('-');
    Ok((&rest[..end], body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_yaml_from_body_and_says_what_is_missing() {
        let (yaml, body) = split("\u{feff}---\nname: a\n---\nBody.\n").unwrap();
        assert_eq!(yaml.trim(), "name: a");
        assert_eq!(body.trim(), "Body.");
        assert_eq!(split("name: a\n"), Err(Missing::Start));
        assert_eq!(split("---\nname: a\n"), Err(Missing::End));
    }
}
