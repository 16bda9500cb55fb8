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

    /// Waits for the redirect to `/callback` and answers the full URL it carried. Other
    /// requests (a browser's favicon) get a 404 and the wait goes on.
    pub async fn wait(self, timeout: Duration) -> Result<String, String> {
        let origin = self.redirect_uri.trim_end_matches("/callback").to_string();
        let accept = async {
            loop {
                let (mut stream, _) = self
                    .listener
                    .accept()
                    .await
                    .map_err(|e| format!("the redirect listener failed: {e}"))?;
                let mut buf = vec![0u8; 8192];
                let mut len = 0;
                // The request line is all we need; read until the end of the headers.
                while len < buf.len() {
                    match stream.read(&mut buf[len..]).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => len += n,
                    }
                    if buf[..len].windows(4).any(|w| w == b"\r\n\r\n") {
                        break;
                    }
                }
                let head = String::from_utf8_lossy(&buf[..len]);
                let target = head
                    .lines()
                    .next()
                    .and_then(|l| l.split_whitespace().nth(1))
                    .unwrap_or("/")
                    .to_string();
                if !target.starts_with("/callback") {
                    let _ = stream
                        .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .await;
                    continue;
                }
                let body = "<!doctype html><title>mcpmux</title><p>Signed in. You can close this window.</p>";
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
                return Ok(format!("{origin}{target}"));
            }
        };
        tokio::time::timeout(timeout, accept)
            .await
            .map_err(|_| format!("no authorization within {} s", timeout.as_secs()))?
    }
}

/// Opens `url` in the user's browser.
pub(crate) fn open_browser(url: &str) -> Result<(), String> {
    let (program, args): (&str, Vec<&str>) = if cfg!(target_os = "macos") {
        ("open", vec![url])
    } else if cfg!(windows) {
        ("cmd", vec!["/C", "start", "", url])
    } else {
        ("xdg-open", vec![url])
    };
    std::process::Command::new(program)
        .args(args)
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
        let waiting = tokio::spawn(lb.wait(Duration::from_secs(10)));
        let base = uri.trim_end_matches("/callback").to_string();
        let client = reqwest::Client::new();
        let r = client
            .get(format!("{base}/favicon.ico"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
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
        let e = lb.wait(Duration::from_millis(50)).await.unwrap_err();
        assert!(e.contains("no authorization"), "{e}");
    }
}
