//! `Pool::serve_http`, `Pool::serve_transport` and `Pool::serve_io` as a Rust host calls them (what the
//! bindings and `mcpmux serve` are built on): served names, the token, and the server's life
//! tied to the pool's.

use std::time::Duration;

use crate::common::*;
use mcpmux::CallOptions;
use mcpmux::serve::{HttpServeSettings, ServeOptions};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

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

/// `served` served over an in-memory byte stream (as on stdio); the client's end.
fn serve_bytes(
    served: &TestPool,
    options: ServeOptions,
) -> (
    tokio::task::JoinHandle<mcpmux::Result<()>>,
    tokio::io::DuplexStream,
) {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    let served = served.pool.clone();
    let serving = tokio::spawn(async move {
        let (reader, writer) = tokio::io::split(server_side);
        served.serve_io(options, reader, writer).await
    });
    (serving, client_side)
}

/// Over a byte stream (as on stdio) tool calls take the lane beside rmcp's session loop:
/// many at once each get their own answer, other requests go through the loop, and a
/// client's cancel of a call in the lane reaches the upstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_serves_a_byte_stream_and_a_cancel_reaches_the_upstream() {
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ServerResult};
    let served = served_pool().await;
    let (serving, client_side) = serve_bytes(&served, ServeOptions::default());
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

/// What a hand-written client of a served byte stream reads: its lines.
type ClientLines =
    tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>;
/// What a hand-written client of a served byte stream writes to.
type ClientWriting = tokio::io::WriteHalf<tokio::io::DuplexStream>;

/// A served byte stream after the handshake of a client that declares nothing: the lines it
/// is sent, and its writing half.
async fn handshake(client_side: tokio::io::DuplexStream) -> (ClientLines, ClientWriting) {
    let (reading, mut writing) = tokio::io::split(client_side);
    let mut lines = tokio::io::BufReader::new(reading).lines();
    let initialize = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "slow-reader", "version": "1"}}});
    send_line(&mut writing, &initialize).await;
    let initialized = lines
        .next_line()
        .await
        .unwrap()
        .expect("an initialize answer");
    assert!(initialized.contains("\"init\""), "{initialized}");
    let ready = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    send_line(&mut writing, &ready).await;
    (lines, writing)
}

async fn send_line(
    writing: &mut (impl tokio::io::AsyncWrite + Unpin),
    message: &serde_json::Value,
) {
    writing
        .write_all(format!("{message}\n").as_bytes())
        .await
        .unwrap();
}

/// Sends `messages` from a task of its own, giving the writing half back when all are sent.
fn send_all(
    mut writing: ClientWriting,
    messages: Vec<serde_json::Value>,
) -> tokio::task::JoinHandle<ClientWriting> {
    tokio::spawn(async move {
        for message in &messages {
            send_line(&mut writing, message).await;
        }
        writing
    })
}

fn call(id: usize, tool: &str, arguments: serde_json::Value) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}})
}

/// Reads lines until every one of `ids` is answered, checking each answer.
async fn read_answers(
    lines: &mut ClientLines,
    ids: std::ops::Range<usize>,
    check: impl Fn(&serde_json::Value),
) {
    let mut answered = std::collections::HashSet::new();
    while answered.len() < ids.len() {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("answers keep coming")
            .unwrap()
            .expect("the stream stays open");
        let answer: serde_json::Value = serde_json::from_str(&line).unwrap();
        let Some(id) = answer["id"].as_u64() else {
            continue;
        };
        check(&answer);
        assert!(ids.contains(&(id as usize)), "{id}");
        answered.insert(id);
    }
}

/// A client that writes calls and does not read their answers is held back, as by a server
/// blocked on its pipe, instead of the answers piling up in the serving process; once it
/// reads, every call is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_does_not_read_is_held_back_and_loses_nothing() {
    const BIG: usize = 20;
    const SMALL: usize = 3000;
    let served = served_pool().await;
    // The audit log says when the big calls are done, so their answers wait to be read.
    let audit_path = served.dir.path().join("audit.jsonl");
    let options = ServeOptions {
        audit: Some(std::sync::Arc::new(
            mcpmux::serve::audit::AuditLog::open(&audit_path).unwrap(),
        )),
        ..ServeOptions::default()
    };
    let (serving, client_side) = serve_bytes(&served, options);
    let (mut lines, mut writing) = handshake(client_side).await;
    // 20 MB of answers, five times what the serving side queues for a client, all answered;
    // then small calls, more than the pipe holds.
    for id in 0..BIG {
        let big = call(id, "upstream__big", json!({"size": 1 << 20}));
        send_line(&mut writing, &big).await;
    }
    let answered = tokio::time::timeout(Duration::from_secs(60), async {
        while !std::fs::read_to_string(&audit_path).is_ok_and(|log| log.lines().count() == BIG) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    assert!(
        answered.await.is_ok(),
        "the big calls are not all answered after 60 s"
    );
    // A call's audit line is written before its answer is made and queued, which for a 1 MB
    // answer takes a while in a debug build on a busy machine: until then the lane rightly
    // reads on, and once read a small call does not wait for the big answers.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let small = (BIG..BIG + SMALL)
        .map(|id| call(id, "upstream__echo", json!({"text": "small"})))
        .collect();
    let sending = send_all(writing, small);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        !sending.is_finished(),
        "{SMALL} more calls were taken in while 20 MB of answers waited to be read"
    );
    read_answers(&mut lines, 0..BIG + SMALL, |answer| {
        let text = answer["result"]["content"][0]["text"].as_str();
        assert!(
            text.is_some_and(|t| t == "small" || t.len() == 1 << 20),
            "{:.300}",
            answer.to_string()
        );
    })
    .await;
    end_bytes(sending, lines, serving).await;
    served.close().await;
}

/// A client with more calls in flight than the lane takes is held back until some end, and
/// then every call is answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_with_too_many_calls_in_flight_is_held_back() {
    const SLEEPS: usize = 1100;
    // About 350 KB of pings: well past what the pipe and the lane's read buffer hold together
    // (64 KB each). With 2,000 (88 KB) the test failed now and then on a busy machine: the
    // buffer, filled whole while the writer ran ahead, took in the rest.
    const PINGS: usize = 8000;
    let served = served_pool().await;
    let (serving, client_side) = serve_bytes(&served, ServeOptions::default());
    let (mut lines, writing) = handshake(client_side).await;
    // More sleeping calls than the lane runs at once, then pings (the loop's) enough to fill
    // the pipe: with no bound they are all read and answered at once.
    let mut messages: Vec<serde_json::Value> = (0..SLEEPS)
        .map(|id| call(id, "upstream__sleep", json!({"ms": 4000})))
        .collect();
    messages.extend(
        (SLEEPS..SLEEPS + PINGS).map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "ping"})),
    );
    let sending = send_all(writing, messages);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        !sending.is_finished(),
        "every message was taken in while {SLEEPS} calls were in flight"
    );
    read_answers(&mut lines, 0..SLEEPS + PINGS, |answer| {
        assert!(answer.get("error").is_none(), "{answer}");
    })
    .await;
    end_bytes(sending, lines, serving).await;
    served.close().await;
}

/// The client closes its end; serving ends.
async fn end_bytes(
    sending: tokio::task::JoinHandle<ClientWriting>,
    lines: ClientLines,
    serving: tokio::task::JoinHandle<mcpmux::Result<()>>,
) {
    let mut writing = sending.await.unwrap();
    writing.shutdown().await.unwrap();
    drop(lines);
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("serving ends when the client closes its end")
        .unwrap()
        .unwrap();
}
