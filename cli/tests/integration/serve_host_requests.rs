//! An upstream's question (sampling, here) asked during a call goes to the client whose call
//! it is, never to another client that happens to have a call on that server: through a
//! Streamable HTTP upstream, which asks on the call's own stream, it reaches the caller even
//! with another client's call in flight; through a stdio upstream, which asks on the one
//! connection all clients share, it is refused while several clients have calls there, and
//! reaches the caller when it is alone. Two sessions of the Python SDK client, with
//! server-everything as the upstream both ways.

use std::path::Path;

use mcpmux_tests::{everything_command, free_port, start_everything};

#[allow(dead_code)]
use crate::support::*;

const TOKEN: &str = "host-requests-token-of-the-tests";

#[test]
fn an_upstreams_question_goes_to_the_client_whose_call_it_is() {
    let Some(python) = python_client() else {
        return;
    };
    let Some((node, args)) = everything_command() else {
        mcpmux_tests::skip_or_fail("server-everything");
        return;
    };
    let port = free_port();
    let Some(_streamed) = start_everything("streamableHttp", port) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("servers.json");
    let mut stdio_args = args.clone();
    stdio_args.push("stdio".into());
    add_stdio(&config, "shared", Path::new(&node), &stdio_args);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let out = mcpmux(&config, &["servers", "add", "streamed", "--url", &url]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_server, url) = serve_http(&config, &["--token", TOKEN, "--mode", "direct"]);
    run_python_client(
        &python,
        &["wrong-client", &url, TOKEN, "streamed", "placed"],
    );
    run_python_client(&python, &["wrong-client", &url, TOKEN, "shared", "refused"]);
}
