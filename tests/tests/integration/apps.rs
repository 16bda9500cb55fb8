//! MCP Apps (`io.modelcontextprotocol/ui`) for a host that renders them: the pool declares the
//! extension when asked to, hands over a tool's view checked and with the policy to load it
//! under, keeps each tool to its audience (a tool for the view alone never reaches a model, a
//! tool for the model alone is never called by a view), and is the view's only path back to
//! its server. Against the test server's small app (`--apps`) and a real MCP App server from
//! npm (`@modelcontextprotocol/server-basic-vanillajs`).

use crate::common::*;
use mcpmux::{AppsOptions, CallOptions, ErrorKind, PoolOptions, ServerFilter};
use serde_json::json;

/// A pool that renders HTML views, with the test server's app as `app`.
async fn app_pool() -> TestPool {
    let pool = pool_with(PoolOptions {
        apps: Some(AppsOptions::default()),
        ..options()
    })
    .await;
    add_test_server(&pool, "app", &["--apps"]).await;
    pool
}

/// A server that names a view outside `ui://` (a file of the host's) or of a type the host
/// does not render gets no view handed to the host: the error says which and why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_view_outside_ui_or_of_a_type_not_rendered_is_refused() {
    let pool = pool_with(PoolOptions {
        apps: Some(AppsOptions::default()),
        ..options()
    })
    .await;
    add_test_server(&pool, "odd", &["--odd-views"]).await;
    let leak = pool.app_view("mcp__odd__leak").await.unwrap_err();
    assert_eq!(leak.kind(), ErrorKind::Protocol, "{leak}");
    assert!(
        leak.to_string()
            .contains("names the view 'file:///etc/passwd', which is not a ui:// URI"),
        "{leak}"
    );
    let movie = pool.app_view("mcp__odd__movie").await.unwrap_err();
    assert_eq!(movie.kind(), ErrorKind::Protocol, "{movie}");
    assert!(
        movie
            .to_string()
            .contains("'application/x-shockwave-flash', which this host does not render"),
        "{movie}"
    );
    // The server's proper view still comes.
    assert!(pool.app_view("mcp__odd__dashboard").await.is_ok());
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_view_comes_checked_with_the_policy_and_permissions_it_declares() {
    let pool = app_pool().await;
    let tools = pool.list_tools(Some("app")).await.unwrap();
    let tool = |name: &str| tools.iter().find(|t| t.name == name).unwrap().clone();
    // The server offered its app: the pool declared the extension.
    assert_eq!(
        tool("dashboard").view_uri(),
        Some("ui://test/dashboard.html".into())
    );
    assert!(!tool("refresh").for_model() && tool("refresh").for_apps());
    assert!(tool("secret").for_model() && !tool("secret").for_apps());

    let view = pool.app_view("mcp__app__dashboard").await.unwrap();
    assert_eq!(view.resource_uri, "ui://test/dashboard.html");
    assert_eq!(view.mime_type, "text/html;profile=mcp-app");
    assert!(
        view.html.contains("<h1>test dashboard</h1>"),
        "{}",
        view.html
    );
    assert_eq!(view.server_name, "app");
    assert_eq!(view.tool.name, "dashboard");
    assert_eq!(view.csp.connect_domains, ["https://api.example.com"]);
    let policy = &view.content_security_policy;
    assert!(
        policy.contains("connect-src 'self' https://api.example.com;")
            && policy.contains("default-src 'none'")
            && policy.contains("frame-src 'none'"),
        "{policy}"
    );
    assert!(view.permissions.camera && !view.permissions.microphone);
    assert_eq!(view.allow, "camera");
    assert_eq!(view.prefers_border, Some(true));
    // As the host hands it on (to an Electron renderer, a C host): camelCase JSON.
    let json = serde_json::to_value(&view).unwrap();
    assert_eq!(json["contentSecurityPolicy"], json!(policy));
    assert_eq!(
        json["tool"]["_meta"]["ui"]["resourceUri"],
        "ui://test/dashboard.html"
    );

    // A tool without a view has none to give.
    let err = pool.app_view("mcp__app__secret").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_view_calls_its_own_servers_tools_for_apps_and_nothing_else() {
    let pool = app_pool().await;
    add_test_server(&pool, "other", &[]).await;
    let view = pool.app_view("mcp__app__dashboard").await.unwrap();
    let call = |name: &'static str| {
        let (pool, view) = (pool.pool.clone(), view.clone());
        async move {
            pool.app_call(&view, name, json!({"city": "Oslo"}), CallOptions::default())
                .await
        }
    };
    assert_eq!(text(&call("refresh").await.unwrap()), "refreshed Oslo");
    assert_eq!(text(&call("dashboard").await.unwrap()), "sunny in Oslo");
    // A tool that declares no audience is for both.
    let echoed = pool
        .app_call(&view, "echo", json!({"text": "hi"}), CallOptions::default())
        .await
        .unwrap();
    assert_eq!(text(&echoed), "hi");
    // The model's own tool is refused, with the reason.
    let err = call("secret").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("visibility"), "{err}");
    // A view names tools of its server only: another server's id is no name there.
    let err = call("mcp__other__echo").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    // Resources: its own server's.
    let read = pool.app_read_resource(&view, "test://hello").await.unwrap();
    assert_eq!(read.contents.len(), 1);
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_kept_to_its_view_never_reaches_a_model() {
    let pool = app_pool().await;
    let conversation = pool.conversation_with(ServerFilter::only("app"));
    // The model's call of the app's tool activates the server: its tools are offered now.
    conversation
        .call(
            "mcp__app__dashboard",
            json!({"city": "Rome"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    let offered: Vec<String> = conversation.tools().into_iter().map(|t| t.name).collect();
    assert!(
        offered.contains(&"mcp__app__dashboard".to_string()),
        "{offered:?}"
    );
    assert!(
        offered.contains(&"mcp__app__secret".to_string()),
        "{offered:?}"
    );
    assert!(
        !offered.contains(&"mcp__app__refresh".to_string()),
        "{offered:?}"
    );
    // Neither its discovery tools, nor search, nor a call by its id.
    let listed = conversation
        .call("app_mcp_list_tools", json!({}), CallOptions::default())
        .await
        .unwrap();
    assert!(!text(&listed).contains("refresh"), "{}", text(&listed));
    let hits = pool
        .search_tools("refresh the dashboard figures", None)
        .await
        .unwrap();
    assert!(hits.iter().all(|h| h.name != "refresh"), "{hits:?}");
    let err = conversation
        .call("mcp__app__refresh", json!({}), CallOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("view alone"), "{err}");
    pool.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_option_servers_see_a_host_without_apps_and_views_are_refused() {
    let pool = pool().await;
    add_test_server(&pool, "app", &["--apps"]).await;
    let tools = pool.list_tools(Some("app")).await.unwrap();
    let dashboard = tools.iter().find(|t| t.name == "dashboard").unwrap();
    // The server falls back to its text-only tool: the extension was not declared.
    assert_eq!(dashboard.view_uri(), None);
    assert!(tools.iter().all(|t| t.name != "refresh"));
    let err = pool.app_view("mcp__app__dashboard").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("apps"), "{err}");
    pool.close().await;
}

/// `served` over Streamable HTTP on 127.0.0.1, and a client pool (rendering views, as
/// `apps` says) with it as its server `fleet`.
async fn fleet_client(
    served: &TestPool,
    apps: Option<AppsOptions>,
) -> (TestPool, mcpmux::serve::HttpServer) {
    let settings = mcpmux::serve::HttpServeSettings::from_json(r#"{"mode": "direct"}"#).unwrap();
    let (serve, http) = settings.into_options().unwrap();
    let server = served.serve_http(serve, http).await.unwrap();
    let client = pool_with(PoolOptions { apps, ..options() }).await;
    let mut input = remote("fleet", server.url(), None);
    let token = server.token().expect("a generated token");
    input
        .config
        .headers
        .insert("Authorization".into(), format!("Bearer {token}"));
    client.add_server(input).await.unwrap();
    (client, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_fleet_passes_views_on_to_clients_that_render_them_alone() {
    let served = app_pool().await;
    add_test_server(&served, "plain", &[]).await;

    // A host that renders views, through the fleet: the view under an address of the fleet
    // (still `ui://`, as hosts require), read and called back through it.
    let (host, _server) = fleet_client(&served, Some(AppsOptions::default())).await;
    let tools = host.list_tools(Some("fleet")).await.unwrap();
    let tool = |name: &str| tools.iter().find(|t| t.name == name).cloned();
    let dashboard = tool("app__dashboard").expect("the app's tool is served");
    assert_eq!(
        dashboard.view_uri(),
        Some("ui://mcpmux.app/test/dashboard.html".into())
    );
    let refresh = tool("app__refresh").expect("the view's own tool is served to this host");
    assert!(!refresh.for_model() && refresh.for_apps());
    let view = host.app_view("mcp__fleet__app__dashboard").await.unwrap();
    assert!(
        view.html.contains("<h1>test dashboard</h1>"),
        "{}",
        view.html
    );
    assert_eq!(view.csp.connect_domains, ["https://api.example.com"]);
    let refreshed = host
        .app_call(&view, "app__refresh", json!({}), CallOptions::default())
        .await
        .unwrap();
    assert_ne!(refreshed.is_error, Some(true), "{refreshed:?}");
    // By the name the view's own code knows it by, as its bridge passes a view's call on.
    let refreshed = host
        .app_call(
            &view,
            "refresh",
            json!({"city": "Oslo"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text(&refreshed), "refreshed Oslo");
    // The host's own model is still kept from it, as with any server.
    let hits = host
        .search_tools("refresh the dashboard", None)
        .await
        .unwrap();
    assert!(hits.iter().all(|h| h.name != "app__refresh"), "{hits:?}");
    host.close().await;

    // A client that renders none: no view's tool, no address it could not use, and a
    // call by the name another client was shown is refused by the fleet.
    let (plain, _server) = fleet_client(&served, None).await;
    let tools = plain.list_tools(Some("fleet")).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"app__dashboard"), "{names:?}");
    assert!(!names.contains(&"app__refresh"), "{names:?}");
    assert!(tools.iter().all(|t| t.view_uri().is_none()), "{tools:?}");
    plain.close().await;
    served.close().await;
}

/// `served` to an rmcp client over an in-process pipe; with `views`, the client declares it
/// renders MCP Apps views.
async fn served_peer(
    served: &TestPool,
    views: bool,
) -> rmcp::service::RunningService<rmcp::RoleClient, rmcp::model::ClientConfig> {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    let pool = served.pool.clone();
    tokio::spawn(async move {
        let options = mcpmux::serve::ServeOptions::default();
        pool.serve_transport(options, server_side).await
    });
    let mut info = rmcp::model::ClientConfig::default();
    if views {
        let ui =
            json!({"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}});
        info.capabilities.extensions = Some(serde_json::from_value(ui).unwrap());
    }
    use rmcp::ServiceExt;
    info.serve(client_side).await.unwrap()
}

/// A view calls its tools by its server's own names, and its host passes them on as they
/// are: the fleet finds the one tool for apps of that name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_views_call_by_its_servers_own_tool_name_reaches_the_tool() {
    let served = app_pool().await;
    let peer = served_peer(&served, true).await;
    let tools = peer.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "app__refresh"), "{tools:?}");
    let call = |name: &'static str| {
        let args = json!({"city": "Oslo"}).as_object().cloned().unwrap();
        peer.call_tool(rmcp::model::CallToolRequestParams::new(name).with_arguments(args))
    };
    let refreshed = call("refresh").await.unwrap();
    assert_eq!(
        refreshed.content[0].as_text().map(|t| t.text.as_str()),
        Some("refreshed Oslo")
    );
    // A tool for the model alone is no view's, by its own name either.
    let refused = call("secret").await.unwrap_err();
    assert!(
        refused.to_string().contains("unknown tool 'secret'"),
        "{refused}"
    );
    peer.cancel().await.unwrap();

    // Two servers' views with a tool of that name: the served names tell them apart.
    add_test_server(&served, "app2", &["--apps"]).await;
    let peer = served_peer(&served, true).await;
    let ambiguous = peer
        .call_tool(rmcp::model::CallToolRequestParams::new("refresh"))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        ambiguous.contains("app__refresh") && ambiguous.contains("app2__refresh"),
        "{ambiguous}"
    );
    peer.cancel().await.unwrap();
    served.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_client_without_views_cannot_call_a_views_own_tool() {
    let served = app_pool().await;
    let peer = served_peer(&served, false).await;
    let tools = peer.list_all_tools().await.unwrap();
    assert!(
        tools.iter().any(|t| t.name == "app__dashboard"),
        "{tools:?}"
    );
    assert!(tools.iter().all(|t| t.name != "app__refresh"), "{tools:?}");
    // Neither by the name a view-rendering client is shown, nor by the view's own.
    for name in ["app__refresh", "refresh"] {
        let refused = peer
            .call_tool(rmcp::model::CallToolRequestParams::new(name))
            .await
            .unwrap_err();
        assert!(
            refused
                .to_string()
                .contains(&format!("unknown tool '{name}'")),
            "{refused}"
        );
        // Nor is it offered as what the name may have meant.
        assert!(!refused.to_string().contains("did you mean"), "{refused}");
    }
    peer.cancel().await.unwrap();
    served.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_mcp_app_servers_view_is_handed_over_and_its_tool_called_back() {
    let Some((node, args)) = mcpmux_tests::app_server_command() else {
        mcpmux_tests::skip_or_fail("server-basic-vanillajs (.deps/npm-apps)");
        return;
    };
    let pool = pool_with(PoolOptions {
        apps: Some(AppsOptions::default()),
        ..options()
    })
    .await;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    pool.add_server(stdio("clock", node.to_str().unwrap(), &args))
        .await
        .unwrap();
    let tools = pool.list_tools(Some("clock")).await.unwrap();
    let get_time = tools.iter().find(|t| t.name == "get-time").unwrap();
    assert_eq!(
        get_time.view_uri(),
        Some("ui://get-time/mcp-app.html".into())
    );

    let view = pool.app_view(&get_time.id).await.unwrap();
    assert_eq!(view.mime_type, "text/html;profile=mcp-app");
    assert!(
        view.html.contains("<html"),
        "{}",
        &view.html[..200.min(view.html.len())]
    );
    // It declares no origins: the extension's restrictive default.
    assert!(view.content_security_policy.contains("connect-src 'none'"));
    let result = pool
        .app_call(&view, "get-time", json!({}), CallOptions::default())
        .await
        .unwrap();
    let time = result.structured_content.as_ref().unwrap()["time"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(time.contains('T') && time.ends_with('Z'), "{time}");
    pool.close().await;
}

/// The messages a view posts, as the extension's App SDK writes them.
fn request(id: u64, method: &str, params: serde_json::Value) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_answers_a_view_and_tells_it_the_tools_input_and_result_once_initialized() {
    let pool = app_pool().await;
    let mut events = pool.events();
    let view = pool.app_view("mcp__app__dashboard").await.unwrap();
    let bridge = pool.app_bridge(view, json!({"theme": "dark", "displayMode": "inline"}));
    // The host calls the tool while the frame loads: nothing goes to the view before it is
    // initialized.
    assert!(bridge.tool_input(json!({"city": "Oslo"})).is_empty());
    let result = pool
        .call_tool(
            "mcp__app__dashboard",
            json!({"city": "Oslo"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(bridge.tool_result(&result).is_empty());

    let init = request(
        1,
        "ui/initialize",
        json!({"appCapabilities": {}, "appInfo": {"name": "dash", "version": "1"},
               "protocolVersion": "2026-01-26"}),
    );
    let out = bridge.handle(init).await;
    assert_eq!(out.post.len(), 1, "{out:?}");
    let answer = &out.post[0]["result"];
    assert_eq!(out.post[0]["id"], 1);
    assert_eq!(answer["protocolVersion"], "2026-01-26");
    assert_eq!(answer["hostContext"]["theme"], "dark");
    assert_eq!(
        answer["hostContext"]["toolInfo"]["tool"]["name"],
        "dashboard"
    );
    let sandbox = &answer["hostCapabilities"]["sandbox"];
    assert_eq!(sandbox["permissions"], json!({"camera": {}}));
    assert_eq!(
        sandbox["csp"]["connectDomains"],
        json!(["https://api.example.com"])
    );

    // Initialized: the input, then the result, in that order.
    let out = bridge
        .handle(json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized"}))
        .await;
    let methods: Vec<&str> = out
        .post
        .iter()
        .map(|m| m["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "ui/notifications/tool-input",
            "ui/notifications/tool-result"
        ]
    );
    assert_eq!(out.post[0]["params"]["arguments"]["city"], "Oslo");
    assert_eq!(out.post[1]["params"]["content"][0]["text"], "sunny in Oslo");

    // The view's own calls: a tool for apps, one that is not, a resource.
    let call = |id, name: &str| {
        request(
            id,
            "tools/call",
            json!({"name": name, "arguments": {"city": "Bergen"}}),
        )
    };
    let out = bridge.handle(call(2, "refresh")).await;
    assert_eq!(
        out.post[0]["result"]["content"][0]["text"],
        "refreshed Bergen"
    );
    let out = bridge.handle(call(3, "secret")).await;
    assert_eq!(out.post[0]["error"]["code"], -32602, "{out:?}");
    assert!(
        out.post[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("visibility")
    );
    let out = bridge
        .handle(request(4, "resources/read", json!({"uri": "test://hello"})))
        .await;
    assert!(out.post[0]["result"]["contents"].is_array(), "{out:?}");

    // What only the host decides comes back to it, untouched; it answers with `reply`.
    let link = request(5, "ui/open-link", json!({"url": "https://example.com"}));
    let out = bridge.handle(link.clone()).await;
    assert!(out.post.is_empty());
    assert_eq!(out.host, Some(link));
    let reply = mcpmux::AppBridge::reply(&json!(5), Err("denied by the user".into())).unwrap();
    assert_eq!(reply["error"]["message"], "denied by the user");
    // A reply no view request could be waiting for is refused, not posted.
    let e = mcpmux::AppBridge::reply(&json!({"id": 5}), Ok(json!({}))).unwrap_err();
    assert_eq!(e.kind(), mcpmux::ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("a string or a number"), "{e}");
    // A log line becomes the server's `log` event; an unknown method is refused.
    bridge
        .handle(json!({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "warning", "data": "from the view"}}))
        .await;
    let out = bridge
        .handle(request(6, "sampling/createMessage", json!({})))
        .await;
    assert_eq!(out.post[0]["error"]["code"], -32601);
    // A frame's other messages are no JSON-RPC: nothing to do.
    assert_eq!(bridge.handle(json!({"hello": 1})).await, Default::default());
    // Said at once, as the view's server's.
    let heard = drain(&mut events).into_iter().find_map(|e| match e {
        mcpmux::Event::Log {
            source,
            message,
            level,
            server_id,
        } if source == "app" && message == "from the view" => Some((level, server_id)),
        _ => None,
    });
    let (level, server_id) = heard.expect("the view's log line as an event");
    assert_eq!(server_id, bridge.view().server_id);
    assert_eq!(level, "warning");
    pool.close().await;
}
