//! `mcpmux serve`: the pool's servers as one MCP server, over stdio (for a client that starts
//! it, like Claude Desktop) or Streamable HTTP (for clients that connect, like browser UIs).

use std::net::SocketAddr;

use clap::Args;
use mcpmux::Pool;
use mcpmux::serve::audit::AuditLog;
use mcpmux::serve::{Exposure, HttpServeSettings, Profile, ServeOptions, profiles};

use crate::commands::Result;

#[derive(Args)]
#[command(group(clap::ArgGroup::new("front").required(true).args(["stdio", "http"])))]
pub struct ServeArgs {
    /// Serve one client over this process's stdin and stdout.
    #[arg(long)]
    stdio: bool,
    /// Serve Streamable HTTP at ADDR (e.g. 127.0.0.1:8808; port 0 picks a free one); the URL
    /// goes to stdout, the token to stderr.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// The bearer token HTTP clients must send (default: a new random one, printed).
    #[arg(
        long,
        value_name = "TOKEN",
        requires = "http",
        conflicts_with = "no_auth",
        env = "MCPMUX_SERVE_TOKEN",
        hide_env_values = true
    )]
    token: Option<String>,
    /// Serve HTTP without a token: anyone who can reach the address may use every server.
    #[arg(long, requires = "http")]
    no_auth: bool,
    /// Accept access tokens from this OAuth authorization server (its issuer URL) instead of
    /// one shared token: clients find it in /.well-known/oauth-protected-resource/mcp and
    /// bring tokens issued for this server (JWTs, checked with the issuer's published keys).
    #[arg(long, value_name = "URL", requires = "http")]
    oauth_issuer: Option<String>,
    /// The resource identifier tokens must be issued for (default http://HOST/mcp, as the
    /// client reached the server; set it behind a proxy, e.g. https://mcp.example.com/mcp).
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    oauth_resource: Option<String>,
    /// The audience tokens must name, when the issuer names this server otherwise than by its
    /// resource URL (e.g. an Auth0 API identifier).
    #[arg(long, value_name = "AUDIENCE", requires = "oauth_issuer")]
    oauth_audience: Option<String>,
    /// A scope every token must carry (repeat for several).
    #[arg(long = "oauth-scope", value_name = "SCOPE", requires = "oauth_issuer")]
    oauth_scopes: Vec<String>,
    /// The issuer's key set (JWKS) URL, for an issuer that publishes no metadata.
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    oauth_jwks: Option<String>,
    /// A secret shared by replicas behind one load balancer (16 characters or more): any of
    /// them can then serve any session, with no sticky routing and no shared store.
    #[arg(
        long,
        value_name = "SECRET",
        requires = "http",
        env = "MCPMUX_SERVE_SESSION_KEY",
        hide_env_values = true
    )]
    session_key: Option<String>,
    /// A browser origin allowed to call (repeat for several); others are refused.
    #[arg(long = "cors", value_name = "ORIGIN", requires = "http")]
    origins: Vec<String>,
    /// Characters your client puts before each tool name (Claude Code: 13 for
    /// `mcp__mcpmux__`); names are cut so the whole stays within 64.
    #[arg(long, value_name = "N", default_value_t = 0)]
    name_budget: usize,
    /// Which tools clients see: direct (every tool), search (search_tools, describe_tools,
    /// call_tool), or auto (direct up to --auto-limit tools, search past it).
    #[arg(long, value_name = "MODE", default_value = "auto")]
    mode: Exposure,
    /// Append one JSON line per tool call to FILE (time, client, profile, server, tool,
    /// duration, outcome).
    #[arg(long, value_name = "FILE")]
    audit_log: Option<std::path::PathBuf>,
    /// Serve this profile of the config (its `profiles`): some servers, some tools, names
    /// passed through. Over HTTP every profile is also served at /mcp/p/NAME.
    #[arg(long, value_name = "NAME")]
    profile: Option<String>,
    /// Also serve the HTTP+SSE transport of protocol 2024-11-05 (GET /sse, POST /messages),
    /// for clients that predate Streamable HTTP
    #[arg(long, requires = "http")]
    sse: bool,
    /// The most HTTP connections served at once (default 512); past it, 503.
    #[arg(long, value_name = "N", requires = "http")]
    max_connections: Option<usize>,
    /// The most HTTP connections served at once from one address (default 256; on loopback
    /// every local client has the same address).
    #[arg(long, value_name = "N", requires = "http")]
    max_connections_per_peer: Option<usize>,
    /// The most tools `--mode auto` lists before it shows the search tools instead.
    #[arg(long, value_name = "N", default_value_t = mcpmux::serve::exposure::AUTO_LIMIT)]
    auto_limit: usize,
    /// Stop a server's process (or remote session) after SECS without a call; the next call
    /// starts it again, and lists answer from the catalog meanwhile. 0 keeps them running
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_IDLE_STOP_SECS)]
    pub idle_stop: u64,
}

