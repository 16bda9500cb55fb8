//! What each command does: parse its input, call the pool, print the outcome.

use std::fmt;
use std::io::{IsTerminal, Read, Write};

use mcpmux::model::CallToolResult;
use mcpmux::{
    CallOptions, ErrorKind, Pool, PoolOptions, ServerConfig, ServerFilter, ServerInput,
    ServerPatch, ServerRecord, TransportType,
};
use serde::Serialize;

use crate::spinner::Spinner;
use crate::{AddArgs, Cli, Command, ServersCommand};

/// A failure of the command line: from the core, or from the user's input.
pub struct CliError {
    kind: Option<ErrorKind>,
    message: String,
}

impl CliError {
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            kind: None,
            message: message.into(),
        }
    }
    /// A command that ran but whose outcome is a failure (e.g. a test that did not connect).
    pub fn failed(message: impl Into<String>) -> Self {
        CliError {
            kind: Some(ErrorKind::Connection),
            message: message.into(),
        }
    }
    pub fn kind(&self) -> Option<ErrorKind> {
        self.kind
    }
}

impl From<mcpmux::Error> for CliError {
    fn from(e: mcpmux::Error) -> Self {
        CliError {
            kind: Some(e.kind()),
            message: e.to_string(),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

pub type Result<T> = std::result::Result<T, CliError>;

pub fn print_json(value: &impl Serialize) {
    match serde_json::to_string_pretty(value) {
        Ok(s) => println!("{s}"),
        Err(e) => eprintln!("mcpmux: cannot print JSON: {e}"),
    }
}

fn parse_object(text: Option<&str>, what: &str) -> Result<serde_json::Value> {
    let Some(text) = text else {
        return Ok(serde_json::Value::Object(Default::default()));
    };
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v @ serde_json::Value::Object(_)) => Ok(v),
        Ok(_) => Err(CliError::usage(format!("{what} must be a JSON object"))),
        Err(e) => Err(CliError::usage(format!("{what} is not valid JSON: {e}"))),
    }
}

async fn open(cli: &Cli) -> Result<Pool> {
    let defaults = PoolOptions::default();
    let options = PoolOptions {
        config_path: cli.config.clone(),
        project_path: cli.project.clone(),
        // A one-shot command needs no health checks; a server keeps its fleet healthy.
        health_check_interval_ms: match cli.command {
            Command::Serve(_) => defaults.health_check_interval_ms,
            _ => 0,
        },
        idle_stop_ms: match &cli.command {
            Command::Serve(args) => args.idle_stop.saturating_mul(1000),
            _ => 0,
        },
        // Servers offer MCP App views to a host that renders them; `serve` passes them on
        // to each client that does (and keeps them, and the tools of views, from the rest).
        apps: match cli.command {
            Command::Serve(_) => Some(mcpmux::AppsOptions::default()),
            _ => None,
        },
        ..defaults
    };
    Ok(Pool::open(options).await?)
}

/// Runs `f` with a spinner, since it may have to start servers.
async fn connecting<T>(label: &str, f: impl Future<Output = T>) -> T {
    let spinner = Spinner::start(label);
    let out = f.await;
    spinner.finish().await;
    out
}

/// What a new user with an empty config needs to read next.
pub(crate) const NO_SERVERS_HINT: &str =
    " (add one with `mcpmux servers add`, or import a host's with `mcpmux servers import FILE`)";

/// `empty` (an empty answer), saying why when no server is configured at all: a new user's
/// first `tools` should point at the next step, not look like a broken fleet.
async fn nothing_yet(pool: &Pool, empty: &str) -> Result<String> {
    Ok(if pool.list_servers().await?.is_empty() {
        format!("{empty}: no servers yet{NO_SERVERS_HINT}")
    } else {
        empty.to_string()
    })
}

pub async fn run(cli: Cli) -> Result<()> {
    match &cli.command {
        Command::DemoServer => return crate::demo_server::run().await.map_err(CliError::failed),
        Command::Demo => return crate::demo::run(cli.json).await,
        _ => {}
    }
    let pool = open(&cli).await?;
    let result = dispatch(&cli, &pool).await;
    pool.close().await;
    result
}

async fn dispatch(cli: &Cli, pool: &Pool) -> Result<()> {
    let json = cli.json;
    match &cli.command {
        Command::Servers(cmd) => servers(cmd, pool, json).await,
        Command::Tools {
            search: Some(query),
            limit,
            ..
        } => {
            // Servers never listed (or whose config changed) are listed first; the others
            // answer from the catalog without starting.
            let all = ServerFilter::default();
            let unlisted = connecting("listing new servers…", pool.ensure_catalog(&all)).await;
            for u in &unlisted {
                eprintln!("mcpmux: server '{}' left out: {}", u.server_name, u.error);
            }
            let hits = pool.search_tools(query, *limit).await?;
            if json {
                print_json(&hits);
            } else if hits.is_empty() {
                println!("{}", nothing_yet(pool, "no match").await?);
            } else {
                let width = hits.iter().map(|h| h.id.len()).max().unwrap_or(0);
                for h in &hits {
                    println!("{:width$}  {:6.2}  {}", h.id, h.score, h.description);
                }
            }
            Ok(())
        }
        Command::Tools { server, .. } => {
            let tools =
                connecting("connecting servers…", pool.list_tools(server.as_deref())).await?;
            if json {
                print_json(&tools);
            } else if tools.is_empty() {
                println!("{}", nothing_yet(pool, "no tools").await?);
            } else {
                let width = tools.iter().map(|t| t.id.len()).max().unwrap_or(0);
                for t in &tools {
                    let desc = t
                        .description
                        .as_deref()
                        .unwrap_or("")
                        .lines()
                        .next()
                        .unwrap_or("");
                    println!("{:width$}  {desc}", t.id);
                }
            }
            Ok(())
        }
        Command::Call {
            tool_id,
            args,
            timeout_ms,
        } => {
            let args = parse_object(args.as_deref(), "ARGS_JSON")?;
            let options = CallOptions {
                timeout: timeout_ms.map(std::time::Duration::from_millis),
                ..Default::default()
            };
            let result = connecting("calling…", pool.call_tool(tool_id, args, options)).await?;
            if json {
                print_json(&result);
            } else {
                print_result(&result);
            }
            if result.is_error == Some(true) {
                return Err(CliError {
                    kind: Some(ErrorKind::Tool),
                    message: format!("tool '{tool_id}' reported an error"),
                });
            }
            Ok(())
        }
        Command::Resources { server } => {
            let list = connecting(
                "connecting servers…",
                pool.list_resources(server.as_deref()),
            )
            .await?;
            if json {
                print_json(&list);
            } else {
                for r in &list {
                    println!("{}  {}  {}", r.server_name, r.resource.uri, r.resource.name);
                }
            }
            Ok(())
        }
        Command::Read { server, uri } => {
            let result = connecting("reading…", pool.read_resource(server, uri)).await?;
            if json {
                print_json(&result);
            } else {
                for c in &result.contents {
                    match serde_json::to_value(c)
                        .ok()
                        .and_then(|v| v.get("text").cloned())
                    {
                        Some(serde_json::Value::String(t)) => println!("{t}"),
                        _ => println!("{}", serde_json::to_string(c).unwrap_or_default()),
                    }
                }
            }
            Ok(())
        }
        Command::Complete {
            server,
            argument,
            value,
            prompt,
            resource,
            context,
        } => {
            let reference = match (prompt, resource) {
                (Some(name), _) => serde_json::json!({"type": "ref/prompt", "name": name}),
                (None, Some(uri)) => serde_json::json!({"type": "ref/resource", "uri": uri}),
                (None, None) => unreachable!("clap requires --prompt or --resource"),
            };
            let mut params = serde_json::json!({
                "ref": reference,
                "argument": {"name": argument, "value": value},
            });
            if context.is_some() {
                let chosen = parse_object(context.as_deref(), "--context")?;
                params["context"] = serde_json::json!({"arguments": chosen});
            }
            let params = serde_json::from_value(params).map_err(|e| {
                CliError::usage(format!("--context must be a JSON object of strings: {e}"))
            })?;
            let found = connecting("completing…", pool.complete(server, params)).await?;
            if json {
                print_json(&found);
            } else {
                for v in &found.values {
                    println!("{v}");
                }
                if found.has_more == Some(true) {
                    eprintln!("(more: type more of it)");
                }
            }
            Ok(())
        }
        Command::Prompts { server } => {
            let list =
                connecting("connecting servers…", pool.list_prompts(server.as_deref())).await?;
            if json {
                print_json(&list);
            } else {
                for p in &list {
                    let desc = p.prompt.description.as_deref().unwrap_or("");
                    println!("{}  {}  {desc}", p.server_name, p.prompt.name);
                }
            }
            Ok(())
        }
        Command::Prompt { server, name, args } => {
            let args = match parse_object(args.as_deref(), "ARGS_JSON")? {
                serde_json::Value::Object(m) if !m.is_empty() => Some(m),
                _ => None,
            };
            let result = connecting("getting prompt…", pool.get_prompt(server, name, args)).await?;
            print_json(&result);
            Ok(())
        }
        Command::Events => {
            let mut events = pool.events();
            let connect = {
                let pool = pool.clone();
                tokio::spawn(async move { pool.connect_all().await })
            };
            loop {
                tokio::select! {
                    e = events.recv() => match e {
                        Some(e) => println!("{}", serde_json::to_string(&e).unwrap_or_default()),
                        None => break,
                    },
                    _ = tokio::signal::ctrl_c() => break,
                }
            }
            connect.abort();
            Ok(())
        }
        Command::Chat(args) => crate::chat::run(args, pool, json).await,
        Command::Serve(args) => crate::serve::run(args, pool).await,
        Command::Demo | Command::DemoServer => unreachable!("handled before the pool opens"),
    }
}

pub fn print_result(result: &CallToolResult) {
    for block in &result.content {
        match serde_json::to_value(block) {
            Ok(v) => match (v.get("type").and_then(|t| t.as_str()), v.get("text")) {
                (Some("text"), Some(serde_json::Value::String(t))) => println!("{t}"),
                (Some(kind), _) => println!("[{kind} content]"),
                _ => println!("{v}"),
            },
            Err(_) => println!("[unprintable content]"),
        }
    }
    if let Some(s) = &result.structured_content {
        println!("structuredContent: {s}");
    }
}

async fn servers(cmd: &ServersCommand, pool: &Pool, json: bool) -> Result<()> {
    let set = |name: &String, patch: ServerPatch, verb: &'static str| {
        let name = name.clone();
        async move {
            let record = pool.update_server(&name, patch).await?;
            if json {
                print_json(&record.redacted());
            } else if record.is_trusted {
                // What trust covers: the tools as they are now.
                match &record.trusted_tools {
                    Some(tools) => println!(
                        "{verb} {}: its {} tools as they are now; a tool that changes or \
                         appears later is asked about again",
                        record.name,
                        tools.len()
                    ),
                    None => println!(
                        "{verb} {} (its tools could not be listed now: they are trusted as \
                         first seen, and asked about again when they change)",
                        record.name
                    ),
                }
            } else {
                println!("{verb} {}", record.name);
            }
            Ok::<_, CliError>(())
        }
    };
    match cmd {
        ServersCommand::List { show_secrets } => {
            let records = pool.list_servers().await?;
            if json && *show_secrets {
                print_json(&records);
            } else if json {
                let shown: Vec<ServerRecord> = records.iter().map(ServerRecord::redacted).collect();
                print_json(&shown);
            } else if records.is_empty() {
                println!("no servers{NO_SERVERS_HINT}");
            } else {
                for r in &records {
                    let target = match r.transport {
                        TransportType::Stdio => {
                            let mut s = r.config.command.clone().unwrap_or_default();
                            for a in &r.config.args {
                                s.push(' ');
                                s.push_str(a);
                            }
                            s
                        }
                        _ => mcpmux::config::record::redact_url(
                            r.config.url.as_deref().unwrap_or(""),
                        ),
                    };
                    let flags = format!(
                        "{}{}{}{}",
                        if r.is_active { "" } else { " (disabled)" },
                        if r.pending {
                            " (waiting for approval)"
                        } else {
                            ""
                        },
                        if r.is_trusted { " (trusted)" } else { "" },
                        if r.config.sandbox.is_some() {
                            " (sandboxed)"
                        } else {
                            ""
                        }
                    );
                    println!("{}  {}  {target}{flags}", r.name, r.transport.as_str());
                }
            }
            Ok(())
        }
        ServersCommand::Add(args) => {
            let input = add_input(args)?;
            let added = pool.add(input).await?;
            let record = &added.record;
            let listed = first_listing(pool, std::slice::from_ref(record)).await;
            let listing = &listed[&record.id];
            if json {
                let shown = mcpmux::AddOutcome {
                    record: added.record.redacted(),
                    ..added.clone()
                };
                print_json(&WithListing::new(&shown, Some(listing)));
            } else if added.already_there {
                println!("{} ({}) is already there{listing}", record.name, record.id);
            } else {
                println!("added {} ({}){listing}", record.name, record.id);
            }
            Ok(())
        }
        ServersCommand::Import { file } => {
            let text = if file == "-" {
                let mut s = String::new();
                std::io::stdin()
                    .read_to_string(&mut s)
                    .map_err(|e| CliError::usage(format!("cannot read stdin: {e}")))?;
                s
            } else {
                std::fs::read_to_string(file)
                    .map_err(|e| CliError::usage(format!("cannot read {file}: {e}")))?
            };
            let results = pool.add_json(&text).await.map_err(|e| {
                let mut e = CliError::from(e);
                // Which file: an import names the one it could not read as a server list.
                if file != "-" {
                    e.message = format!("{file}: {}", e.message);
                }
                e
            })?;
            let added: Vec<ServerRecord> =
                results.iter().filter_map(|r| r.record.clone()).collect();
            let listed = first_listing(pool, &added).await;
            let listing_of =
                |r: &mcpmux::ImportResult| r.record.as_ref().and_then(|rec| listed.get(&rec.id));
            if json {
                let shown: Vec<mcpmux::ImportResult> = (results.iter())
                    .map(|r| mcpmux::ImportResult {
                        record: r.record.as_ref().map(ServerRecord::redacted),
                        ..r.clone()
                    })
                    .collect();
                let outcomes: Vec<_> = (results.iter().zip(&shown))
                    .map(|(r, shown)| WithListing::new(shown, listing_of(r)))
                    .collect();
                print_json(&outcomes);
            } else {
                for r in &results {
                    let listing = listing_of(r).map(ToString::to_string).unwrap_or_default();
                    match &r.error {
                        None if r.already_there => {
                            println!("{} is already there{listing}", r.name);
                        }
                        None => println!("added {}{listing}", r.name),
                        Some(e) => println!("failed {}: {e}", r.name),
                    }
                    if let Some(record) = r.record.as_ref().filter(|r| r.pending) {
                        let consent = mcpmux::config::consent::Consent::of(record);
                        for line in consent.describe().lines() {
                            println!("    {line}");
                        }
                    }
                }
                let waiting: Vec<&ServerRecord> = (added.iter())
                    .filter(|r| r.pending && r.is_active)
                    .collect();
                let asked = file != "-" && std::io::stdin().is_terminal();
                match asked && std::io::stdout().is_terminal() {
                    true => approve_asking(pool, &waiting).await?,
                    false if waiting.is_empty() => {}
                    false => println!(
                        "{} waiting for your approval: `mcpmux servers approve NAME` (or \
                         `--all`) lets it run",
                        match waiting.len() {
                            1 => "1 server is".to_owned(),
                            n => format!("{n} servers are"),
                        }
                    ),
                }
            }
            let failed = results.iter().filter(|r| !r.success).count();
            if failed > 0 {
                return Err(CliError::usage(format!(
                    "{failed} of {} servers could not be imported",
                    results.len()
                )));
            }
            Ok(())
        }
        ServersCommand::Approve {
            name,
            all,
            no_sandbox,
        } => {
            let waiting: Vec<String> = match (name, all) {
                (Some(name), _) => vec![name.clone()],
                (None, _) => (pool.list_servers().await?.into_iter())
                    .filter(|r| r.pending)
                    .map(|r| r.name)
                    .collect(),
            };
            let mut approved = Vec::new();
            for name in &waiting {
                if *no_sandbox {
                    without_sandbox(pool, name).await?;
                }
                approved.push(pool.approve_server(name).await?);
            }
            let listed = first_listing(pool, &approved).await;
            if json {
                let shown: Vec<ServerRecord> =
                    approved.iter().map(ServerRecord::redacted).collect();
                let outcomes: Vec<_> = (shown.iter())
                    .map(|r| WithListing::new(r, listed.get(&r.id)))
                    .collect();
                print_json(&outcomes);
            } else if approved.is_empty() {
                println!("no server is waiting for approval");
            }
            for r in approved.iter().filter(|_| !json) {
                let listing = listed.get(&r.id).map(ToString::to_string);
                println!("approved {}{}", r.name, listing.unwrap_or_default());
            }
            Ok(())
        }
        ServersCommand::Remove { name } => {
            let record = pool.remove_server(name).await?;
            if json {
                print_json(&record.redacted());
            } else {
                println!("removed {}", record.name);
            }
            Ok(())
        }
        ServersCommand::Enable { name } => {
            set(
                name,
                ServerPatch {
                    is_active: Some(true),
                    ..Default::default()
                },
                "enabled",
            )
            .await
        }
        ServersCommand::Disable { name } => {
            set(
                name,
                ServerPatch {
                    is_active: Some(false),
                    ..Default::default()
                },
                "disabled",
            )
            .await
        }
        ServersCommand::Trust { name } => {
            set(
                name,
                ServerPatch {
                    is_trusted: Some(true),
                    ..Default::default()
                },
                "trusted",
            )
            .await
        }
        ServersCommand::Untrust { name } => {
            set(
                name,
                ServerPatch {
                    is_trusted: Some(false),
                    ..Default::default()
                },
                "untrusted",
            )
            .await
        }
        ServersCommand::Test { name } => {
            let result = connecting("testing…", pool.test_server(name)).await?;
            if json {
                print_json(&result);
            } else if result.success {
                println!(
                    "ok: {} tools in {} ms ({})",
                    result.tools.len(),
                    result.duration_ms,
                    result.protocol_version.as_deref().unwrap_or("?")
                );
                for t in &result.tools {
                    println!("  {t}");
                }
            }
            match result.error {
                Some(e) if !result.success => Err(CliError::failed(e)),
                _ => Ok(()),
            }
        }
        ServersCommand::Discover { name } => {
            let result = connecting("discovering…", pool.discover(name)).await?;
            if json {
                print_json(&result);
            } else {
                println!("tools:");
                for t in &result.tools {
                    println!("  {}", t.name);
                }
                println!("prompts:");
                for p in &result.prompts {
                    println!("  {}", p.name);
                }
                if let Some(e) = &result.prompts_error {
                    println!("  (failed: {e})");
                }
                println!("resources:");
                for r in &result.resources {
                    println!("  {}", r.uri);
                }
                if let Some(e) = &result.resources_error {
                    println!("  (failed: {e})");
                }
            }
            Ok(())
        }
    }
}

