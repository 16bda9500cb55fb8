//! The default way a user authorizes: the system browser opens the authorization URL and the
//! authorization server redirects to a one-shot listener on 127.0.0.1 (RFC 8252 loopback
//! redirect).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// How long a user has to finish signing in.
pub(crate) const AUTHORIZE_TIMEOUT: Duration = Duration::from_secs(300);

/// A listener waiting for the authorization server's redirect.
pub(crate) struct Loopback {
    listener: TcpListener,
    pub redirect_uri: String,
}

impl Loopback {
    pub async fn bind() -> std::io::Result<Loopback> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        Ok(Loopback {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}/callback"),
        })
    }

    /// Listens where an earlier grant was sent back (`http://127.0.0.1:PORT/callback`), so a
    /// new grant for the same registered client can use the same redirect URI; any free port
    /// when the URI names none.
    pub async fn bind_to(redirect_uri: &str) -> std::io::Result<Loopback> {
        let port = redirect_uri
            .split("://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|authority| authority.rsplit_once(':'))
            .and_then(|(_, p)| p.parse::<u16>().ok())
            .unwrap_or(0);
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let port = listener.local_addr()?.port();
        Ok(Loopback {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}/callback"),
        })
    }

    /// Waits for the redirect to `/callback` of the sign-in that `authorization_url` started
    /// and answers the full URL it carried. Other requests (a browser's favicon, a callback
    /// whose `state` is not that sign-in's: another tab's, or a page's forgery) are answered
    /// and the wait goes on: only the user's own redirect ends it.
    pub async fn wait(self, timeout: Duration, authorization_url: &str) -> Result<String, String> {
        let origin = self.redirect_uri.trim_end_matches("/callback").to_string();
        let expected = query_value(authorization_url, "state");
        let accept = async {
            // Each connection is read on its own: one that sends nothing must not hold the
            // listener the browser's redirect comes to.
            let mut reading = tokio::task::JoinSet::new();
            loop {
                let (mut stream, target) = tokio::select! {
                    accepted = self.listener.accept() => {
                        let (stream, _) =
                            accepted.map_err(|e| format!("the redirect listener failed: {e}"))?;
                        reading.spawn(read_request(stream));
                        continue;
                    }
                    Some(Ok(read)) = reading.join_next() => read,
                };
                let Some(target) = target else { continue };
                let reply = if !target.starts_with("/callback") {
                    page("404 Not Found", "Not found.")
                } else if expected.is_some() && query_value(&target, "state") != expected {
                    page(
                        "400 Bad Request",
                        "This is not the sign-in mcpmux is waiting for. Use the link mcpmux \
                         opened.",
                    )
                } else {
                    let done = page("200 OK", "Signed in. You can close this window.");
                    let _ = stream.write_all(done.as_bytes()).await;
                    return Ok(format!("{origin}{target}"));
                };
                let _ = stream.write_all(reply.as_bytes()).await;
            }
        };
        tokio::time::timeout(timeout, accept)
            .await
            .map_err(|_| format!("no authorization within {} s", timeout.as_secs()))?
    }
}

/// How long a connection to the listener has to send its request line and headers.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// The connection and the target of its HTTP request (`/callback?code=...`), read up to the
/// end of its headers; no target when it sent none in time.
async fn read_request(
    mut stream: tokio::net::TcpStream,
) -> (tokio::net::TcpStream, Option<String>) {
    let _ = stream.set_nodelay(true);
    let mut buf = vec![0u8; 8192];
    let mut len = 0;
    let read = tokio::time::timeout(READ_TIMEOUT, async {
        while len < buf.len() {
            match stream.read(&mut buf[len..]).await {
                Ok(0) | Err(_) => break,
                Ok(n) => len += n,
            }
            if buf[..len].windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
    })
    .await;
    if read.is_err() {
        return (stream, None);
    }
    let head = String::from_utf8_lossy(&buf[..len]);
    let target = head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("/")
        .to_string();
    (stream, Some(target))
}

/// A small HTML answer that closes the connection.
fn page(status: &str, text: &str) -> String {
    let body = format!("<!doctype html><title>mcpmux</title><p>{text}</p>");
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    )
}