/// How long a served server may go without a call before its process is stopped: long enough
/// that a client's working session keeps its servers warm, short enough that a day's
/// forgotten ones do not pile up.
const DEFAULT_IDLE_STOP_SECS: u64 = 600;

impl ServeArgs {
    /// Serves the one client on this process's stdin and stdout (not HTTP's many).
    pub fn serves_one_client(&self) -> bool {
        self.stdio
    }
}

pub async fn run(args: &ServeArgs, pool: &Pool) -> Result<()> {
    let profile = match &args.profile {
        Some(name) => profiles::find(pool.config_path(), name)?,
        None => Profile::default(),
    };
    say_what_is_served(pool, &profile).await?;
    let Some(addr) = args.http else {
        let audit = match &args.audit_log {
            Some(path) => Some(std::sync::Arc::new(AuditLog::open(path)?)),
            None => None,
        };
        let serve = ServeOptions {
            audit,
            name_budget: args.name_budget,
            exposure: args.mode,
            auto_limit: args.auto_limit,
            forward_host_requests: true,
            profile,
            ..ServeOptions::default()
        };
        return Ok(pool.serve_stdio(serve).await?);
    };
    // The same checks as the bindings' serve_http: one set of rules, one set of messages.
    let settings = HttpServeSettings {
        addr: Some(addr.to_string()),
        token: args.token.clone(),
        no_auth: args.no_auth,
        allowed_origins: args.origins.clone(),
        mode: Some(args.mode.to_string()),
        auto_limit: Some(args.auto_limit),
        name_budget: Some(args.name_budget),
        session_key: args.session_key.clone(),
        audit_log: args
            .audit_log
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned()),
        legacy_sse: args.sse,
        max_connections: args.max_connections,
        max_connections_per_peer: args.max_connections_per_peer,
        oauth: args
            .oauth_issuer
            .as_ref()
            .map(|issuer| mcpmux::serve::OAuthResourceSettings {
                issuer: issuer.clone(),
                resource: args.oauth_resource.clone(),
                audience: args.oauth_audience.clone(),
                scopes: args.oauth_scopes.clone(),
                jwks_uri: args.oauth_jwks.clone(),
            }),
        ..HttpServeSettings::default()
    };
    let generated = args.token.is_none() && !args.no_auth && args.oauth_issuer.is_none();
    let (mut serve, options) = settings.into_options()?;
    // The command line's pool is only served: its upstreams ask the clients.
    serve.forward_host_requests = true;
    serve.profile = profile;
    let server = pool.serve_http(serve, options).await?;
    // The URL alone on stdout, so that a script (or a test) can read it; port 0 then has no
    // race between choosing a port and listening on it.
    println!("{}", server.url());
    match server.token() {
        Some(token) if generated => eprintln!(
            "mcpmux serve: clients send `Authorization: Bearer {token}` \
             (set it with --token or MCPMUX_SERVE_TOKEN)"
        ),
        Some(_) => eprintln!("mcpmux serve: clients send the token given"),
        None => match &args.oauth_issuer {
            Some(issuer) => eprintln!(
                "mcpmux serve: clients send access tokens that {issuer} issued for this server"
            ),
            None => eprintln!("mcpmux serve: no token (--no-auth)"),
        },
    }
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminated() => {}
    }
    server.stop().await;
    Ok(())
}

