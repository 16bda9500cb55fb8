//! Why an agent asks the host before a call: the reasons an [`ApprovalRequest`] names, one
//! type for core's policy and for the bindings' types generated from its schema.
//!
//! [`ApprovalRequest`]: super::ApprovalRequest

use serde::{Deserialize, Serialize};

/// Why the policy asks about a call: the `reason` of an [`ApprovalRequest`](super::ApprovalRequest), by
/// its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalReason {
    /// The tool's server is not trusted.
    UntrustedServer,
    /// The tool's definition is not what the user trusted (`change` says how).
    ChangedSinceTrusted,
    /// The tool was not among its server's tools when the server was trusted.
    NewSinceTrusted,
    /// The server's `disabledAutoApproveTools` names the tool.
    NotAutoApproved,
    /// The tool says it destroys (`destructiveHint`).
    Destructive,
    /// The `read_only` policy, and the tool does not say it only reads.
    NotReadOnly,
    /// The `always` policy.
    Always,
    /// A server's sampling request.
    Sampling,
}

impl ApprovalReason {
    /// Its name, as an [`ApprovalRequest`](super::ApprovalRequest) carries it.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalReason::UntrustedServer => "untrusted_server",
            ApprovalReason::ChangedSinceTrusted => "changed_since_trusted",
            ApprovalReason::NewSinceTrusted => "new_since_trusted",
            ApprovalReason::NotAutoApproved => "not_auto_approved",
            ApprovalReason::Destructive => "destructive",
            ApprovalReason::NotReadOnly => "not_read_only",
            ApprovalReason::Always => "always",
            ApprovalReason::Sampling => "sampling",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `as_str` is the name the schema gives each reason (and so the bindings' types).
    #[test]
    fn each_reason_is_named_as_its_schema_names_it() {
        let schema = serde_json::to_value(schemars::schema_for!(ApprovalReason)).unwrap();
        let named = schema["oneOf"].as_array().unwrap();
        assert_eq!(named.len(), 8, "{named:?}");
        for variant in named {
            let reason: ApprovalReason = serde_json::from_value(variant["const"].clone()).unwrap();
            assert_eq!(reason.as_str(), variant["const"]);
        }
    }
}
