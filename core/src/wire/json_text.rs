//! JSON strings as text, for the paths that read and write a call's JSON by hand
//! (`pool::plain_text_reply`, `pool::call_params`): where the first byte that a JSON string
//! must escape is, found eight bytes at a time, and a string written as serde_json writes it.

/// The first byte of `bytes` that a JSON string cannot hold as it is (a quote, a backslash, a
/// control character), if any: what serde_json's reader looks for, a machine word at a time,
/// so that a long result or argument is scanned as fast as serde would.
pub(crate) fn escape_at(bytes: &[u8]) -> Option<usize> {
    const STEP: usize = size_of::<u64>();
    const ONES: u64 = u64::MAX / 255;
    const HIGHS: u64 = ONES << 7;
    let mut chunks = bytes.chunks_exact(STEP);
    let mut at = 0;
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("a chunk of eight"));
        // A byte's high bit is set where it is zero after the xor (or below 0x20): the
        // lowest such byte is a true one, whatever the borrows set above it.
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let found = ((quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (word.wrapping_sub(ONES * 0x20) & !word))
            & HIGHS;
        if found != 0 {
            return Some(at + found.trailing_zeros() as usize / 8);
        }
        at += STEP;
    }
    let tail = chunks.remainder();
    let found = tail
        .iter()
        .position(|b| matches!(b, b'"' | b'\\' | 0..=0x1f));
    found.map(|i| at + i)
}

/// Writes `s` as a JSON string, byte for byte as serde_json does: most strings need no
/// escape, and are copied whole rather than through serde's escaper a byte at a time.
pub(crate) fn write_str(s: &str, out: &mut Vec<u8>) {
    if escape_at(s.as_bytes()).is_none() {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        // Writing to a Vec fails only when serializing does, which a str does not.
        let _ = serde_json::to_writer(out, s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every string of the bytes below up to four long, at every offset of a longer text.
    #[test]
    fn finds_the_first_byte_to_escape_as_a_plain_scan_does() {
        let alphabet = [
            b'a', b'"', b'\\', 0x00, 0x1f, 0x20, 0x7f, 0x80, 0xff, b'!', b'#', b'[',
        ];
        let plain = |b: &[u8]| b.iter().position(|c| matches!(c, b'"' | b'\\' | 0..=0x1f));
        let mut texts = vec![Vec::new()];
        for _ in 0..4 {
            let longer: Vec<Vec<u8>> = texts
                .iter()
                .flat_map(|t| alphabet.iter().map(move |c| [t.as_slice(), &[*c]].concat()))
                .collect();
            texts.extend(longer);
        }
        for text in &texts {
            for pad in 0..18 {
                let bytes = [vec![b'x'; pad], text.clone(), vec![b'y'; 5]].concat();
                assert_eq!(escape_at(&bytes), plain(&bytes), "{bytes:?}");
            }
        }
    }

    #[test]
    fn writes_strings_as_serde_does() {
        for s in [
            "",
            "plain",
            "a \"quote\"",
            "back\\slash",
            "tab\tnew\nline",
            "\u{1}",
            "é日本😀",
            "\u{7f}/",
        ] {
            let mut out = Vec::new();
            write_str(s, &mut out);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(s).unwrap()
            );
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(1024))]

            /// A string is written byte for byte as serde writes it, and the first byte to
            /// escape is where a plain scan finds it.
            #[test]
            fn strings_are_written_and_scanned_as_serde_does(s in crate::arbitrary::string(40)) {
                let mut ours = Vec::new();
                write_str(&s, &mut ours);
                prop_assert_eq!(ours, serde_json::to_vec(&s).unwrap());
                let plain = s.bytes().position(|c| matches!(c, b'"' | b'\\' | 0..=0x1f));
                prop_assert_eq!(escape_at(s.as_bytes()), plain);
            }

            #[test]
            fn any_bytes_are_scanned_as_a_plain_scan_does(
                bytes in prop::collection::vec(any::<u8>(), 0..80),
            ) {
                let plain = bytes.iter().position(|c| matches!(c, b'"' | b'\\' | 0..=0x1f));
                prop_assert_eq!(escape_at(&bytes), plain);
            }
        }
    }
}
