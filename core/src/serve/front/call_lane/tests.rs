use tokio::io::{AsyncBufReadExt, BufReader};

use super::lines::{Head, LaneId, Line, LineReader, MAX_LINE};
use super::output::{LoopWriter, Output};
use super::*;

/// Once a client reads its `initialize` answer, the calls it sends next take the lane.
#[tokio::test]
async fn the_session_opens_before_the_initialize_answer_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let pool = crate::pool::empty_pool(dir.path()).await;
    let seal = Arc::new(crate::serve::relay::seal::Seal::new(None).unwrap());
    let opening = Opening {
        gateway: Gateway::new(pool.clone(), Default::default(), seal),
        session: Arc::new(OnceLock::new()),
        ended: CancellationToken::new(),
    };
    // `session_at` finds the session open as soon as it has read the answer.
    let (_, end) = session_at(opening, "2025-11-25").await;
    end().await.unwrap();
    pool.close().await;
}

/// A pool with one host tool, `shape`, whose result carries what rmcp shapes by the
/// client's version: a `resultType` and structured content that is not an object.
async fn pool_with_a_shaped_tool(dir: &std::path::Path) -> crate::pool::Pool {
    let pool = crate::pool::Pool::open(crate::pool::PoolOptions {
        config_path: Some(dir.join("servers.json")),
        ..Default::default()
    })
    .await
    .unwrap();
    pool.register_tool(crate::tools::host_tools::HostTool {
        name: "shape".into(),
        description: "A result rmcp shapes by version".into(),
        input_schema: serde_json::json!({"type": "object"}),
        handler: Arc::new(|_| {
            Box::pin(async {
                let mut result =
                    rmcp::model::CallToolResult::success(vec![rmcp::model::ContentBlock::text(
                        "a list",
                    )]);
                result.structured_content = Some(serde_json::json!([1, 2]));
                Ok(result)
            })
        }),
    })
    .unwrap();
    pool
}

/// A session of `opening`'s gateway over a pipe, opened by an `initialize` asking for
/// `version`: open once the client has read the answer. Its peer, and what ends it.
async fn session_at(
    opening: Opening,
    version: &str,
) -> (
    Peer<RoleServer>,
    impl FnOnce() -> tokio::task::JoinHandle<()>,
) {
    use rmcp::ServiceExt;
    let session = opening.session.clone();
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    let serving = tokio::spawn(opening.serve(server_side));
    let (reading, mut writing) = tokio::io::split(client_side);
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "dispatch-check", "version": "1"}}});
    writing
        .write_all(format!("{initialize}\n").as_bytes())
        .await
        .unwrap();
    let answer = BufReader::new(reading).lines().next_line().await.unwrap();
    assert!(
        answer.as_ref().is_some_and(|a| a.contains("serverInfo")),
        "{answer:?}"
    );
    let peer = session.get().expect("the session opened").peer.clone();
    let end = move || {
        drop(writing);
        tokio::spawn(async move {
            let _ = serving.await.unwrap().unwrap().waiting().await;
        })
    };
    (peer, end)
}

/// The lane answers a call as rmcp's dispatch of the same request does: the same result
/// (shaped for the client's version) or the same error, for clients before and after
/// 2026-07-28, whatever protocol version the request's `_meta` names or lacks.
#[tokio::test]
async fn the_lane_answers_a_call_as_rmcps_dispatch_does() {
    use rmcp::model::{CallToolRequest, Implementation, RequestMetaObject};
    let dir = tempfile::tempdir().unwrap();
    let pool = pool_with_a_shaped_tool(dir.path()).await;
    let seal = Arc::new(crate::serve::relay::seal::Seal::new(None).unwrap());
    let gateway = Gateway::new(pool.clone(), Default::default(), seal);
    let metas = {
        let version = |v: &str| {
            let mut meta = RequestMetaObject::default();
            meta.insert("io.modelcontextprotocol/protocolVersion".into(), v.into());
            meta
        };
        let mut whole = version("2026-07-28");
        whole.set_client_info(Implementation::new("dispatch-check", "1"));
        whole.set_client_capabilities(Default::default());
        [
            RequestMetaObject::default(),
            version("1999-01-01"),
            version("2025-11-25"),
            version("2026-07-28"),
            whole,
        ]
    };
    let mut compared = 0;
    // An `initialize` asking for 2026-07-28 opens a session of the latest version before it.
    for session_version in ["2025-06-18", "2025-11-25", "2026-07-28"] {
        let opening = Opening {
            gateway: gateway.clone(),
            session: Arc::new(OnceLock::new()),
            ended: CancellationToken::new(),
        };
        let (peer, end) = session_at(opening, session_version).await;
        let listed = ServerHandler::list_tools(
            &gateway,
            None,
            RequestContext::new(RequestId::Number(2), peer.clone()),
        )
        .await
        .unwrap();
        let shape = listed.tools.iter().find(|t| t.name.ends_with("shape"));
        let shape = shape.expect("the host tool is served").name.to_string();
        for name in [shape.as_str(), "no_such_tool"] {
            for meta in &metas {
                let context = || {
                    let mut context = RequestContext::new(RequestId::Number(3), peer.clone());
                    context.meta = meta.clone();
                    context
                };
                let params = CallToolRequestParams::new(name.to_string());
                let ours = handle_call(&gateway, params.clone(), context()).await;
                let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
                let rmcps = Service::handle_request(&gateway, request, context()).await;
                let as_json = |r: &Result<ServerResult, ErrorData>| match r {
                    Ok(result) => serde_json::to_value(result).unwrap(),
                    Err(error) => serde_json::json!({"error": error}),
                };
                assert_eq!(
                    as_json(&ours),
                    as_json(&rmcps),
                    "{session_version} session, {name}, _meta {meta:?}"
                );
                compared += usize::from(ours.is_ok());
            }
        }
        end().await.unwrap();
    }
    // The tool answered for each session (not only errors were compared).
    assert!(compared >= 4, "{compared}");
    pool.close().await;
}

