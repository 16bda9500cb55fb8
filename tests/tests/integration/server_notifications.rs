//! What servers say without being asked reaches the pool at once: list changes refresh the tool
//! cache and become events, resource subscriptions deliver updates and outlive reconnects, on
//! 2026-07-28 servers (the `subscriptions/listen` stream) and older ones (plain notifications,
//! `resources/subscribe`); log messages arrive at the level asked for (each 2026-07-28
//! request's `_meta`, `logging/setLevel` before). Over stdio and Streamable HTTP.

use std::time::Duration;

use crate::common::*;
use mcpmux::{Event, LogLevel, Pool, PoolOptions, ServerPatch, TransportType};
use serde_json::json;

/// The test server's flags for each protocol era.
const ERAS: [(&str, &[&str]); 2] = [("modern", &[]), ("legacy", &["--legacy"])];

/// What the issue of a stale cache is measured by: the change is seen this soon, not after
/// the tool cache's TTL.
const SOON: Duration = Duration::from_secs(2);

async fn changed(
    events: &mut mcpmux::EventReceiver,
    what: &str,
    f: impl FnMut(&Event) -> bool,
) -> Event {
    wait_event(events, SOON, f)
        .await
        .unwrap_or_else(|| panic!("no {what} event within {SOON:?}"))
}

async fn notify(pool: &Pool, server: &str, args: serde_json::Value) {
    call_ok(pool, &format!("mcp__{server}__notify"), args).await;
}

/// Has `server` (id `id`) say `test://hello` was updated, and waits for the event.
async fn hello_updated(pool: &Pool, events: &mut mcpmux::EventReceiver, server: &str, id: &str) {
    notify(
        pool,
        server,
        json!({"what": "updated", "uri": "test://hello"}),
    )
    .await;
    let updated = changed(
        events,
        "resource:updated",
        |e| matches!(e, Event::ResourceUpdated { server_id, .. } if server_id == id),
    )
    .await;
    assert!(
        matches!(&updated, Event::ResourceUpdated { uri, .. } if uri == "test://hello"),
        "{updated:?}"
    );
}

/// Calls the test server's `add_tool` with `args` on `server` (id `id`), waits for the pool to
/// hear that its tool list changed, and lists its tools again until `done` holds of the list.
///
/// Each `tools:changed` event is followed by a listing that must show the change; a change may
/// be told twice (a list fetched while the server changed it arrives before the server's own
/// `list_changed`), so an event left over from the change before is passed over.
async fn change_tools(
    pool: &Pool,
    events: &mut mcpmux::EventReceiver,
    (server, id): (&str, &str),
    args: serde_json::Value,
    done: impl Fn(&[mcpmux::ToolInfo]) -> bool,
) -> Vec<mcpmux::ToolInfo> {
    call_ok(pool, &format!("mcp__{server}__add_tool"), args).await;
    let deadline = tokio::time::Instant::now() + SOON;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let told = wait_event(
            events,
            left,
            |e| matches!(e, Event::ToolsChanged { server_id } if server_id == id),
        )
        .await;
        let tools = pool.list_tools(Some(server)).await.unwrap();
        match (told, done(&tools)) {
            (Some(_), true) => return tools,
            // The change before, told again.
            (Some(_), false) => continue,
            (None, _) => panic!("no tools:changed event within {SOON:?} then showed it: {tools:?}"),
        }
    }
}

