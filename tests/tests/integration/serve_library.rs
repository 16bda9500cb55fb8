//! `Pool::serve_http`, `Pool::serve_transport` and `Pool::serve_io` as a Rust host calls them (what the
//! bindings and `mcpmux serve` are built on): served names, the token, and the server's life
//! tied to the pool's.

use std::time::Duration;

use crate::common::*;
use mcpmux::CallOptions;
use mcpmux::serve::{HttpServeSettings, ServeOptions};
use serde_json::json;

async fn served_pool() -> TestPool {
    let served = pool().await;
    served
        .add_server(test_server("upstream", &[]))
        .await
        .unwrap();
    served
}

/// A client pool with the served URL as its server `fleet`, sending `token`.
async fn client(url: &str, token: &str) -> TestPool {
    let client = pool().await;
    let mut input = remote("fleet", url.to_string(), None);
    input
        .config
        .headers
        .insert("Authorization".into(), format!("Bearer {token}"));
    client.add_server(input).await.unwrap();
    client
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_pool_answers_under_served_names_and_stops_with_the_pool() {
    let served = served_pool().await;
    let settings = HttpServeSettings::from_json(r#"{"mode": "direct"}"#).unwrap();
    let (serve, http) = settings.into_options().unwrap();
    let server = served.serve_http(serve, http).await.unwrap();
    let token = server.token().expect("a generated token").to_string();
    let url = server.url();

    let client = client(&url, &token).await;
    let echoed = client
        .call_tool(
            "mcp__fleet__upstream__echo",
            json!({"text": "served"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text(&echoed), "served");

    // Without the token nothing is served (the client's words for it vary: a 401 sends it
    // looking for OAuth, which this server does not offer).
    let stranger = client_refused(&url, "not-the-token").await;
    assert!(stranger.contains("'fleet'"), "{stranger}");

    // Closing the pool stops what serves it: the port refuses connections.
    let addr = server.local_addr();
    served.close().await;
    let refused = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if tokio::net::TcpStream::connect(addr).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(
        refused.is_ok(),
        "{addr} still accepts after the pool closed"
    );
    let (serve, http) = HttpServeSettings::default().into_options().unwrap();
    let again = served.serve_http(serve, http).await;
    assert!(
        matches!(again, Err(mcpmux::Error::ShuttingDown)),
        "a closed pool is not served: {:?}",
        again.err()
    );
    drop(server);
    client.close().await;
}

/// The error a client with `token` gets.
async fn client_refused(url: &str, token: &str) -> String {
    let client = client(url, token).await;
    let err = client.connect("fleet").await.unwrap_err().to_string();
    client.close().await;
    err
}

/// Over a byte stream (as on stdio) tool calls take the lane beside rmcp's session loop:
/// many at once each get their own answer, other requests go through the loop, and a
/// client's cancel of a call in the lane reaches the upstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_serves_a_byte_stream_and_a_cancel_reaches_the_upstream() {
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ServerResult};
    let served = served_pool().await;
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    let serving = {
        let served = served.pool.clone();
        tokio::spawn(async move {
            let (reader, writer) = tokio::io::split(server_side);
            served
                .serve_io(ServeOptions::default(), reader, writer)
                .await
        })
    };
    let peer = ().serve(client_side).await.unwrap();
    let add = |a: i64| {
        let peer = peer.clone();
        async move {
            let args = json!({"a": a, "b": 1000});
            let params = CallToolRequestParams::new("upstream__add")
                .with_arguments(args.as_object().unwrap().clone());
            text(&peer.call_tool(params).await.unwrap())
        }
    };
    let answers = futures::future::join_all((0..64).map(add)).await;
    let expected: Vec<String> = (0..64).map(|a| (a + 1000).to_string()).collect();
    assert_eq!(answers, expected);
    let tools = peer.list_all_tools().await.unwrap();
    assert!(
        tools.iter().any(|t| t.name == "upstream__sleep"),
        "{tools:?}"
    );

    let args = json!({"ms": 60_000});
    let params = CallToolRequestParams::new("upstream__sleep")
        .with_arguments(args.as_object().unwrap().clone());
    let sleeping = peer
        .send_cancellable_request(
            ClientRequest::CallToolRequest(CallToolRequest::new(params)),
            rmcp::service::PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    sleeping.cancel(None).await.unwrap();
    let mut cancelled = String::new();
    for _ in 0..100 {
        let result = peer
            .send_request(ClientRequest::CallToolRequest(CallToolRequest::new(
                CallToolRequestParams::new("upstream__cancelled"),
            )))
            .await
            .unwrap();
        let ServerResult::CallToolResult(result) = result else {
            panic!("not a tool's result: {result:?}");
        };
        cancelled = text(&result);
        if cancelled != "0" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(cancelled, "1", "the upstream's sleep was not cancelled");

    peer.cancel().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("serving ends when the client closes its end")
        .unwrap()
        .unwrap();
    served.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_serves_a_client_over_any_transport() {
    let served = served_pool().await;
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    let serving = {
        let served = served.pool.clone();
        tokio::spawn(async move {
            served
                .serve_transport(ServeOptions::default(), server_side)
                .await
        })
    };
    use rmcp::ServiceExt;
    let peer = ().serve(client_side).await.unwrap();
    let tools = peer.list_all_tools().await.unwrap();
    assert!(
        tools.iter().any(|t| t.name == "upstream__echo"),
        "{tools:?}"
    );
    let result = peer
        .call_tool(
            rmcp::model::CallToolRequestParams::new("upstream__add")
                .with_arguments(json!({"a": 2, "b": 3}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(text(&result), "5");
    peer.cancel().await.unwrap();
    serving.await.unwrap().unwrap();
    served.close().await;
}