/// How a server's first listing went, after `servers add` or `import`.
enum Listing {
    /// Listed: this many tools.
    Tools(usize),
    /// Could not be listed (it did not start, say): the error.
    Failed(String),
    /// Disabled: not started.
    Inactive,
    /// Waiting for the user's approval: not started.
    Pending,
}

impl fmt::Display for Listing {
    /// What follows "added NAME" on the terminal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Listing::Tools(1) => f.write_str(": 1 tool"),
            Listing::Tools(n) => write!(f, ": {n} tools"),
            Listing::Failed(e) => write!(f, ", but its tools could not be listed: {e}"),
            Listing::Inactive => f.write_str(" (disabled: not started)"),
            Listing::Pending => {
                f.write_str(", waiting for your approval (nothing of it runs until then)")
            }
        }
    }
}

/// Takes the sandbox off a server before it is approved, at the user's word.
async fn without_sandbox(pool: &Pool, name: &str) -> Result<()> {
    let record = pool.get_server(name).await?;
    if record.config.sandbox.is_none() {
        return Ok(());
    }
    let config = ServerConfig {
        sandbox: None,
        ..record.config
    };
    let patch = ServerPatch {
        config: Some(config),
        ..Default::default()
    };
    pool.update_server(&record.id, patch).await?;
    Ok(())
}