/// The lane reads a call's id and params as rmcp's parse of the request would.
#[test]
fn a_call_is_read_as_rmcp_reads_it() {
    let line = br#"{"params":{"_meta":{"progressToken":7},"arguments":{"text":"hi"},"name":"a__echo","requestState":"s"},"method":"tools/call","id":1.0,"jsonrpc":"2.0"}"#;
    let head: Head = serde_json::from_slice(line).unwrap();
    assert_eq!(head.version, "2.0");
    assert_eq!(head.method.as_deref(), Some("tools/call"));
    assert!(matches!(head.id, Some(LaneId(RequestId::Number(1)))));
    let ours = head.params.unwrap().into_call().unwrap();
    let line: serde_json::Value = serde_json::from_slice(line).unwrap();
    let rmcps: CallToolRequestParams = serde_json::from_value(line["params"].clone()).unwrap();
    assert_eq!(ours, rmcps);

    for (id, read) in [
        (r#""x-1""#, Some(RequestId::String("x-1".into()))),
        ("42", Some(RequestId::Number(42))),
        ("-3", Some(RequestId::Number(-3))),
        ("1.5", None),
        ("18446744073709551615", None),
        ("{}", None),
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call"}}"#);
        let head = serde_json::from_str::<Head>(&line).ok();
        let got = head.and_then(|h| h.id).map(|LaneId(id)| id);
        assert_eq!(got, read, "{line}");
    }
    // A call without a name is the loop's to refuse; so is another version.
    let nameless: Head =
        serde_json::from_str(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#)
            .unwrap();
    assert!(nameless.params.unwrap().into_call().is_none());
    let other: Head = serde_json::from_str(r#"{"jsonrpc":"1.0","id":1}"#).unwrap();
    assert_ne!(other.version, "2.0");
    let cancel: Head = serde_json::from_str(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r","reason":"x"}}"#,
    )
    .unwrap();
    let id = cancel.params.unwrap().request_id.map(|LaneId(id)| id);
    assert_eq!(id, Some(RequestId::String("r".into())));
}

async fn lines_of(input: &[u8]) -> Vec<String> {
    let mut reader = LineReader::new(input);
    let mut out = Vec::new();
    loop {
        match reader.next().await {
            Line::Whole(l) => out.push(String::from_utf8(l).unwrap()),
            Line::Oversized => out.push("<oversized>".into()),
            Line::End => return out,
        }
    }
}

#[tokio::test]
async fn lines_are_split_trimmed_and_blank_ones_skipped() {
    let lines = lines_of(b"{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"unterminated\"").await;
    assert_eq!(lines, ["{\"a\":1}\n", "{\"b\":2}\n"]);
}

#[tokio::test]
async fn an_oversized_line_is_dropped_and_the_next_one_read() {
    let mut input = vec![b'x'; MAX_LINE + 10];
    input.extend_from_slice(b"\n{\"after\":true}\n");
    assert_eq!(
        lines_of(&input).await,
        ["<oversized>", "{\"after\":true}\n"]
    );
}

#[tokio::test]
async fn the_loop_writer_flushes_once_its_lines_are_written() {
    let (client, server) = tokio::io::duplex(1 << 16);
    let (output, task) = Output::start(server);
    let mut writer = LoopWriter::new(output.clone());
    writer.write_all(b"{\"first\":").await.unwrap();
    writer.write_all(b"1}\n{\"second\"").await.unwrap();
    writer.flush().await.unwrap();
    output.queue(b"{\"lane\":true}\n");
    writer.write_all(b":2}\n").await.unwrap();
    writer.flush().await.unwrap();
    output.close();
    task.await.unwrap();
    let mut read = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut { client }, &mut read)
        .await
        .unwrap();
    assert_eq!(read, "{\"first\":1}\n{\"lane\":true}\n{\"second\":2}\n");
}

#[tokio::test]
async fn lines_longer_than_the_pipe_holds_are_written_whole_and_in_order() {
    let (client, server) = tokio::io::duplex(8);
    let (output, task) = Output::start(server);
    output.queue(b"{\"first\":\"longer than the pipe holds\"}\n");
    output.queue(b"{\"second\":2}\n");
    let reading = tokio::spawn(async move {
        let mut read = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut { client }, &mut read)
            .await
            .map(|_| read)
    });
    output.close();
    task.await.unwrap();
    assert_eq!(
        reading.await.unwrap().unwrap(),
        "{\"first\":\"longer than the pipe holds\"}\n{\"second\":2}\n"
    );
    assert_eq!(output.backlog(), 0);
}

#[tokio::test]
async fn a_flush_after_the_client_left_fails_instead_of_hanging() {
    let (client, server) = tokio::io::duplex(16);
    drop(client);
    let (output, task) = Output::start(server);
    let mut writer = LoopWriter::new(output);
    writer.write_all(b"{\"to\":\"nobody\"}\n").await.unwrap();
    assert!(writer.flush().await.is_err());
    task.await.unwrap();
}

mod properties {
    use super::*;
    use crate::arbitrary;
    use proptest::prelude::*;
    use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
    use serde_json::{Value, json};

    /// A call as its handler gets it: the id, the params, and the request's `_meta`
    /// (which rmcp's parse moves out of the params, into the context).
    type Call = (
        RequestId,
        CallToolRequestParams,
        rmcp::model::RequestMetaObject,
    );

    /// What rmcp makes of a line: a `tools/call`, or nothing.
    fn rmcps(line: &str) -> Option<Call> {
        use rmcp::model::GetMeta;
        match serde_json::from_str::<ClientJsonRpcMessage>(line).ok()? {
            JsonRpcMessage::Request(request) => {
                let meta = request.request.get_meta().clone();
                match request.request {
                    ClientRequest::CallToolRequest(mut call) => {
                        let mut meta = meta;
                        meta.extend(call.params.meta.take().unwrap_or_default());
                        Some((request.id, call.params, meta))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// What the lane makes of it (as `Lane::call` hands it on): the same, or nothing
    /// (the loop then reads it).
    fn lanes(line: &str) -> Option<Call> {
        let head = serde_json::from_str::<Head>(line).ok()?;
        if head.version != "2.0" || head.method.as_deref() != Some("tools/call") {
            return None;
        }
        let LaneId(id) = head.id?;
        let mut params = head.params?.into_call()?;
        let meta = params.meta.take().unwrap_or_default();
        Some((id, params, meta))
    }

    /// Ids of every kind a client sends, and some no one should.
    fn id() -> impl Strategy<Value = Value> {
        prop_oneof![
            arbitrary::string(10).prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-1000i64..1000).prop_map(|n| json!(n as f64)),
            Just(json!(1.5)),
            Just(json!(null)),
            Just(json!({"x": 1})),
        ]
    }

    /// A `tools/call` line, its members in any order, written any way.
    fn call() -> impl Strategy<Value = String> {
        let params = (
            prop::option::of(arbitrary::string(12)),
            prop::option::of(arbitrary::map()),
            prop::option::of(arbitrary::map()),
            prop::option::of(arbitrary::string(8)),
        )
            .prop_map(|(name, arguments, meta, state)| {
                let mut params = serde_json::Map::new();
                if let Some(name) = name {
                    params.insert("name".into(), name.into());
                }
                if let Some(arguments) = arguments {
                    params.insert("arguments".into(), Value::Object(arguments));
                }
                if let Some(meta) = meta {
                    params.insert("_meta".into(), Value::Object(meta));
                }
                if let Some(state) = state {
                    params.insert("requestState".into(), state.into());
                }
                Value::Object(params)
            });
        let version = prop_oneof![9 => Just("2.0"), 1 => Just("1.0")];
        (version, id(), params, any::<u8>(), arbitrary::style()).prop_map(
            |(version, id, params, order, style)| {
                let mut members = vec![
                    ("jsonrpc", Value::from(version)),
                    ("id", id),
                    ("method", Value::from("tools/call")),
                    ("params", params),
                ];
                members.rotate_left(order as usize % 4);
                if order & 0x10 != 0 {
                    members.reverse();
                }
                arbitrary::object(&members, style)
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// A call the lane takes is the call rmcp reads, id and params alike; one rmcp
        /// would not read as a call, the lane leaves to the loop.
        #[test]
        fn the_lane_reads_a_call_as_rmcp_does(line in call()) {
            match (lanes(&line), rmcps(&line)) {
                (Some(ours), Some(theirs)) => prop_assert_eq!(ours, theirs, "{}", line),
                (Some(ours), None) => prop_assert!(false, "taken, rmcp refuses it: {ours:?} {line}"),
                // Left to the loop, which reads it as rmcp does.
                (None, _) => {}
            }
        }

        /// A line broken anywhere: never taken as a call rmcp would not read.
        #[test]
        fn a_broken_line_is_never_taken_wrongly(
            line in call(),
            at in any::<usize>(),
            how in any::<u8>(),
        ) {
            let broken = arbitrary::mutated(line.as_bytes(), at, how);
            if let Ok(text) = std::str::from_utf8(&broken)
                && let Some(ours) = lanes(text)
            {
                prop_assert_eq!(Some(ours), rmcps(text), "{}", text);
            }
        }
    }
}
