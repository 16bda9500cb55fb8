//! `mcpmux serve --http --oauth-issuer`: the fleet as an OAuth 2.1 resource server, with a
//! real authorization server in front of it (panva's oidc-provider from npm, a certified
//! OpenID provider, run by tests/issuer/issuer.mjs on a free port). Clients discover the
//! issuer from the 401 and the protected resource metadata, get JWT access tokens for this
//! server, and call with them: mcpmux's own pool (client credentials, DPoP-bound tokens) and
//! the Python SDK client (a bearer token). Tokens for another server, without the scope asked
//! for, or none at all are refused with a challenge that says why.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use base64::Engine;
use mcpmux::{CallOptions, Pool, PoolOptions, ServerConfig, ServerInput};
use mcpmux_tests::{ChildGuard, deps_dir, find_in_path};
use serde_json::{Value, json};

#[allow(dead_code)]
use crate::support::*;

/// The authorization server, and its issuer URL.
fn start_issuer() -> Option<(ChildGuard, String)> {
    let oidc = deps_dir().join("oidc");
    let (Some(node), true) = (
        find_in_path("node"),
        oidc.join("node_modules/oidc-provider").is_dir(),
    ) else {
        mcpmux_tests::skip_or_fail("oidc-provider (.deps/oidc, installed by scripts/test-deps.sh)");
        return None;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/issuer/issuer.mjs");
    let mut command = Command::new(node);
    command
        .arg(script)
        .arg(&oidc)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut issuer = ChildGuard::spawn(&mut command).expect("start the issuer");
    let mut line = String::new();
    BufReader::new(issuer.child_mut().stdout.take().unwrap())
        .read_line(&mut line)
        .expect("read the issuer's URL");
    let url: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    Some((issuer, url["issuer"].as_str().unwrap().to_string()))
}

/// An access token from the issuer by the client credentials grant, for `resource`.
fn token(issuer: &str, client: &str, resource: &str, scope: &str) -> String {
    let basic =
        base64::engine::general_purpose::STANDARD.encode(format!("{client}:secret-of-{client}"));
    let form = format!(
        "grant_type=client_credentials&scope={}&resource={}",
        scope.replace(' ', "+"),
        resource.replace(':', "%3A").replace('/', "%2F")
    );
    let (status, response) = http_request(
        issuer,
        "POST",
        "/token",
        &[
            ("Authorization", &format!("Basic {basic}")),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        &form,
    );
    let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    assert_eq!(status, 200, "{response}");
    let answer: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{body}: {e}"));
    answer["access_token"].as_str().unwrap().to_string()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// POSTs an `initialize` with `authorization`; the status and the whole response.
fn initialize(url: &str, authorization: Option<&str>) -> (u16, String) {
    post(url, "/mcp", authorization, None, INITIALIZE)
}

/// POSTs `body` to `path` with `authorization` and in `session`.
fn post(
    url: &str,
    path: &str,
    authorization: Option<&str>,
    session: Option<&str>,
    body: &str,
) -> (u16, String) {
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    if let Some(value) = authorization {
        headers.push(("Authorization", value));
    }
    if let Some(id) = session {
        headers.push(("Mcp-Session-Id", id));
    }
    http_request(url, "POST", path, &headers, body)
}

/// The session id an `initialize` answer names.
fn session_of(response: &str) -> String {
    response
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no session id in {response}"))
}

/// The fleet behind `--oauth-issuer`, with a profile `team` (the demo server alone).
fn served(issuer: &str, audit: &Path) -> Option<(tempfile::TempDir, ChildGuard, String)> {
    let (dir, config) = fleet(false)?;
    let mut file: Value = serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    file["profiles"] = json!({"team": {"servers": ["demo"]}});
    std::fs::write(&config, file.to_string()).unwrap();
    let (server, url) = serve_http(
        &config,
        &[
            "--oauth-issuer",
            issuer,
            "--oauth-scope",
            "mcp:tools",
            "--audit-log",
            audit.to_str().unwrap(),
        ],
    );
    Some((dir, server, url))
}

#[test]
fn the_metadata_and_the_challenge_lead_a_client_to_the_issuer() {
    let Some((_issuer, issuer)) = start_issuer() else {
        return;
    };
    let audit = tempfile::NamedTempFile::new().unwrap();
    let Some((_dir, _server, url)) = served(&issuer, audit.path()) else {
        return;
    };
    let origin = url.strip_suffix("/mcp").unwrap();

    // No token: 401, pointing at the metadata, which names the issuer.
    let (status, response) = initialize(&url, None);
    assert_eq!(status, 401, "{response}");
    let metadata_url = format!("{origin}/.well-known/oauth-protected-resource/mcp");
    assert!(
        response.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{response}"
    );
    assert!(response.contains("scope=\"mcp:tools\""), "{response}");
    let (status, response) = http_request(&url, "GET", &metadata_url[origin.len()..], &[], "");
    assert_eq!(status, 200, "{response}");
    let body = response.split("\r\n\r\n").nth(1).unwrap();
    let metadata: Value = serde_json::from_str(body).unwrap();
    assert_eq!(metadata["resource"], url);
    assert_eq!(metadata["authorization_servers"], json!([issuer]));
    assert_eq!(metadata["scopes_supported"], json!(["mcp:tools"]));
    // A profile is a resource of its own, under the root one; one not in the config is none.
    let (status, response) = http_request(
        &url,
        "GET",
        "/.well-known/oauth-protected-resource/mcp/p/team",
        &[],
        "",
    );
    assert_eq!(status, 200, "{response}");
    assert!(
        response.contains(&format!("\"resource\":\"{url}/p/team\"")),
        "{response}"
    );
    let (status, _) = http_request(
        &url,
        "GET",
        "/.well-known/oauth-protected-resource/mcp/p/nobody",
        &[],
        "",
    );
    assert_eq!(status, 404);
    // A token for the profile opens the profile, and nothing more.
    let team = token(&issuer, "rs-client", &format!("{url}/p/team"), "mcp:tools");
    let team = format!("Bearer {team}");
    let (status, response) = post(&url, "/mcp/p/team", Some(&team), None, INITIALIZE);
    assert_eq!(status, 200, "{response}");
    let (status, response) = initialize(&url, Some(&team));
    assert_eq!(status, 401, "{response}");

    // A token of either signing algorithm, issued for this server, is admitted.
    let mut sessions = Vec::new();
    for client in ["rs-client", "es-client"] {
        let good = format!("Bearer {}", token(&issuer, client, &url, "mcp:tools"));
        let (status, response) = initialize(&url, Some(&good));
        assert_eq!(status, 200, "{client}: {response}");
        sessions.push((good, session_of(&response)));
    }
    // A session is its opener's: another client's token cannot carry on in it.
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let [(rs, rs_session), (es, _)] = &sessions[..] else {
        unreachable!()
    };
    let (status, _) = post(&url, "/mcp", Some(rs), Some(rs_session), initialized);
    assert_eq!(status, 202);
    let (status, response) = post(&url, "/mcp", Some(es), Some(rs_session), initialized);
    assert_eq!(status, 404, "{response}");
    assert!(response.contains("another user's token"), "{response}");
    // One issued for another server, or without the scope asked for, is not.
    let elsewhere = token(&issuer, "rs-client", "http://127.0.0.1:9/mcp", "mcp:tools");
    let (status, response) = initialize(&url, Some(&format!("Bearer {elsewhere}")));
    assert_eq!(status, 401, "{response}");
    assert!(response.contains("error=\"invalid_token\""), "{response}");
    assert!(response.contains("not for this server"), "{response}");
    // Nor one issued for another server on this machine, whatever port the client writes in
    // `Host`: the audience is the address this server listens on, not what a request says.
    let other = "http://127.0.0.1:8001/mcp";
    let elsewhere = format!("Bearer {}", token(&issuer, "rs-client", other, "mcp:tools"));
    let headers = [
        ("Host", "127.0.0.1:8001"),
        ("Authorization", elsewhere.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let (status, response) = http_request(&url, "POST", "/mcp", &headers, INITIALIZE);
    assert_eq!(status, 401, "{response}");
    assert!(response.contains("not for this server"), "{response}");
    let narrow = token(&issuer, "rs-client", &url, "mcp:admin");
    let (status, response) = initialize(&url, Some(&format!("Bearer {narrow}")));
    assert_eq!(status, 403, "{response}");
    assert!(
        response.contains("error=\"insufficient_scope\""),
        "{response}"
    );
    // The shared-token mode's token means nothing here.
    let (status, _) = initialize(&url, Some("Bearer 0123456789abcdef"));
    assert_eq!(status, 401);
}

/// Behind a proxy, the resource is what `--oauth-resource` says (the address clients use), and
/// an issuer that names its APIs otherwise is met with `--oauth-audience`: a token for that is
/// admitted, one for the gateway's own local address is not.
#[test]
fn the_resource_and_the_audience_are_what_the_gateway_is_told() {
    let Some((_issuer, issuer)) = start_issuer() else {
        return;
    };
    let Some((_dir, config)) = fleet(false) else {
        return;
    };
    let public = "https://mcp.example.com/mcp";
    let (_server, url) = serve_http(
        &config,
        &["--oauth-issuer", &issuer, "--oauth-resource", public],
    );
    let (status, response) = http_request(
        &url,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        "",
    );
    assert_eq!(status, 200, "{response}");
    assert!(
        response.contains(&format!("\"resource\":\"{public}\"")),
        "{response}"
    );
    let bearer = |resource: &str| {
        format!(
            "Bearer {}",
            token(&issuer, "rs-client", resource, "mcp:tools")
        )
    };
    let (status, response) = initialize(&url, Some(&bearer(public)));
    assert_eq!(status, 200, "{response}");
    let (status, response) = initialize(&url, Some(&bearer(&url)));
    assert_eq!(status, 401, "{response}");

    let api = "urn:example:mcp-api";
    let (_server, url) = serve_http(
        &config,
        &["--oauth-issuer", &issuer, "--oauth-audience", api],
    );
    let (status, response) = initialize(&url, Some(&bearer(api)));
    assert_eq!(status, 200, "{response}");
    let (status, response) = initialize(&url, Some(&bearer(&url)));
    assert_eq!(status, 401, "{response}");
}

#[test]
fn sdk_clients_call_with_the_issuers_tokens() {
    let Some((_issuer, issuer)) = start_issuer() else {
        return;
    };
    let Some(python) = python_client() else {
        return;
    };
    let audit = tempfile::NamedTempFile::new().unwrap();
    let Some((_dir, _server, url)) = served(&issuer, audit.path()) else {
        return;
    };
    let bearer = token(&issuer, "rs-client", &url, "mcp:tools");
    run_python_client(&python, &["calls", &url, &bearer, "3"]);
    let log = std::fs::read_to_string(audit.path()).unwrap();
    let line: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(line["subject"], "rs-client", "{log}");
    assert_eq!(line["oauthClient"], "rs-client", "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcpmux_finds_the_issuer_itself_and_calls_with_a_dpop_bound_token() {
    let Some((_issuer, issuer)) = start_issuer() else {
        return;
    };
    let audit = tempfile::NamedTempFile::new().unwrap();
    let Some((dir, _server, url)) = served(&issuer, audit.path()) else {
        return;
    };
    // Nothing but the server's URL and a client registered with the issuer: the pool finds
    // the issuer from the 401, asks it for a token for this server, and calls.
    let pool = Pool::open(PoolOptions {
        config_path: Some(dir.path().join("client.json")),
        health_check_interval_ms: 0,
        ..PoolOptions::default()
    })
    .await
    .unwrap();
    let mut events = pool.events();
    let config: ServerConfig = serde_json::from_value(json!({
        "url": url,
        "oauth": {
            "grant": "client_credentials",
            "clientId": "es-client",
            "clientSecret": "secret-of-es-client",
            "scopes": ["mcp:tools"],
        },
    }))
    .unwrap();
    pool.add_server(ServerInput {
        name: "fleet".into(),
        config,
        ..ServerInput::default()
    })
    .await
    .unwrap();
    let result = pool
        .call_tool(
            "mcp__fleet__demo__echo",
            json!({"text": "through oauth"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(text(&result), "through oauth");
    let log = std::fs::read_to_string(audit.path()).unwrap();
    assert!(log.contains("\"subject\":\"es-client\""), "{log}");
    // The issuer offers DPoP, so the token the pool keeps is bound to its key: the server
    // took a proof with every request.
    let stored = std::fs::read_to_string(dir.path().join("client.json.tokens.json")).unwrap();
    let stored: Value = serde_json::from_str(&stored).unwrap();
    let types: Vec<String> = stored
        .as_object()
        .unwrap()
        .values()
        .map(|t| {
            t["token_response"]["token_type"]
                .as_str()
                .unwrap_or_default()
                .to_lowercase()
        })
        .collect();
    assert_eq!(types, ["dpop"]);
    // No event the host is told carries the token.
    let said: String = std::iter::from_fn(|| events.try_recv())
        .map(|e| format!("{e:?}"))
        .collect();
    assert!(said.contains("fleet"), "no event seen: {said}");
    for token in stored.as_object().unwrap().values() {
        let access = token["token_response"]["access_token"].as_str().unwrap();
        assert!(!said.contains(access.rsplit('.').next().unwrap()), "{said}");
    }
    pool.close().await;
}

/// `mcpmux` on `config` with `MCPMUX_LOG=trace` (every crate's log lines): stdout and stderr.
fn traced(config: &Path, args: &[&str]) -> String {
    traced_with(config, Command::new(MCPMUX), args)
}

/// As [`traced`], from `command` (a `mcpmux` with the environment a test wants).
fn traced_with(config: &Path, mut command: Command, args: &[&str]) -> String {
    let out = command
        .arg("--config")
        .arg(config)
        .args(args)
        .env_remove("MCPMUX_CONFIG")
        .env("MCPMUX_LOG", "trace")
        .output()
        .expect("run mcpmux");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "mcpmux {args:?}: {all}");
    all
}

#[test]
fn access_tokens_reach_no_output_and_no_log_line_even_at_trace() {
    let Some((_issuer, issuer)) = start_issuer() else {
        return;
    };
    let audit = tempfile::NamedTempFile::new().unwrap();
    let Some((dir, _server, url)) = served(&issuer, audit.path()) else {
        return;
    };
    let client = dir.path().join("client.json");
    // Added disabled: enabled, it would be authorized by the authorization code grant.
    let added = mcpmux(
        &client,
        &["servers", "add", "fleet", "--url", &url, "--disabled"],
    );
    assert!(added.status.success(), "{added:?}");
    let mut file: Value = serde_json::from_slice(&std::fs::read(&client).unwrap()).unwrap();
    file["mcpServers"][0]["isActive"] = json!(true);
    file["mcpServers"][0]["config"]["oauth"] = json!({
        "grant": "client_credentials",
        "clientId": "es-client",
        "clientSecret": "secret-of-es-client",
        "scopes": ["mcp:tools"],
    });
    std::fs::write(&client, file.to_string()).unwrap();

    // A token is got, used, kept, and used again from the token file.
    let mut said = traced(
        &client,
        &["call", "mcp__fleet__demo__echo", r#"{"text":"a"}"#],
    );
    said += &traced(&client, &["--json", "tools"]);
    said += &traced(&client, &["--json", "servers", "list"]);
    said += &traced(&client, &["servers", "list"]);
    assert!(
        said.contains("TRACE"),
        "no trace lines: the test sees no log"
    );

    let (mut tokens, refresh) = kept_tokens(&client);
    tokens.extend(refresh);
    assert!(!tokens.is_empty(), "no token was kept");
    assert_none_said(&said, &tokens);
    assert!(
        !said.contains("secret-of-es-client"),
        "the client secret reached the output"
    );
}

/// The access and refresh tokens the token file next to `config` holds.
fn kept_tokens(config: &Path) -> (Vec<String>, Vec<String>) {
    let path = config.with_file_name(format!(
        "{}.tokens.json",
        config.file_name().unwrap().to_string_lossy()
    ));
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let of = |key: &str| -> Vec<String> {
        stored
            .as_object()
            .unwrap()
            .values()
            .filter_map(|t| t["token_response"][key].as_str().map(str::to_string))
            .collect()
    };
    (of("access_token"), of("refresh_token"))
}

/// Fails if any of `secrets` is in `said`.
fn assert_none_said(said: &str, secrets: &[String]) {
    for secret in secrets {
        // A JWT's signature alone, too: a log line cut short still holds it.
        let tail = secret.rsplit('.').next().unwrap();
        let line = said.lines().find(|l| l.contains(tail));
        assert!(
            line.is_none(),
            "a token or code reached the output: {line:?}"
        );
    }
}

/// A browser for `mcpmux` (an `xdg-open` first on its PATH): follows the authorization URL's
/// redirects with cookies, as the user's browser does, through the issuer's sign-in and
/// consent, back to mcpmux's loopback listener; writes each URL it visits to `visited`.
fn browser(dir: &Path) -> std::ffi::OsString {
    let script = dir.join("xdg-open");
    let visited = dir.join("visited");
    std::fs::write(
        &script,
        format!(
            r#"#!/usr/bin/env python3
import sys, urllib.request
from http.cookiejar import CookieJar

class Visits(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, url):
        with open({visited:?}, "a") as f:
            f.write(url + "\n")
        return super().redirect_request(req, fp, code, msg, headers, url)

opener = urllib.request.build_opener(
    urllib.request.ProxyHandler({{}}), urllib.request.HTTPCookieProcessor(CookieJar()), Visits()
)
try:
    opener.open(sys.argv[1], timeout=30).read()
except Exception as e:
    with open({visited:?}, "a") as f:
        f.write(f"failed: {{e}} {{e.read().decode() if hasattr(e, 'read') else ''}}\n")
    raise
"#
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut path = std::ffi::OsString::from(dir);
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    path
}

#[test]
fn refresh_tokens_and_codes_reach_no_output_and_no_log_line_even_at_trace() {
    let Some((_issuer, issuer)) = start_issuer() else {
        return;
    };
    let audit = tempfile::NamedTempFile::new().unwrap();
    let Some((dir, _server, url)) = served(&issuer, audit.path()) else {
        return;
    };
    let client = dir.path().join("client.json");
    let user = tempfile::tempdir().unwrap();
    let path = browser(user.path());
    let run = |args: &[&str]| {
        let mut command = Command::new(MCPMUX);
        command.env("PATH", &path);
        traced_with(&client, command, args)
    };

    // Adding it registers mcpmux, takes the user through the authorization code grant and
    // lists its tools; a call uses the tokens kept.
    let mut said = run(&["servers", "add", "fleet", "--url", &url]);
    let first = said.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("added fleet (") && first.ends_with(" tools"),
        "{first}"
    );
    said += &run(&["call", "mcp__fleet__demo__echo", r#"{"text":"a"}"#]);
    let (mut access, mut refresh) = kept_tokens(&client);
    assert!(!refresh.is_empty(), "the issuer gave no refresh token");
    // The issuer's access tokens live 4 s, and rmcp refreshes past half of that: the next run
    // refreshes before it calls.
    std::thread::sleep(std::time::Duration::from_secs(3));
    said += &run(&["call", "mcp__fleet__demo__echo", r#"{"text":"b"}"#]);
    said += &run(&["--json", "servers", "list"]);
    let (access_after, refresh_after) = kept_tokens(&client);
    assert_ne!(access, access_after, "the second run did not refresh");
    access.extend(access_after);
    refresh.extend(refresh_after);
    assert!(
        said.contains("TRACE"),
        "no trace lines: the test sees no log"
    );

    let visited = std::fs::read_to_string(user.path().join("visited")).unwrap();
    let codes: Vec<String> = visited
        .lines()
        .filter_map(|u| {
            u.split_once("code=")?
                .1
                .split('&')
                .next()
                .map(str::to_string)
        })
        .collect();
    assert!(!codes.is_empty(), "no code came back: {visited}");
    assert_none_said(&said, &access);
    assert_none_said(&said, &refresh);
    assert_none_said(&said, &codes);
}