/// Asks on the terminal about each server in `waiting`, showing what approving it lets run
/// (printed above), and approves those the user says yes to.
async fn approve_asking(pool: &Pool, waiting: &[&ServerRecord]) -> Result<()> {
    let mut approved = Vec::new();
    for record in waiting {
        print!("Let {} run? [y/N] ", record.name);
        std::io::stdout().flush().ok();
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer).ok();
        match answer.trim().eq_ignore_ascii_case("y") || answer.trim() == "yes" {
            true => approved.push(pool.approve_server(&record.id).await?),
            false => println!(
                "{} waits: `mcpmux servers approve {}` lets it run later",
                record.name, record.name
            ),
        }
    }
    let listed = first_listing(pool, &approved).await;
    for r in &approved {
        let listing = listed.get(&r.id).map(ToString::to_string);
        println!("approved {}{}", r.name, listing.unwrap_or_default());
    }
    Ok(())
}

/// Waits for the first listing that adding starts (each within its connect timeout, with a
/// spinner on a terminal), so that a new user sees at once whether a server works. The
/// outcomes are by server id.
async fn first_listing(
    pool: &Pool,
    records: &[ServerRecord],
) -> std::collections::HashMap<String, Listing> {
    let ids: Vec<String> = records
        .iter()
        .filter(|r| r.runs())
        .map(|r| r.id.clone())
        .collect();
    let servers = ServerFilter {
        enabled: Some(ids),
        disabled: Vec::new(),
    };
    let label = match records {
        [one] => format!("starting {}…", one.name),
        _ => format!("starting {} servers…", records.len()),
    };
    let unlisted = if records.iter().any(ServerRecord::runs) {
        connecting(&label, pool.ensure_catalog(&servers)).await
    } else {
        Vec::new()
    };
    let known = pool.known_tools();
    records
        .iter()
        .map(|r| {
            let listing = match unlisted.iter().find(|u| u.server_id == r.id) {
                _ if !r.is_active => Listing::Inactive,
                _ if r.pending => Listing::Pending,
                Some(u) => Listing::Failed(u.error.clone()),
                None => Listing::Tools(known.iter().filter(|t| t.server_id == r.id).count()),
            };
            (r.id.clone(), listing)
        })
        .collect()
}

