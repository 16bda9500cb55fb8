//! `mcpmux-conformance <server-url>`: what the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) runs as a client. It reads the scenario from
//! `MCP_CONFORMANCE_SCENARIO` and does what a host application would do for it, through the
//! public API only: connect, list tools, call them, answer the server's requests.

use std::process::ExitCode;
use std::sync::Arc;

use mcpmux::auth::{
    AuthorizationPrompt, Grant, IdTokenFn, IdTokenRequest, IdpSettings, OAuthHandler, OAuthSettings,
};
use mcpmux::model::{ElicitResult, ElicitationAction};
use mcpmux::{
    ElicitationHandler, HostRequest, Pool, PoolOptions, ServerConfig, ServerInput, TransportType,
    fill_schema_defaults,
};
use serde_json::{Value, json};

/// Accepts every form with the defaults its schema gives (SEP-1034), as a host that
/// pre-fills a form and has the user confirm it would.
fn accept_with_defaults() -> ElicitationHandler {
    Arc::new(|req: HostRequest<mcpmux::model::ElicitRequestParams>| {
        Box::pin(async move {
            let params = serde_json::to_value(&req.params).map_err(|e| e.to_string())?;
            let content = fill_schema_defaults(&params["requestedSchema"], serde_json::Map::new());
            Ok(ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content)))
        })
    })
}

/// The suite's authorization servers approve at once: following the authorization URL
/// without redirects gives the redirect a browser would have made.
fn headless_authorization() -> OAuthHandler {
    OAuthHandler {
        redirect_uri: "http://localhost:3000/callback".into(),
        authorize: Arc::new(|prompt: AuthorizationPrompt| {
            Box::pin(async move {
                let client = reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .map_err(|e| e.to_string())?;
                let response = client
                    .get(&prompt.authorization_url)
                    .send()
                    .await
                    .map_err(|e| e.to_string())?;
                response
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
                    .ok_or_else(|| {
                        format!(
                            "no redirect from the authorization server ({})",
                            response.status()
                        )
                    })
            })
        }),
    }
}

/// What the suite passes in `MCP_CONFORMANCE_CONTEXT` (credentials, a signing key, an
/// identity provider and the user's ID token).
fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default()
}

/// The host's single sign-on, for the enterprise-managed grant: it hands out the signed-in
/// user's ID token (here the one the suite's identity provider issued).
fn single_sign_on() -> IdTokenFn {
    let token = context()["idp_id_token"].as_str().map(str::to_string);
    Arc::new(move |req: IdTokenRequest| {
        let token = token.clone();
        Box::pin(async move {
            token.ok_or_else(|| format!("no user is signed in to {}", req.idp_issuer))
        })
    })
}

/// The OAuth settings a host would configure for this server, from what the suite passes
/// in `MCP_CONFORMANCE_CONTEXT`.
fn oauth_settings(scenario: &str) -> OAuthSettings {
    let context = context();
    let text = |k: &str| context[k].as_str().map(str::to_string);
    // An enterprise identity provider: cross-app access (the ID token comes from the host).
    let idp = text("idp_issuer").map(|issuer| IdpSettings {
        issuer,
        token_endpoint: text("idp_token_endpoint"),
        client_id: text("idp_client_id").unwrap_or_default(),
        client_secret: text("idp_client_secret"),
        token_endpoint_auth_method: None,
        id_token: None,
    });
    OAuthSettings {
        client_id: text("client_id"),
        client_secret: text("client_secret"),
        client_metadata_url: Some("https://conformance-test.local/client-metadata.json".into()),
        scopes: Vec::new(),
        // A machine client (no user): the scenarios for the client-credentials grant, and a
        // workload whose platform issued it a JWT (workload identity federation).
        grant: if idp.is_some() {
            Grant::EnterpriseManaged
        } else if context.get("valid_jwt").is_some() {
            Grant::JwtBearer
        } else if scenario.starts_with("auth/client-credentials") {
            Grant::ClientCredentials
        } else {
            Grant::AuthorizationCode
        },
        private_key_pem: text("private_key_pem"),
        signing_algorithm: text("signing_algorithm"),
        idp,
        dpop: None,
        assertion: text("valid_jwt"),
        assertion_file: None,
    }
}

