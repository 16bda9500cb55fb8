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
    ShuttingDown,
    Io,
}

impl ErrorKind {
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

fn humanize(d: Duration) -> String {
    if d.as_millis() < 1000 {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}