/// What `servers add --json` prints (an add's outcome) and each entry of `servers import
/// --json` (an import's result), with how the server's first listing went.
#[derive(Serialize)]
struct WithListing<'a, T> {
    #[serde(flatten)]
    outcome: &'a T,
    #[serde(flatten)]
    listing: ListingJson,
}

impl<'a, T> WithListing<'a, T> {
    fn new(outcome: &'a T, listing: Option<&Listing>) -> WithListing<'a, T> {
        WithListing {
            outcome,
            listing: ListingJson::of(listing),
        }
    }
}

/// How a first listing went, as `--json` says it: a tool count or the error.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListingJson {
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_count: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    list_error: Option<String>,
}

impl ListingJson {
    fn of(listing: Option<&Listing>) -> ListingJson {
        let (tool_count, list_error) = match listing {
            Some(Listing::Tools(n)) => (Some(*n), None),
            Some(Listing::Failed(e)) => (None, Some(e.clone())),
            _ => (None, None),
        };
        ListingJson {
            tool_count,
            list_error,
        }
    }
}

/// The sandbox the flags ask for, if any of them is given.
fn sandbox_of(args: &crate::SandboxArgs) -> Option<mcpmux::config::sandbox::Sandbox> {
    use mcpmux::config::sandbox::{Network, Sandbox};
    let asked = args.sandbox
        || !args.allow_read.is_empty()
        || !args.allow_write.is_empty()
        || args.allow_network
        || args.memory_mb.is_some()
        || args.open_files.is_some()
        || args.processes.is_some()
        || args.sandbox_required;
    asked.then(|| Sandbox {
        read: args.allow_read.clone(),
        write: args.allow_write.clone(),
        network: match args.allow_network {
            true => Network::All,
            false => Network::None,
        },
        memory_mb: args.memory_mb,
        open_files: args.open_files,
        processes: args.processes,
        required: args.sandbox_required,
    })
}