/// Adds a tool and takes it back, changes the prompt and resource lists, and subscribes to
/// resources on `server` (id `id`), checking that each change is seen.
async fn changes_reach_the_pool(pool: &Pool, server: &str, id: &str) {
    let mut events = pool.events();
    let before = pool.list_tools(Some(server)).await.unwrap();
    assert!(!before.iter().any(|t| t.name == "late"), "{before:?}");

    let has_late = |tools: &[mcpmux::ToolInfo]| tools.iter().any(|t| t.name == "late");
    let added = json!({"name": "late"});
    let tools = change_tools(pool, &mut events, (server, id), added, has_late).await;
    assert!(has_late(&tools), "{tools:?}");
    let late = call_ok(pool, &format!("mcp__{server}__late"), json!({})).await;
    assert_eq!(text(&late), "late was added later");
    // Taken back: its id is the pool's "tool not found" now, not a call the server refuses.
    let removal = json!({"name": "late", "remove": true});
    let tools = change_tools(pool, &mut events, (server, id), removal, |t| !has_late(t)).await;
    assert!(!has_late(&tools), "{tools:?}");
    let gone = pool
        .call_tool(
            &format!("mcp__{server}__late"),
            json!({}),
            Default::default(),
        )
        .await;
    assert!(
        matches!(&gone, Err(mcpmux::Error::NotFound { kind: "tool", .. })),
        "{gone:?}"
    );

    for (what, event) in [
        ("prompts", "prompts:changed"),
        ("resources", "resources:changed"),
    ] {
        notify(pool, server, json!({ "what": what })).await;
        changed(&mut events, event, |e| {
            e.name() == event && serde_json::to_value(e).unwrap()["serverId"] == id
        })
        .await;
    }

    pool.subscribe_resource(server, "test://hello")
        .await
        .unwrap();
    pool.subscribe_resource(server, "test://info")
        .await
        .unwrap();
    hello_updated(pool, &mut events, server, id).await;
    // After unsubscribing, the next update is the other resource's.
    pool.unsubscribe_resource(server, "test://hello")
        .await
        .unwrap();
    for uri in ["test://hello", "test://info"] {
        notify(pool, server, json!({"what": "updated", "uri": uri})).await;
    }
    let updated = |e: &Event| matches!(e, Event::ResourceUpdated { .. });
    let next = changed(&mut events, "resource:updated", updated).await;
    assert!(
        matches!(&next, Event::ResourceUpdated { uri, .. } if uri == "test://info"),
        "{next:?}"
    );
}

/// The test server in a pool, over one transport.
struct Served {
    pool: TestPool,
    /// The server's id.
    id: String,
    transport: &'static str,
    /// The HTTP server's process, stopped on drop.
    _server: Option<mcpmux_tests::ChildGuard>,
}