/// The value of the query parameter `name` in `url` (a whole URL or a path with a query).
fn query_value(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1.split('#').next()?;
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// Whether a browser may be sent to `url`: an `https:` page, or an `http:` one on this
/// machine (a local authorization server). Anything else (`file:`, a custom scheme that
/// starts a program, plain `http:` across the network) an authorization server does not get
/// to open.
fn openable(url: &str) -> bool {
    let Ok(parsed) = url::Url::parse(url) else {
        return false;
    };
    match parsed.scheme() {
        "https" => true,
        "http" => match parsed.host() {
            Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

/// Opens `url` in the user's browser, without a shell (the specification forbids one: a
/// URL is no command line): `open` on macOS, `xdg-open` elsewhere on Unix, the shell's
/// `ShellExecuteW` API on Windows.
pub(crate) fn open_browser(url: &str) -> Result<(), String> {
    if !openable(url) {
        return Err(format!(
            "not opening {}: an authorization URL must be https:, or http: on this machine",
            crate::redact::redact_url(url)
        ));
    }
    launch(url)
}

#[cfg(windows)]
fn launch(url: &str) -> Result<(), String> {
    use windows_sys::Win32::UI::Shell::ShellExecuteW;
    use windows_sys::Win32::UI::WindowsAndMessaging::SW_SHOWNORMAL;
    let wide = |s: &str| s.encode_utf16().chain(Some(0)).collect::<Vec<u16>>();
    let (verb, file) = (wide("open"), wide(url));
    // SAFETY: both strings are NUL-terminated UTF-16 that outlive the call; the other
    // pointers may be null.
    let code = unsafe {
        ShellExecuteW(
            std::ptr::null_mut(),
            verb.as_ptr(),
            file.as_ptr(),
            std::ptr::null(),
            std::ptr::null(),
            SW_SHOWNORMAL,
        )
    } as isize;
    // Values above 32 mean success (the API's own convention).
    match code > 32 {
        true => Ok(()),
        false => Err(format!("cannot open a browser (ShellExecuteW: {code})")),
    }
}

#[cfg(not(windows))]
fn launch(url: &str) -> Result<(), String> {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
        .map_err(|e| format!("cannot open a browser ({program}: {e})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_redirect_is_caught_and_other_paths_are_not() {
        let lb = Loopback::bind().await.unwrap();
        let uri = lb.redirect_uri.clone();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"));
        let authorize = "https://auth.example/authorize?client_id=c&state=xyz";
        let waiting = tokio::spawn(lb.wait(Duration::from_secs(10), authorize));
        let base = uri.trim_end_matches("/callback").to_string();
        let client = reqwest::Client::new();
        let r = client
            .get(format!("{base}/favicon.ico"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
        // Another sign-in's state, or none, is not this one's: the wait goes on.
        for wrong in ["?code=evil&state=other", "?code=evil"] {
            let r = client.get(format!("{uri}{wrong}")).send().await.unwrap();
            assert_eq!(r.status(), 400);
        }
        // Nor does a connection that says nothing hold the listener.
        let _silent = tokio::net::TcpStream::connect(base.trim_start_matches("http://"))
            .await
            .unwrap();
        let r = client
            .get(format!("{uri}?code=abc&state=xyz"))
            .send()
            .await
            .unwrap();
        assert!(r.text().await.unwrap().contains("Signed in"));
        assert_eq!(
            waiting.await.unwrap().unwrap(),
            format!("{uri}?code=abc&state=xyz")
        );
    }

    #[tokio::test]
    async fn waiting_ends() {
        let lb = Loopback::bind().await.unwrap();
        let e = lb.wait(Duration::from_millis(50), "").await.unwrap_err();
        assert!(e.contains("no authorization"), "{e}");
    }

    #[test]
    fn only_https_or_a_local_http_page_is_opened() {
        for ok in [
            "https://auth.example/authorize?x=1",
            "http://127.0.0.1:9000/authorize",
            "http://localhost/authorize",
            "http://[::1]:8080/a",
        ] {
            assert!(openable(ok), "{ok}");
        }
        for bad in [
            "http://auth.example/authorize",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "ms-settings:privacy",
            "calc.exe",
            "\"https://a.example\" & calc",
        ] {
            assert!(!openable(bad), "{bad}");
        }
        assert!(
            open_browser("file:///etc/passwd")
                .unwrap_err()
                .contains("https:")
        );
    }
}
