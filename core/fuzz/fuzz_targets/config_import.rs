//! Claude Desktop / Cursor / VS Code config files as users paste them.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = mcpmux::config::import::parse_server_json(text);
    }
});