/// Arguments for a tool from its schema: the schema's defaults, else small sample values,
/// as a scripted host exercising every tool would send.
fn sample_arguments(schema: &Value) -> Value {
    let mut args = serde_json::Map::new();
    for (name, prop) in schema["properties"].as_object().into_iter().flatten() {
        let value = prop
            .get("default")
            .cloned()
            .unwrap_or_else(|| match prop["type"].as_str() {
                Some("number") | Some("integer") => json!(args.len() as i64 + 2),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!("conformance"),
            });
        args.insert(name.clone(), value);
    }
    Value::Object(args)
}

/// The tool calls a host makes in `scenario`, given the tools the server listed: those the
/// suite names in its context (`toolCalls`, with their exact arguments); for the JSON Schema
/// scenarios, the tool's schema sent back as it was received (`json_schema_echo`) or nothing
/// (a list is all there is); else every tool with arguments from its schema (`initialize`
/// offers none).
fn calls(scenario: &str, tools: &[mcpmux::ToolInfo]) -> Vec<(String, Value)> {
    let id_of = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .map_or_else(|| name.to_string(), |t| t.id.clone())
    };
    if let Some(asked) = context()["toolCalls"].as_array() {
        return asked
            .iter()
            .map(|c| {
                let name = c["name"].as_str().unwrap_or_default();
                (
                    id_of(name),
                    c.get("arguments").cloned().unwrap_or(json!({})),
                )
            })
            .collect();
    }
    match scenario {
        "json-schema-ref-no-deref" => Vec::new(),
        "json-schema-2020-12-preservation" => tools
            .iter()
            .filter(|t| t.name == "json_schema_2020_12_tool")
            .map(|t| (id_of("json_schema_echo"), json!({"schema": t.input_schema})))
            .collect(),
        _ => tools
            .iter()
            .map(|t| (t.id.clone(), sample_arguments(&t.input_schema.to_value())))
            .collect(),
    }
}

async fn run(url: &str, scenario: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a temp dir: {e}"))?;
    let pool = Pool::open(PoolOptions {
        config_path: Some(dir.path().join("servers.json")),
        connect_on_add: false,
        health_check_interval_ms: 0,
        ..PoolOptions::default()
    })
    .await
    .map_err(|e| e.to_string())?;
    pool.set_elicitation_handler(Some(accept_with_defaults()));
    pool.set_oauth_handler(Some(headless_authorization()));
    pool.set_id_token_provider(Some(single_sign_on()));
    pool.set_token_store(Arc::new(mcpmux::auth::MemoryTokenStore::default()));
    let mut input = ServerInput {
        name: "server".into(),
        transport: Some(TransportType::Http),
        config: ServerConfig {
            url: Some(url.into()),
            strict_transport: true,
            oauth: Some(oauth_settings(scenario)),
            ..Default::default()
        },
        ..Default::default()
    };
    input.is_trusted = Some(true);
    pool.add_server(input).await.map_err(|e| e.to_string())?;
    let outcome = async {
        pool.connect("server").await?;
        if scenario.starts_with("sep-2640-") {
            return use_skills(&pool, scenario).await;
        }
        let tools = pool.list_tools(Some("server")).await?;
        eprintln!("[{scenario}] {} tool(s)", tools.len());
        for (id, args) in calls(scenario, &tools) {
            let result = pool.call_tool(&id, args, Default::default()).await?;
            eprintln!("[{scenario}] {id} -> {:?}", result.content);
        }
        Ok::<(), mcpmux::Error>(())
    }
    .await;
    pool.close().await;
    outcome.map_err(|e| e.to_string())
}

/// What a host does with a server's skills: lists them when it connects (reading no file),
/// and in the scenarios that check what it reads, loads each skill as an agent asking for it
/// would, then reads the skill's other files; a skill whose `SKILL.md` fails its checks is
/// not loaded, and nothing more of it is read.
async fn use_skills(pool: &Pool, scenario: &str) -> mcpmux::Result<()> {
    let skills = pool.list_skills(Some("server")).await?;
    eprintln!("[{scenario}] {} skill(s)", skills.len());
    if scenario == "sep-2640-client-no-prefetch" {
        return Ok(());
    }
    for skill in skills {
        match pool.load_skill("server", &skill.name).await {
            Ok(loaded) => {
                for file in loaded.skill.files.iter().flatten() {
                    pool.read_skill_file("server", &skill.name, &file.uri)
                        .await?;
                }
            }
            Err(e) => eprintln!("[{scenario}] {}: {e}", skill.name),
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: mcpmux-conformance <server-url>");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mcpmux-conformance: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(&url, &scenario)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpmux-conformance: {e}");
            ExitCode::FAILURE
        }
    }
}
