//! A hash that names things the same on every run: tool ids cut to length, config digests.
//! Below every layer, because config and tools both name things by it.

/// FNV-1a: stable across runs, versions and platforms, unlike std's hasher.
pub(crate) fn stable_hash(s: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}
