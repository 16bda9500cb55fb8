//! The one error type of mcpmux. Every binding maps [`ErrorKind`] once: to a C status code,
//! a Python exception class and a JS error code.

use std::path::PathBuf;
use std::time::Duration;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every failure mcpmux reports. Messages never contain secrets (env or header values).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The config file exists but cannot be used; it is left untouched.
    #[error("invalid config file {}: {message}", path.display())]
    InvalidConfig { path: PathBuf, message: String },
    /// A caller passed something unusable (bad JSON, duplicate name, disabled tool, ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A server, tool, resource or prompt that does not exist.
    #[error("{kind} not found: {name}")]
    NotFound { kind: &'static str, name: String },
    /// The server could not be reached, or its connection died.
    #[error("connection to server '{server}' failed: {message}")]
    Connection { server: String, message: String },
    /// No answer within the allowed time.
    #[error("{what} timed out after {}", humanize(*after))]
    Timeout { what: String, after: Duration },
    /// The caller cancelled the operation.
    #[error("cancelled")]
    Cancelled,
    /// The server broke the protocol or answered a request with a JSON-RPC error.
    #[error("protocol error from server '{server}': {message}")]
    Protocol { server: String, message: String },
    /// A tool call was answered with a JSON-RPC error (a result with `isError` is not an error).
    #[error("tool '{tool}' failed: {message}")]
    Tool { tool: String, message: String },
    /// A server sent one message larger than the pool accepts (the pool option
    /// `maxMessageBytes`); the connection it came on was closed, and the next use opens a new
    /// one. `size` is the message's size when the transport saw all of it.
    #[error("{}", too_large(server, *size, *limit))]
    MessageTooLarge {
        server: String,
        size: Option<u64>,
        limit: u64,
    },
    /// The pool is closing and takes no new work.
    #[error("the pool is shutting down")]
    ShuttingDown,
    /// A file or process operation failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

/// The stable category of an [`Error`], the part bindings map to codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    InvalidConfig,
    InvalidArgument,
    NotFound,
    Connection,
    Timeout,
    Cancelled,
    Protocol,
    Tool,
    MessageTooLarge,
    ShuttingDown,
    Io,
}

impl ErrorKind {
    /// Every kind, in the order of their C status numbers: what each binding's table of
    /// error classes must cover (its tests compare with this list).
    pub const ALL: [ErrorKind; 11] = [
        ErrorKind::InvalidConfig,
        ErrorKind::InvalidArgument,
        ErrorKind::NotFound,
        ErrorKind::Connection,
        ErrorKind::Timeout,
        ErrorKind::Cancelled,
        ErrorKind::Protocol,
        ErrorKind::Tool,
        ErrorKind::MessageTooLarge,
        ErrorKind::ShuttingDown,
        ErrorKind::Io,
    ];

    /// A stable snake_case code, used as the `code` of JS errors and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidConfig => "invalid_config",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::NotFound => "not_found",
            ErrorKind::Connection => "connection",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Tool => "tool",
            ErrorKind::MessageTooLarge => "message_too_large",
            ErrorKind::ShuttingDown => "shutting_down",
            ErrorKind::Io => "io",
        }
    }
}

impl Error {
    /// The category of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::InvalidConfig { .. } => ErrorKind::InvalidConfig,
            Error::InvalidArgument(_) => ErrorKind::InvalidArgument,
            Error::NotFound { .. } => ErrorKind::NotFound,
            Error::Connection { .. } => ErrorKind::Connection,
            Error::Timeout { .. } => ErrorKind::Timeout,
            Error::Cancelled => ErrorKind::Cancelled,
            Error::Protocol { .. } => ErrorKind::Protocol,
            Error::Tool { .. } => ErrorKind::Tool,
            Error::MessageTooLarge { .. } => ErrorKind::MessageTooLarge,
            Error::ShuttingDown => ErrorKind::ShuttingDown,
            Error::Io { .. } => ErrorKind::Io,
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    pub(crate) fn not_found(kind: &'static str, name: impl Into<String>) -> Self {
        Error::NotFound {
            kind,
            name: name.into(),
        }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Error::InvalidArgument(message.into())
    }

    pub(crate) fn connection(server: impl Into<String>, message: impl std::fmt::Display) -> Self {
        Error::Connection {
            server: server.into(),
            message: message.to_string(),
        }
    }
}

/// Names the server, the size, the limit, and the option that raises it.
fn too_large(server: &str, size: Option<u64>, limit: u64) -> String {
    let seen = match size {
        Some(n) => format!("a message of {n} bytes"),
        None => "a message".to_string(),
    };
    format!(
        "server '{server}' sent {seen}, over the limit of {limit} bytes ({}); raise the pool \
         option maxMessageBytes (max_message_bytes; 16 MiB by default) to accept it",
        bytes(limit)
    )
}

/// A byte count the way people read it: 16 MiB, 40.0 MiB, 512 KiB.
fn bytes(n: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if n >= MIB {
        if n.is_multiple_of(MIB) {
            format!("{} MiB", n / MIB)
        } else {
            format!("{:.1} MiB", n as f64 / MIB as f64)
        }
    } else if n >= 1024 {
        format!("{} KiB", n / 1024)
    } else {
        format!("{n} B")
    }
}

fn humanize(d: Duration) -> String {
    if d.as_millis() < 1000 {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_too_large_names_the_server_sizes_and_option() {
        let e = Error::MessageTooLarge {
            server: "big".into(),
            size: Some(41_943_062),
            limit: 16 * 1024 * 1024,
        };
        assert_eq!(e.kind(), ErrorKind::MessageTooLarge);
        assert_eq!(e.kind().as_str(), "message_too_large");
        let text = e.to_string();
        for part in [
            "'big'",
            "41943062 bytes",
            "16777216 bytes",
            "16 MiB",
            "maxMessageBytes",
        ] {
            assert!(text.contains(part), "{text}");
        }
        let no_size = Error::MessageTooLarge {
            server: "s".into(),
            size: None,
            limit: 1536,
        };
        assert!(
            no_size
                .to_string()
                .contains("sent a message, over the limit of 1536 bytes (1 KiB)")
        );
    }
}
