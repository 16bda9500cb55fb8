//! Model output with tool calls written as text: never a panic, and every call found has a
//! name and object arguments.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let parsed = mcpmux::agent::parse_tool_calls(&text);
    for call in &parsed.calls {
        assert!(!call.name.is_empty());
        assert!(call.arguments.is_object(), "{:?}", call.arguments);
    }
});
