//! The hash maps looked up on every tool call: the tool index, the servers by id, progress
//! routes, the output validators, a served client's calls in flight and its callers. Their
//! keys are short strings and ids, for which std's SipHash took some 200 instructions a
//! lookup, about ten lookups a call (callgrind of `mcpmux serve`: 5% of a served call).
//! foldhash is hashbrown's own default (already built), seeded per process at random as
//! std's `RandomState` is per map.

/// A `HashMap` with foldhash; made with `FastMap::default()`.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
