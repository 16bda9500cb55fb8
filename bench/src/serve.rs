//! What `mcpmux serve` adds to a call: rmcp's client (the Rust anchor) calling the bench
//! server's `echo` through `mcpmux serve --stdio --mode direct` (the release CLI beside this
//! binary, on a config holding the bench server, started as a client would start it), to set
//! beside the same client calling the server directly (`rmcp`).
//!
//! `http_client` calls through `mcpmux serve --http` the same way, over Streamable HTTP on
//! 127.0.0.1.
//!
//! Beside it, the floor of any front: `relay-front` copies bytes between the client and the
//! bench server and does nothing else (no parsing, no names), so a front that cost nothing of
//! its own would score what `relay` scores. A served call still crosses one more process and
//! two more pipes than a direct one, on the same cores.

use std::process::Stdio;
use std::time::Instant;

use crate::clients::{Figures, multi_thread, open_pool, server_input};
use crate::fail;

/// `mcpmux-bench relay-front`: starts the bench server and copies stdin to its stdin and its
/// stdout to stdout, on the event loop (pipes polled, as `serve --stdio` polls them), until
/// either side closes.
pub(crate) fn relay_front() {
    use tokio::io::AsyncWriteExt;
    multi_thread().block_on(async {
        let mut server = tokio::process::Command::new(crate::server_path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| fail(&format!("spawn the bench server: {e}")));
        let mut to_server = server.stdin.take().unwrap();
        let mut from_server = server.stdout.take().unwrap();
        let mut stdin = pipe_of(std::io::stdin()).receiver();
        let mut stdout = pipe_of(std::io::stdout()).sender();
        let up = async {
            let _ = tokio::io::copy(&mut stdin, &mut to_server).await;
            let _ = to_server.shutdown().await;
        };
        let down = async {
            let _ = tokio::io::copy(&mut from_server, &mut stdout).await;
        };
        tokio::select! {
            () = up => {}
            () = down => {}
        }
    });
}

/// One of this process's standard pipes, to be polled on the event loop.
struct Pipe(std::fs::File);

fn pipe_of(fd: impl std::os::fd::AsFd) -> Pipe {
    let fd = fd
        .as_fd()
        .try_clone_to_owned()
        .unwrap_or_else(|e| fail(&format!("dup a standard pipe: {e}")));
    Pipe(std::fs::File::from(fd))
}

impl Pipe {
    fn receiver(self) -> tokio::net::unix::pipe::Receiver {
        tokio::net::unix::pipe::Receiver::from_file(self.0)
            .unwrap_or_else(|e| fail(&format!("stdin is not a pipe: {e}")))
    }

    fn sender(self) -> tokio::net::unix::pipe::Sender {
        tokio::net::unix::pipe::Sender::from_file(self.0)
            .unwrap_or_else(|e| fail(&format!("stdout is not a pipe: {e}")))
    }
}

/// rmcp's client through the relay: what `client` would measure with a front that cost
/// nothing.
pub(crate) async fn relay_client(k: usize, conc: usize) -> Figures {
    let started = Instant::now();
    let mut relay = spawn_self("relay-front");
    let transport = (relay.stdout.take().unwrap(), relay.stdin.take().unwrap());
    let figures = crate::clients::rmcp_calls(started, transport, "echo", k, conc).await;
    let _ = relay.wait().await;
    figures
}

/// This binary again, as `word`, on pipes.
fn spawn_self(word: &str) -> tokio::process::Child {
    tokio::process::Command::new(std::env::current_exe().unwrap())
        .arg(word)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| fail(&format!("spawn the {word}: {e}")))
}

/// rmcp's client through the front: connect (which starts the front; the bench server starts
/// on the first call, in the warm-up), then `bench__echo`.
pub(crate) async fn client(k: usize, conc: usize) -> Figures {
    let dir = tempfile::tempdir().unwrap();
    let config = bench_config(dir.path()).await;
    let cli = cli_path();
    let started = Instant::now();
    let mut front = tokio::process::Command::new(&cli)
        .arg("--config")
        .arg(&config)
        .args(["serve", "--stdio", "--mode", "direct"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| fail(&format!("spawn {}: {e}", cli.display())));
    let transport = (front.stdout.take().unwrap(), front.stdin.take().unwrap());
    // As `rmcp` does with the bench server. rmcp's client asks for 2026-07-28 in its
    // `initialize`, which the front answers, as rmcp's server does, with 2025-11-25 (the last
    // version that has `initialize`): the calls are a session's, their `_meta` the progress
    // token alone.
    let figures = crate::clients::rmcp_calls(started, transport, "bench__echo", k, conc).await;
    let _ = front.wait().await;
    figures
}

/// The token the HTTP front is served with in the bench.
const TOKEN: &str = "bench-token-of-the-http-front";

/// rmcp's Streamable HTTP client through `mcpmux serve --http` on 127.0.0.1 (a legacy
/// session: rmcp's client opens one with `initialize`), on one kept-alive connection as
/// reqwest keeps it: what an HTTP client's call costs through the front, beside the stdio
/// front's figures.
pub(crate) async fn http_client(k: usize, conc: usize) -> Figures {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use tokio::io::AsyncBufReadExt;

    let dir = tempfile::tempdir().unwrap();
    let config = bench_config(dir.path()).await;
    let cli = cli_path();
    let started = Instant::now();
    let mut front = tokio::process::Command::new(&cli)
        .arg("--config")
        .arg(&config)
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--token",
            TOKEN,
            "--mode",
            "direct",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| fail(&format!("spawn {}: {e}", cli.display())));
    // The front prints its URL alone on stdout once it listens.
    let mut url = String::new();
    tokio::io::BufReader::new(front.stdout.take().unwrap())
        .read_line(&mut url)
        .await
        .unwrap_or_else(|e| fail(&format!("read the front's URL: {e}")));
    let config = StreamableHttpClientTransportConfig::with_uri(url.trim()).auth_header(TOKEN);
    let transport = StreamableHttpClientTransport::from_config(config);
    crate::clients::rmcp_calls(started, transport, "bench__echo", k, conc).await
}

/// A config file in `dir` holding the bench server as `bench`, written by mcpmux itself.
async fn bench_config(dir: &std::path::Path) -> std::path::PathBuf {
    let pool = open_pool(dir, mcpmux::PoolOptions::default()).await;
    pool.add_server(server_input("bench", &[]))
        .await
        .unwrap_or_else(|e| fail(&format!("add_server: {e}")));
    pool.close().await;
    dir.join("servers.json")
}

/// The `mcpmux` CLI of the same build: `cargo build --release -p mcpmux-cli` puts it beside
/// this binary (bench/run.sh builds both).
fn cli_path() -> std::path::PathBuf {
    let cli = std::env::current_exe().unwrap().with_file_name("mcpmux");
    if !cli.exists() {
        fail(&format!(
            "{} is missing: build it with `cargo build --release -p mcpmux-cli`",
            cli.display()
        ));
    }
    cli
}
