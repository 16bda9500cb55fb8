//! JSON strings as text, for the paths that read a call's JSON by hand
//! (`pool::plain_text_reply`): where the first byte that a JSON string must escape is, found
//! eight bytes at a time.

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
}
