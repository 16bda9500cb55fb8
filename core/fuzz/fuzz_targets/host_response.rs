//! What a host answers, of every kind (host tools, approvals, sampling, elicitation, roots,
//! a provider's reply), as JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpmux::host::answers::{AnswerKind, read};

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        for kind in AnswerKind::ALL {
            let _ = read(kind, value.clone());
        }
    }
});
