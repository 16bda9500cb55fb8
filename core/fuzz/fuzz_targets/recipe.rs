//! Recipe markdown (front matter and steps).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = mcpmux::widgets::recipes::parse_recipe(text);
    }
});
