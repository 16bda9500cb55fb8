//! CORS for the browser pages a served pool allows (`allowedOrigins`, `--cors`): a page on
//! another origin (the llama.cpp web UI, a dev server on localhost:5173) must get a preflight
//! answered before it may send the token, and must be allowed to read the answers and the
//! session id. Other origins get no CORS headers, and rmcp refuses their requests.

use hyper::header::{HeaderMap, HeaderValue};

/// Request headers a page may send to `/mcp`: the transport's, and 2026-07-28's routing
/// headers (`Mcp-Method`, `Mcp-Name`; a tool's `Mcp-Param-*` headers are allowed as asked).
const ALLOW_HEADERS: &str = "authorization, dpop, content-type, accept, mcp-session-id, \
                             mcp-protocol-version, last-event-id, mcp-method, mcp-name";

/// The prefix of the headers a 2026-07-28 client sends for a tool's `x-mcp-header` arguments.
const PARAM_HEADER: &str = "mcp-param-";
/// Response headers a page may read.
const EXPOSE_HEADERS: &str = "mcp-session-id, mcp-protocol-version, www-authenticate";
const ALLOW_METHODS: &str = "GET, POST, DELETE, OPTIONS";

/// The allowed origins, as given.
#[derive(Debug, Clone, Default)]
pub struct Cors {
    origins: Vec<String>,
}

impl Cors {
    pub fn new(origins: &[String]) -> Cors {
        Cors {
            origins: origins
                .iter()
                .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
                .collect(),
        }
    }

    /// The request's `Origin` when it is one of the allowed ones (`http://host:*` allows every
    /// port of the host, as rmcp's own check does).
    pub fn allowed(&self, headers: &HeaderMap) -> Option<HeaderValue> {
        let origin = headers.get(hyper::header::ORIGIN)?;
        let text = origin.to_str().ok()?.to_ascii_lowercase();
        let matches = self
            .origins
            .iter()
            .any(|allowed| match allowed.strip_suffix(":*") {
                Some(stem) => {
                    text == stem
                        || text
                            .strip_prefix(stem)
                            .and_then(|rest| rest.strip_prefix(':'))
                            .is_some_and(|port| {
                                !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit())
                            })
                }
                None => *allowed == text,
            });
        matches.then(|| origin.clone())
    }

    /// Adds what lets the page read the answer.
    pub fn decorate(origin: HeaderValue, headers: &mut HeaderMap) {
        headers.insert(hyper::header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(
            hyper::header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(EXPOSE_HEADERS),
        );
        headers.append(hyper::header::VARY, HeaderValue::from_static("Origin"));
    }

    /// The answer to a preflight from an allowed origin, which asked to send `requested`
    /// (its `Access-Control-Request-Headers`).
    pub fn preflight(
        origin: HeaderValue,
        requested: Option<&HeaderValue>,
        headers: &mut HeaderMap,
    ) {
        Cors::decorate(origin, headers);
        // Header names cannot be allowed by pattern: the tool parameters' ones asked for are
        // named back.
        let params: Vec<&str> = requested
            .and_then(|r| r.to_str().ok())
            .into_iter()
            .flat_map(|r| r.split(','))
            .map(str::trim)
            .filter(|h| {
                h.len() > PARAM_HEADER.len()
                    && h[..PARAM_HEADER.len()].eq_ignore_ascii_case(PARAM_HEADER)
                    && h.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            })
            .collect();
        let allowed = std::iter::once(ALLOW_HEADERS)
            .chain(params)
            .collect::<Vec<_>>()
            .join(", ");
        headers.insert(
            hyper::header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static(ALLOW_METHODS),
        );
        if let Ok(allowed) = HeaderValue::from_str(&allowed) {
            headers.insert(hyper::header::ACCESS_CONTROL_ALLOW_HEADERS, allowed);
        }
        headers.insert(
            hyper::header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("600"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(hyper::header::ORIGIN, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn only_the_allowed_origins_match() {
        let cors = Cors::new(&["http://localhost:5173".into(), "http://127.0.0.1:*".into()]);
        assert!(cors.allowed(&origin("http://localhost:5173")).is_some());
        assert!(cors.allowed(&origin("http://LOCALHOST:5173")).is_some());
        assert!(cors.allowed(&origin("http://127.0.0.1:8080")).is_some());
        assert!(cors.allowed(&origin("http://localhost:5174")).is_none());
        assert!(cors.allowed(&origin("http://127.0.0.1.evil:80")).is_none());
        assert!(cors.allowed(&origin("http://127.0.0.1:80x")).is_none());
        assert!(cors.allowed(&HeaderMap::new()).is_none());
    }

    #[test]
    fn a_preflight_allows_the_routing_and_tool_parameter_headers_asked_for() {
        let mut headers = HeaderMap::new();
        let asked = HeaderValue::from_static("authorization, Mcp-Param-Region, mcp-method, x-evil");
        let origin = HeaderValue::from_static("http://localhost:5173");
        Cors::preflight(origin, Some(&asked), &mut headers);
        let allowed = headers[hyper::header::ACCESS_CONTROL_ALLOW_HEADERS]
            .to_str()
            .unwrap();
        assert!(
            allowed.contains("mcp-method") && allowed.contains("mcp-name"),
            "{allowed}"
        );
        assert!(allowed.contains("Mcp-Param-Region"), "{allowed}");
        // A DPoP-bound token's proof (resource-server mode).
        assert!(allowed.contains("dpop"), "{allowed}");
        assert!(!allowed.contains("x-evil"), "{allowed}");
    }
}
