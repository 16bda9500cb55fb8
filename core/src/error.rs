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
    /// A server, tool, resource or prompt that does not exist; `hint` says what may have been
    /// meant instead (for a tool: the same tool under another form of its name, or a near miss).
    #[error("{kind} not found: {name}{}", hint.as_ref().map(|h| format!(" ({h})")).unwrap_or_default())]
    NotFound {
        kind: &'static str,
        name: String,
        hint: Option<String>,
    },
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
    /// `code` and `data` are the server's, when the error came from it (a gateway passes them
    /// on as they are).
    #[error("tool '{tool}' failed: {message}{}", code.map(|c| format!(" (code {c})")).unwrap_or_default())]
    Tool {
        tool: String,
        message: String,
        code: Option<i32>,
        data: Option<serde_json::Value>,
    },
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
    /// A tool's result does not match the tool's `outputSchema`: its `structuredContent` is
    /// missing or does not validate (both official SDKs check this). Each problem is led by
    /// the JSON pointer of the value at fault. `CallOptions::validate` set to `false` takes
    /// results as they are.
    #[error("{}", invalid_result(server, tool, problems))]
    InvalidResult {
        server: String,
        tool: String,
        problems: Vec<String>,
    },
    /// The server needs the user to open a URL before it can answer (JSON-RPC error -32042,
    /// URL mode elicitation), e.g. to authorize a third-party service. A host shows each
    /// URL, opens it if the user agrees, and retries the request once the server reports the
    /// elicitation complete (an `elicitation:complete` event).
    #[error("{}", url_elicitation(server, method, elicitations))]
    UrlElicitationRequired {
        server: String,
        method: String,
        elicitations: Vec<UrlElicitation>,
    },
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
    UrlElicitationRequired,
    InvalidResult,
}

impl ErrorKind {
    /// Every kind, in the order of their C status numbers: what each binding's table of
    /// error classes must cover (its tests compare with this list).
    pub const ALL: [ErrorKind; 13] = [
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
        ErrorKind::UrlElicitationRequired,
        ErrorKind::InvalidResult,
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
            ErrorKind::UrlElicitationRequired => "url_elicitation_required",
            ErrorKind::InvalidResult => "invalid_result",
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
            Error::UrlElicitationRequired { .. } => ErrorKind::UrlElicitationRequired,
            Error::InvalidResult { .. } => ErrorKind::InvalidResult,
        }
    }

    /// What the error carries besides its message, as JSON, for the kinds that carry
    /// something a host acts on: `{"elicitations": [{"elicitationId", "url", "message"}]}`
    /// for [`ErrorKind::UrlElicitationRequired`], `{"problems": ["/path: what"]}` for
    /// [`ErrorKind::InvalidResult`]. Every binding hands it over as it is.
    pub fn data(&self) -> Option<serde_json::Value> {
        match self {
            Error::UrlElicitationRequired { elicitations, .. } => {
                Some(serde_json::json!({ "elicitations": elicitations }))
            }
            Error::InvalidResult { problems, .. } => {
                Some(serde_json::json!({ "problems": problems }))
            }
            _ => None,
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
            hint: None,
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

/// An error and its causes in one line, each cause once (an error often repeats its cause's
/// message in its own).
pub(crate) fn with_causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = cause_of(error);
    while let Some(e) = cause {
        let message = e.to_string();
        if !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        cause = cause_of(e);
    }
    redact_request_urls(&text)
}

/// reqwest names the URL of a request that failed ("error sending request for url (URL)"),
/// and a URL's query or user info often holds a key, which an error never shows.
fn redact_request_urls(text: &str) -> String {
    const NAMED: &str = "for url (";
    let mut redacted = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(NAMED) {
        let start = at + NAMED.len();
        let end = rest[start..]
            .find(')')
            .map_or(rest.len(), |end| start + end);
        redacted.push_str(&rest[..start]);
        redacted.push_str(&crate::redact::redact_url(&rest[start..end]));
        rest = &rest[end..];
    }
    redacted.push_str(rest);
    redacted
}

/// An error's cause, including the HTTP client's error inside rmcp's, which rmcp does not
/// give as its source (it holds why a connection was refused, a name did not resolve, ...).
fn cause_of<'e>(
    error: &'e (dyn std::error::Error + 'static),
) -> Option<&'e (dyn std::error::Error + 'static)> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(client)) => Some(client),
        _ => error.source(),
    }
}

