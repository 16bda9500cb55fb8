//! What `mcpmux serve` adds to a call: rmcp's client (the Rust anchor) calling the bench
//! server's `echo` through a served pool over stdio, to set beside the same client calling the
//! server directly (`rmcp`). The front is this binary's `serve-front`: a pool with the bench
//! server, served over stdin and stdout by `Pool::serve_stdio` with the options `mcpmux serve
//! --stdio --mode direct` uses, in a process of its own as a client would start it.

use std::process::Stdio;
use std::time::Instant;

use crate::clients::{Figures, multi_thread, open_pool, server_input};
use crate::fail;

/// `mcpmux-bench serve-front`: serves a pool holding the bench server on stdio until stdin
/// closes.
pub(crate) fn front() {
    multi_thread().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let pool = open_pool(dir.path(), mcpmux::PoolOptions::default()).await;
        pool.add_server(server_input("bench", &[]))
            .await
            .unwrap_or_else(|e| fail(&format!("add_server: {e}")));
        let options = mcpmux::serve::ServeOptions {
            exposure: mcpmux::serve::Exposure::Direct,
            forward_host_requests: true,
            ..Default::default()
        };
        if let Err(e) = pool.serve_stdio(options).await {
            fail(&format!("serve_stdio: {e}"));
        }
        pool.close().await;
    });
}

/// rmcp's client through the front: connect (which starts the front; the bench server starts
/// on the first call, in the warm-up), then `bench__echo`.
pub(crate) async fn client(k: usize, conc: usize) -> Figures {
    let started = Instant::now();
    let mut front = tokio::process::Command::new(std::env::current_exe().unwrap())
        .arg("serve-front")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| fail(&format!("spawn the serve front: {e}")));
    let transport = (front.stdout.take().unwrap(), front.stdin.take().unwrap());
    // As `rmcp` does with the bench server, but the front speaks 2026-07-28 and rmcp prefers
    // it: each request then carries its own `_meta`, as a current client's do.
    let figures = crate::clients::rmcp_calls(started, transport, "bench__echo", k, conc).await;
    let _ = front.wait().await;
    figures
}
