//! What a host-implemented provider answers, as JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = mcpmux::agent::hosted::parse_response("fuzz", value);
    }
});
