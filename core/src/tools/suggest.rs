//! What a caller may have meant by a tool name that names no tool: the same tool under another
//! form of its name (a gateway's `server__tool`, as `mcpmux serve` serves it, for the pool's
//! `mcp__server__tool`, or the tool's own name alone), else a near miss. A "not found" error
//! offers these, so a person or a model can correct the call without listing every tool.

/// At most this many names are offered.
const MAX_OFFERED: usize = 3;

/// The names of `known` (each with the tool's own name, where it differs) that `wanted` may
/// have meant, best first; empty when none is close.
pub(crate) fn meant<'a, I>(wanted: &str, known: I) -> Vec<String>
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
{
    let known: Vec<(&str, &str)> = known.into_iter().collect();
    let mut same: Vec<&str> = known
        .iter()
        .filter(|(name, own)| same_tool(wanted, name, own))
        .map(|(name, _)| *name)
        .collect();
    if !same.is_empty() {
        same.sort_unstable();
        same.dedup();
        return same
            .into_iter()
            .take(MAX_OFFERED)
            .map(String::from)
            .collect();
    }
    let most = typo_allowance(wanted);
    let mut near: Vec<(usize, &str)> = known
        .iter()
        .map(|(name, own)| (distance(wanted, name, own), *name))
        .filter(|(d, _)| *d <= most)
        .collect();
    near.sort_unstable();
    near.dedup_by(|a, b| a.1 == b.1);
    near.into_iter()
        .take(MAX_OFFERED)
        .map(|(_, name)| name.to_string())
        .collect()
}

/// The words of a "not found" error that offer `meant`, or `None` when nothing is offered.
pub(crate) fn offer(meant: &[String]) -> Option<String> {
    match meant {
        [] => None,
        [one] => Some(format!("did you mean {one}?")),
        several => Some(format!("did you mean one of {}?", several.join(", "))),
    }
}

/// Whether `wanted` names the tool `name` (own name `own`) in another form: one name is the
/// other with a prefix of whole `__`-separated parts, or the own name, or differs in case.
fn same_tool(wanted: &str, name: &str, own: &str) -> bool {
    wanted.eq_ignore_ascii_case(name)
        || wanted == own
        || ends_with_part(name, wanted)
        || ends_with_part(wanted, name)
}

/// Whether `longer` ends with `__` and then `tail`.
fn ends_with_part(longer: &str, tail: &str) -> bool {
    longer
        .strip_suffix(tail)
        .is_some_and(|head| head.ends_with("__"))
}

/// The fewest edits from `wanted` to any form of the name: the whole name, the name without
/// its `mcp__` prefix, the tool's own name.
fn distance(wanted: &str, name: &str, own: &str) -> usize {
    let bare = name.strip_prefix("mcp__").unwrap_or(name);
    [name, bare, own]
        .into_iter()
        .map(|form| strsim::levenshtein(wanted, form))
        .min()
        .unwrap_or(usize::MAX)
}

/// How many edits still count as a slip of the keyboard: two, or one in six characters of a
/// long name.
fn typo_allowance(wanted: &str) -> usize {
    (wanted.chars().count() / 6).max(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLEET: [(&str, &str); 4] = [
        ("mcp__files__read_text_file", "read_text_file"),
        ("mcp__files__write_file", "write_file"),
        ("mcp__notes__read_text_file", "read_text_file"),
        ("mcp__time__get_current_time", "get_current_time"),
    ];

    #[test]
    fn a_served_name_finds_the_pool_id_of_its_tool() {
        assert_eq!(
            meant("files__read_text_file", FLEET),
            ["mcp__files__read_text_file"]
        );
    }

    #[test]
    fn a_pool_id_finds_the_served_name_of_its_tool() {
        let served = [("files__write_file", "files__write_file")];
        assert_eq!(
            meant("mcp__files__write_file", served),
            ["files__write_file"]
        );
    }

    #[test]
    fn a_bare_tool_name_finds_every_server_that_has_it() {
        assert_eq!(
            meant("read_text_file", FLEET),
            ["mcp__files__read_text_file", "mcp__notes__read_text_file"]
        );
    }

    #[test]
    fn a_slip_of_the_keyboard_finds_the_nearest_names() {
        assert_eq!(
            meant("mcp__time__get_curent_time", FLEET),
            ["mcp__time__get_current_time"]
        );
        assert_eq!(
            meant("MCP__FILES__WRITE_FILE", FLEET),
            ["mcp__files__write_file"]
        );
        assert_eq!(
            meant("time__get_current_tim", FLEET),
            ["mcp__time__get_current_time"]
        );
    }

    #[test]
    fn nothing_is_offered_for_a_name_far_from_every_tool() {
        assert!(meant("delete_everything", FLEET).is_empty());
        assert!(meant("file", FLEET).is_empty());
        assert!(meant("anything", []).is_empty());
        assert_eq!(offer(&[]), None);
    }

    #[test]
    fn the_offer_names_one_or_several() {
        assert_eq!(offer(&["a".into()]).unwrap(), "did you mean a?");
        assert_eq!(
            offer(&["a".into(), "b".into()]).unwrap(),
            "did you mean one of a, b?"
        );
    }
}