/// One line on stderr (where an MCP client's log shows it) of what is served. A client shown
/// no tools gives its user no hint why; with an empty config this line names the next step.
async fn say_what_is_served(pool: &Pool, profile: &Profile) -> Result<()> {
    let records = pool.list_servers().await?;
    let config = pool.config_path().display().to_string();
    if records.is_empty() {
        eprintln!(
            "mcpmux serve: no servers in {config} yet{}; one added while serving is \
             served at once",
            crate::commands::NO_SERVERS_HINT
        );
    } else {
        let servers: Vec<(&str, bool)> = records
            .iter()
            .map(|r| (r.name.as_str(), r.is_active))
            .collect();
        eprintln!("mcpmux serve: {}", served_line(&servers, profile, &config));
    }
    Ok(())
}

/// What is served, from the config's servers (name, enabled): how many, of which profile, how
/// many more are disabled, and which servers the profile names that the config lacks (a
/// misspelt name would otherwise only show as tools that never appear).
fn served_line(servers: &[(&str, bool)], profile: &Profile, config: &str) -> String {
    let in_view: Vec<&(&str, bool)> = servers.iter().filter(|(n, _)| profile.serves(n)).collect();
    let active = in_view.iter().filter(|(_, on)| *on).count();
    let mut notes = Vec::new();
    match in_view.len() - active {
        0 => {}
        n => notes.push(format!("{n} more disabled")),
    }
    let missing: Vec<&str> = profile
        .servers
        .iter()
        .flatten()
        .map(String::as_str)
        .filter(|wanted| !servers.iter().any(|(n, _)| n == wanted))
        .collect();
    if !missing.is_empty() {
        notes.push(format!("not in the config: {}", missing.join(", ")));
    }
    let of_profile = match &profile.name {
        Some(name) => format!(" of profile '{name}'"),
        None => String::new(),
    };
    let noun = if active == 1 { "server" } else { "servers" };
    let notes = match notes.is_empty() {
        true => String::new(),
        false => format!(" ({})", notes.join("; ")),
    };
    format!("{active} {noun}{of_profile} from {config}{notes}")
}

/// SIGTERM, as a supervisor or a test stops a server.
async fn terminated() {
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut s) => {
            s.recv().await;
        }
        Err(_) => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(name: &str, servers: &[&str]) -> Profile {
        Profile {
            name: Some(name.into()),
            servers: Some(servers.iter().map(|s| s.to_string()).collect()),
            ..Profile::default()
        }
    }

    #[test]
    fn the_served_line_counts_what_is_served() {
        let fleet = [("demo", true), ("time", true), ("old", false)];
        assert_eq!(
            served_line(&fleet, &Profile::default(), "c.json"),
            "2 servers from c.json (1 more disabled)"
        );
        assert_eq!(
            served_line(&fleet[..1], &Profile::default(), "c.json"),
            "1 server from c.json"
        );
    }

    #[test]
    fn a_profile_counts_its_own_servers_and_names_those_missing() {
        let fleet = [("demo", true), ("time", true), ("old", false)];
        assert_eq!(
            served_line(&fleet, &profile("work", &["demo", "old"]), "c.json"),
            "1 server of profile 'work' from c.json (1 more disabled)"
        );
        assert_eq!(
            served_line(&fleet, &profile("work", &["tiem", "demo", "gh"]), "c.json"),
            "1 server of profile 'work' from c.json (not in the config: tiem, gh)"
        );
    }
}