/// One URL a server asks the user to open (URL mode elicitation), from a -32042 error.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct UrlElicitation {
    /// The id the server's `notifications/elicitation/complete` names when it is done.
    pub elicitation_id: String,
    pub url: String,
    /// Why the server asks, to show the user.
    #[serde(default)]
    pub message: String,
}

impl UrlElicitation {
    /// The URL elicitations of a JSON-RPC error's `data` (`{"elicitations": [...]}`); entries
    /// that are not URL mode or lack a URL are left out.
    pub(crate) fn from_error_data(data: Option<&serde_json::Value>) -> Vec<UrlElicitation> {
        let entries = data
            .and_then(|d| d.get("elicitations"))
            .and_then(serde_json::Value::as_array);
        entries
            .into_iter()
            .flatten()
            .filter(|e| e.get("mode").is_none_or(|m| m == "url"))
            .filter_map(|e| serde_json::from_value(e.clone()).ok())
            .collect()
    }
}

/// The JSON-RPC error code of "URL elicitation required".
pub(crate) const URL_ELICITATION_REQUIRED: i32 = -32042;

/// Names the tool, its server and what is wrong, and how to take such results anyway.
fn invalid_result(server: &str, tool: &str, problems: &[String]) -> String {
    format!(
        "tool '{tool}' of server '{server}' answered a result that does not match its \
         outputSchema: {} (the call option validate: false takes such results as they are)",
        problems.join("; ")
    )
}

/// Names the server, the request and each URL, and what to do.
fn url_elicitation(server: &str, method: &str, elicitations: &[UrlElicitation]) -> String {
    let asks: Vec<String> = elicitations
        .iter()
        .map(|e| {
            if e.message.is_empty() {
                e.url.clone()
            } else {
                format!("{} ({})", e.url, e.message)
            }
        })
        .collect();
    format!(
        "{method} on server '{server}' needs the user to open {}: {}; open it, wait for the \
         server's elicitation:complete event, then retry",
        if asks.len() == 1 { "a URL" } else { "URLs" },
        asks.join(", ")
    )
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
    fn a_request_url_in_an_error_loses_its_query_and_user_info() {
        let io = std::io::Error::other(
            "error sending request for url (https://me:pw@mcp.example.com/mcp?key=s3cret): \
             client error (Connect)",
        );
        assert_eq!(
            with_causes(&io),
            "error sending request for url (https://<redacted>@mcp.example.com/mcp?<redacted>): \
             client error (Connect)"
        );
        let plain = std::io::Error::other("error sending request for url (http://127.0.0.1:1/mcp)");
        assert_eq!(with_causes(&plain), plain.to_string());
    }

    #[test]
    fn a_url_elicitation_error_names_the_urls_and_carries_them() {
        let data = serde_json::json!({"elicitations": [
            {"mode": "url", "elicitationId": "e1", "url": "https://example.com/connect?id=e1",
             "message": "Authorize access to your files."},
            {"mode": "form", "elicitationId": "e2", "message": "not a URL"},
            {"mode": "url", "elicitationId": "e3"}
        ]});
        let elicitations = UrlElicitation::from_error_data(Some(&data));
        assert_eq!(elicitations.len(), 1);
        let e = Error::UrlElicitationRequired {
            server: "files".into(),
            method: "tools/call".into(),
            elicitations,
        };
        assert_eq!(e.kind().as_str(), "url_elicitation_required");
        let text = e.to_string();
        for part in [
            "tools/call",
            "'files'",
            "https://example.com/connect?id=e1",
            "Authorize access",
            "retry",
        ] {
            assert!(text.contains(part), "{text}");
        }
        assert_eq!(
            e.data().unwrap(),
            serde_json::json!({"elicitations": [{"elicitationId": "e1",
                "url": "https://example.com/connect?id=e1",
                "message": "Authorize access to your files."}]})
        );
        assert!(Error::Cancelled.data().is_none());
    }

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