fn add_input(args: &AddArgs) -> Result<ServerInput> {
    let mut config = ServerConfig {
        command: args.command.clone(),
        args: args.args.clone(),
        inherit_env: args.inherit_env,
        cwd: args.cwd.clone(),
        url: args.url.clone(),
        sandbox: sandbox_of(&args.sandbox),
        ..Default::default()
    };
    for kv in &args.env {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| CliError::usage(format!("--env wants K=V, got '{kv}'")))?;
        config.env.insert(k.to_string(), v.to_string());
    }
    for kv in &args.headers {
        let (k, v) = kv
            .split_once(':')
            .ok_or_else(|| CliError::usage("--header wants K:V".to_string()))?;
        config
            .headers
            .insert(k.trim().to_string(), v.trim().to_string());
    }
    let transport = match args.transport.as_deref() {
        None => None,
        Some(t) => Some(
            serde_json::from_value::<TransportType>(serde_json::Value::String(t.to_string()))
                .map_err(|_| {
                    CliError::usage(format!(
                        "--type must be stdio, http, sse or websocket, not '{t}'"
                    ))
                })?,
        ),
    };
    Ok(ServerInput {
        name: args.name.clone(),
        transport,
        config,
        is_active: Some(!args.disabled),
        session_scope: args.per_client.then_some(mcpmux::SessionScope::PerClient),
        max_clients: args.max_clients,
        ..Default::default()
    })
}
