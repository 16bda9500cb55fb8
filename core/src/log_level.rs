//! How severe a server's log message is: beneath the records that ask a server for a level
//! and the events that carry what it sent.

use serde::{Deserialize, Serialize};

/// How severe a server's log message is (syslog's levels, as MCP names them), least first.
/// As an option, the least severe a server is asked to send.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The protocol's value.
    #[allow(
        deprecated,
        reason = "server logging (SEP-2577) is deprecated but still sent"
    )]
    pub(crate) fn to_mcp(self) -> rmcp::model::LoggingLevel {
        use rmcp::model::LoggingLevel as L;
        match self {
            LogLevel::Debug => L::Debug,
            LogLevel::Info => L::Info,
            LogLevel::Notice => L::Notice,
            LogLevel::Warning => L::Warning,
            LogLevel::Error => L::Error,
            LogLevel::Critical => L::Critical,
            LogLevel::Alert => L::Alert,
            LogLevel::Emergency => L::Emergency,
        }
    }
}