/// The test server of `era` (its flags `args`) in a pool with `options`, over stdio and over
/// Streamable HTTP.
async fn over_both_transports(era: &str, args: &[&str], options: PoolOptions) -> [Served; 2] {
    let piped = pool_with(options.clone()).await;
    let rec = add_test_server(&piped, era, args).await;
    let (server, url) = mcpmux_tests::start_test_server_http_with(args);
    let web = pool_with(options).await;
    let remote_rec = web
        .add_server(remote(era, url, Some(TransportType::Http)))
        .await
        .unwrap();
    [
        Served {
            pool: piped,
            id: rec.id,
            transport: "stdio",
            _server: None,
        },
        Served {
            pool: web,
            id: remote_rec.id,
            transport: "HTTP",
            _server: Some(server),
        },
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changes_and_resource_updates_in_both_eras_over_stdio_and_http() {
    for (era, args) in ERAS {
        for served in over_both_transports(era, args, options()).await {
            eprintln!("=== {era} over {}", served.transport);
            changes_reach_the_pool(&served.pool, era, &served.id).await;
            served.pool.close().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_subscription_is_an_error_and_an_accepted_one_outlives_a_reconnect() {
    for (era, args) in ERAS {
        eprintln!("=== {era}");
        let pool = pool().await;
        let mut events = pool.events();
        let rec = add_test_server(&pool, era, args).await;
        let e = pool
            .subscribe_resource(era, "test://secret")
            .await
            .unwrap_err();
        assert_eq!(e.kind(), mcpmux::ErrorKind::Protocol, "{era}: {e}");
        assert!(e.to_string().contains("test://secret"), "{era}: {e}");
        // The refusal lost nothing: other subscriptions work, and hold over a reconnect.
        pool.subscribe_resource(era, "test://hello").await.unwrap();
        hello_updated(&pool, &mut events, era, &rec.id).await;
        let pid_tool = format!("mcp__{era}__pid");
        let pid = kill_and_wait_for_reconnect(&pool, &mut events, &pid_tool).await;
        assert_ne!(pid_of(&pool, &pid_tool).await, pid);
        hello_updated(&pool, &mut events, era, &rec.id).await;
        pool.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_the_server_ends_is_opened_again_with_a_re_list() {
    let pool = pool().await;
    let mut events = pool.events();
    let rec = add_test_server(&pool, "t", &[]).await;
    pool.subscribe_resource("t", "test://hello").await.unwrap();
    call_ok(&pool, "mcp__t__end_streams", json!({})).await;
    // Changes in between could not be heard: they are reported as made.
    changed(
        &mut events,
        "tools:changed",
        |e| matches!(e, Event::ToolsChanged { server_id } if *server_id == rec.id),
    )
    .await;
    changed(&mut events, "prompts:changed", |e| {
        matches!(e, Event::PromptsChanged { .. })
    })
    .await;
    // The new stream hears changes, and has the subscription.
    call_ok(&pool, "mcp__t__add_tool", json!({"name": "later"})).await;
    changed(&mut events, "tools:changed", |e| {
        matches!(e, Event::ToolsChanged { .. })
    })
    .await;
    assert!(
        pool.list_tools(Some("t"))
            .await
            .unwrap()
            .iter()
            .any(|t| t.name == "later")
    );
    hello_updated(&pool, &mut events, "t", &rec.id).await;
    pool.close().await;
}

/// When a server's log line reaches the pool, against the reply of the call that sent it.
#[derive(Clone, Copy)]
enum LogLines {
    /// Before the reply: one pipe carries both in order (stdio), or the call's own stream does
    /// (2026-07-28 over HTTP, where a call's messages ride its stream, which the reply closes).
    BeforeTheReply,
    /// Soon, in no set order with the reply: an older server over Streamable HTTP may send a
    /// notification that answers no request on its standalone GET stream (rmcp does), a
    /// connection apart from the call's.
    Soon,
}

impl LogLines {
    fn of(era: &str, transport: &str) -> Self {
        if era == "legacy" && transport == "HTTP" {
            Self::Soon
        } else {
            Self::BeforeTheReply
        }
    }
}

/// Calls the test server's `log` tool: whether it sent the line (the client asked for its
/// level), and then that the line arrived as a `log` event when `lines` says it must.
async fn logs(pool: &Pool, server: &str, level: &str, message: &str, lines: LogLines) -> bool {
    let mut events = pool.events();
    let args = json!({"message": message, "level": level});
    let result = call_ok(pool, &format!("mcp__{server}__log"), args).await;
    let sent = text(&result) == "sent";
    if sent {
        let line = format!("[test-server] {message}");
        let is_line = |e: &Event| matches!(e, Event::Log { message, .. } if *message == line);
        let event = match lines {
            LogLines::BeforeTheReply => std::iter::from_fn(|| events.try_recv()).find(is_line),
            LogLines::Soon => wait_event(&mut events, SOON, is_line).await,
        };
        let event = event.unwrap_or_else(|| panic!("{server}: `{line}` did not arrive"));
        let Event::Log {
            level: got, source, ..
        } = event
        else {
            unreachable!()
        };
        assert_eq!((got.as_str(), source.as_str()), (level, "notification"));
    }
    sent
}

async fn log_levels_are_asked_for(pool: &Pool, era: &str, lines: LogLines) {
    // The pool asks for `warning` and up.
    assert!(
        !logs(pool, era, "info", "quiet", lines).await,
        "{era}: info sent"
    );
    assert!(
        logs(pool, era, "error", "loud", lines).await,
        "{era}: error not sent"
    );
    // A server's own level wins, and a change reaches the live connection.
    let patch = ServerPatch {
        log_level: Some(LogLevel::Debug),
        ..Default::default()
    };
    pool.update_server(era, patch).await.unwrap();
    assert!(
        logs(pool, era, "info", "now heard", lines).await,
        "{era}: info not sent"
    );
}

fn asking_for_warnings() -> PoolOptions {
    PoolOptions {
        log_level: Some(LogLevel::Warning),
        ..options()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_logs_arrive_at_the_level_asked_for_in_both_eras() {
    for (era, args) in ERAS {
        for served in over_both_transports(era, args, asking_for_warnings()).await {
            eprintln!("=== {era} over {}", served.transport);
            let lines = LogLines::of(era, served.transport);
            log_levels_are_asked_for(&served.pool, era, lines).await;
            served.pool.close().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_log_level_only_servers_before_2026_send_logs() {
    let pool = pool().await;
    add_test_server(&pool, "modern", &[]).await;
    add_test_server(&pool, "legacy", &["--legacy"]).await;
    let lines = LogLines::BeforeTheReply;
    assert!(!logs(&pool, "modern", "emergency", "unasked", lines).await);
    assert!(logs(&pool, "legacy", "debug", "its own choice", lines).await);
    pool.close().await;
}
