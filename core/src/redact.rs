//! Credentials out of what is shown: a URL's user info and query, and the credentials that
//! log lines (ours and dependencies') are known to carry. Below every layer, because an
//! error's message, a transport's log line and the CLI's log writer all need it.

/// Drops user info and the query string of a URL: both commonly carry credentials.
pub fn redact_url(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, _)) => (b, "?<redacted>"),
        None => (url, ""),
    };
    let Some((scheme, rest)) = base.split_once("://") else {
        return format!("{base}{query}");
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let (user, host) = match authority.rsplit_once('@') {
        Some((_, host)) => ("<redacted>@", host),
        None => ("", authority),
    };
    format!("{scheme}://{user}{host}{path}{query}")
}

/// `text` (a log line, whoever wrote it) with the credentials of every URL in it taken out,
/// as [`redact_url`] does, also where a URL is shown as `url::Url`'s `Debug` (`password:
/// Some("…")`, `query: Some("…")`). A line without a URL is returned as it is.
pub fn redact_urls_in(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("://") && !text.contains("query: Some(") && !text.contains("password: Some(")
    {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let scheme_len = rest[..at]
            .bytes()
            .rev()
            .take_while(|b| b.is_ascii_alphanumeric() || b"+-.".contains(b))
            .count();
        let start = at - scheme_len;
        let end = at
            + rest[at..]
                .find(|c: char| c.is_whitespace() || "\"'<>`".contains(c))
                .unwrap_or(rest.len() - at);
        out.push_str(&rest[..start]);
        match scheme_len {
            0 => out.push_str(&rest[start..end]),
            _ => out.push_str(&redact_url(&rest[start..end])),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    for field in ["query: Some(\"", "password: Some(\""] {
        out = redact_debug_field(&out, field);
    }
    std::borrow::Cow::Owned(out)
}

/// Where a dependency's log line shows a credential as a quoted `Debug` string: rmcp's debug
/// line before it exchanges an authorization code shows the code.
const CREDENTIAL_FIELDS: &[&str] = &["exchange code for token: \""];

/// `text` (a log line, whoever wrote it) with every credential mcpmux knows a shape of taken
/// out: those of URLs ([`redact_urls_in`]) and those dependencies' lines show by name.
pub fn redact_log_line(text: &str) -> std::borrow::Cow<'_, str> {
    let urls = redact_urls_in(text);
    if !CREDENTIAL_FIELDS.iter().any(|f| urls.contains(f)) {
        return urls;
    }
    let mut out = urls.into_owned();
    for field in CREDENTIAL_FIELDS {
        out = redact_debug_field(&out, field);
    }
    std::borrow::Cow::Owned(out)
}

/// `text` with the string after each `field` (a `Debug` field's opening, ending in a quote)
/// replaced by `<redacted>`.
fn redact_debug_field(text: &str, field: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(field) {
        let value = &rest[at + field.len()..];
        // The closing quote: the first one that no backslash escapes.
        let mut end = None;
        let mut escaped = false;
        for (i, c) in value.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        out.push_str(&rest[..at + field.len()]);
        out.push_str("<redacted>");
        rest = match end {
            Some(end) => &value[end..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_in_a_log_line_lose_their_credentials_in_either_form() {
        let line = "connecting to https://user:pw@api.example/mcp?api_key=s3cret&x=1 (retry 2)";
        assert_eq!(
            redact_urls_in(line),
            "connecting to https://<redacted>@api.example/mcp?<redacted> (retry 2)"
        );
        let quoted = r#"uri="http://127.0.0.1:9/mcp?token=abc" next"#;
        assert_eq!(
            redact_urls_in(quoted),
            r#"uri="http://127.0.0.1:9/mcp?<redacted>" next"#
        );
        let debug = r#"Url { scheme: "http", password: Some("p\"w"), path: "/mcp", query: Some("key=abc"), fragment: None }"#;
        let shown = redact_urls_in(debug);
        assert!(
            !shown.contains("abc") && !shown.contains("p\\\"w"),
            "{shown}"
        );
        assert!(shown.contains(r#"query: Some("<redacted>")"#), "{shown}");
        assert!(matches!(
            redact_urls_in("no url here"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(redact_urls_in("a :// b"), "a :// b");
    }

    #[test]
    fn a_log_line_loses_the_authorization_code_rmcp_shows() {
        let line = r#"DEBUG rmcp::transport::auth: start exchange code for token: "c0de-v4lue" at http://127.0.0.1:9/cb?code=c0de-v4lue"#;
        let shown = redact_log_line(line);
        assert!(!shown.contains("c0de-v4lue"), "{shown}");
        assert!(
            shown.contains(
                r#"exchange code for token: "<redacted>" at http://127.0.0.1:9/cb?<redacted>"#
            ),
            "{shown}"
        );
        assert!(matches!(
            redact_log_line("no secret here"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
