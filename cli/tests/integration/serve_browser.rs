//! A browser UI on another origin using `mcpmux serve --http`, as the llama.cpp web UI does:
//! real headless Chromium (Debian's package) loads a page (tests/browser/page.html) from a
//! local origin that `--cors` allows, and the page opens a legacy session and makes a
//! 2026-07-28 stateless call through CORS (preflights, the token, the session id header).
//! From an origin not allowed, the browser refuses the page every answer.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

#[allow(dead_code)]
use crate::support::*;

const TOKEN: &str = "br0wser-test-token";

/// Serves `page.html` to every request on a free loopback port, for as long as the test
/// runs; its origin.
fn page_origin() -> String {
    let page = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/page.html"))
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n",
                page.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&page);
        }
    });
    origin
}

/// What the page wrote into `#out` after Chromium ran it (its scripts given up to 15 s).
fn run_page(chromium: &Path, origin: &str, mcp: &str) -> String {
    let url = format!("{origin}/page.html?mcp={mcp}&token={TOKEN}");
    let out = Command::new(chromium)
        .args([
            "--headless",
            // The test runs as root in CI, where Chromium's own sandbox cannot start.
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--virtual-time-budget=15000",
            "--dump-dom",
        ])
        .arg(&url)
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom
        .find("<pre id=\"out\">")
        .map(|i| i + "<pre id=\"out\">".len());
    let end = dom.find("</pre>");
    match (start, end) {
        (Some(start), Some(end)) if start <= end => dom[start..end].replace("&quot;", "\""),
        _ => panic!(
            "no #out in the page Chromium dumped: {dom}\n{}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn chromium() -> Option<std::path::PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("chromium"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        mcpmux_tests::skip_or_fail("chromium (Debian's package)");
    }
    found
}

#[test]
fn a_page_on_an_allowed_origin_uses_the_fleet_through_cors() {
    let Some(chromium) = chromium() else {
        return;
    };
    let (_dir, config) = fleet(false).unwrap();
    let origin = page_origin();
    let (_server, url) = serve_http(
        &config,
        &["--token", TOKEN, "--mode", "direct", "--cors", &origin],
    );
    let seen: serde_json::Value = serde_json::from_str(&run_page(&chromium, &origin, &url))
        .unwrap_or_else(|e| panic!("the page failed: {e}"));
    assert_eq!(seen["server"], "mcpmux", "{seen}");
    assert_eq!(
        seen["session"], true,
        "the page reads the session id: {seen}"
    );
    let tools = seen["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t == "demo__echo"), "{seen}");
    assert_eq!(seen["echo"], "from the page", "{seen}");
    assert_eq!(seen["stateless"], "stateless", "{seen}");
}

#[test]
fn a_page_on_another_origin_is_refused() {
    let Some(chromium) = chromium() else {
        return;
    };
    let (_dir, config) = fleet(false).unwrap();
    let origin = page_origin();
    let (_server, url) = serve_http(
        &config,
        &["--token", TOKEN, "--cors", "http://localhost:5173"],
    );
    let seen = run_page(&chromium, &origin, &url);
    assert!(seen.starts_with("failed: TypeError"), "{seen}");
}
