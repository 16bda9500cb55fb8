//! The Streamable HTTP front of a served pool: rmcp's Streamable HTTP service at `/mcp` (a
//! 2026-07-28 client is served statelessly, per request; an older one gets a session), behind
//! a bearer token and rmcp's Host and Origin checks (DNS rebinding); `/healthz` and `/readyz`
//! for a process supervisor or a load balancer, and, behind the token, `/status` and
//! `/metrics` (see `metrics.rs`).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::pool::Pool;
use crate::serve::front::connections::{
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_PEER, HEADER_TIMEOUT, Limits,
};
use crate::serve::front::cors::Cors;
use crate::serve::front::legacy_sse::{LegacySessions, MESSAGES_PATH, SSE_PATH};
use crate::serve::front::metrics::Metrics;
use crate::serve::front::sessions::{Opened, SealedSessions};
use crate::serve::resource_server::{
    METADATA_PATH, OAuthResourceSettings, Presented, Principal, Refusal, ResourceServer,
};
use crate::serve::{Gateway, Profile, ServeOptions};

/// The path MCP requests go to.
pub const MCP_PATH: &str = "/mcp";

/// Where each profile of the config is served: `/mcp/p/NAME`.
pub const PROFILE_PATH: &str = "/mcp/p/";

/// Who may call a served pool over HTTP.
#[derive(Clone, PartialEq, Eq)]
pub enum HttpAuth {
    /// Requests carry `Authorization: Bearer TOKEN`.
    Bearer(String),
    /// Access tokens an OAuth authorization server issued (resource-server mode).
    OAuth(OAuthResourceSettings),
    /// Anyone who can reach the address (said explicitly: never the default).
    None,
}

impl std::fmt::Debug for HttpAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpAuth::Bearer(_) => f.write_str("Bearer(..)"),
            HttpAuth::OAuth(settings) => write!(f, "OAuth({})", settings.issuer),
            HttpAuth::None => f.write_str("None"),
        }
    }
}

impl HttpAuth {
    /// A bearer token of 32 random bytes, hex-encoded.
    pub fn generate() -> HttpAuth {
        use rand::RngCore;
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        HttpAuth::Bearer(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }
}

/// The fewest characters a shared bearer token may have: as for the session key, a token
/// short enough to guess is no lock (a generated one has 64).
pub const MIN_TOKEN_LEN: usize = 16;

/// Refuses a bearer token short enough to guess, saying what to give instead.
pub fn check_token(token: &str) -> Result<()> {
    if token.chars().count() < MIN_TOKEN_LEN {
        return Err(Error::invalid(format!(
            "the token has fewer than {MIN_TOKEN_LEN} characters: give a long random one \
             (e.g. the output of `openssl rand -hex 32`), or none for a generated one"
        )));
    }
    Ok(())
}

/// Whether `request` carries the shared bearer `token`.
fn has_token(request: &hyper::Request<hyper::body::Incoming>, token: &str) -> bool {
    let given = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    given.is_some_and(|given| same_secret(given.as_bytes(), token.as_bytes()))
}

/// Compares without stopping at the first difference, so timing tells nothing of the token.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Where and to whom a pool is served over HTTP.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The address to listen on (port 0: any free port).
    pub addr: SocketAddr,
    pub auth: HttpAuth,
    /// Browser origins allowed to call (e.g. `http://localhost:8080`); a request from any
    /// other origin is refused. Requests without `Origin` (every non-browser client) pass.
    pub allowed_origins: Vec<String>,
    /// Host names the server answers to besides the loopback names, for a server reached by
    /// another name than localhost.
    pub allowed_hosts: Vec<String>,
    /// The secret replicas share to open each other's session ids, so a round-robin balancer
    /// can send any request anywhere (default: a random key; sessions stay with this process).
    pub session_key: Option<String>,
    /// Also serve the HTTP+SSE transport of protocol 2024-11-05 (`GET /sse`, `POST
    /// /messages`), for clients that predate Streamable HTTP. Its sessions live in this
    /// process (no replicas).
    pub legacy_sse: bool,
    /// The most connections served at once; past it, a connection is answered 503.
    pub max_connections: usize,
    /// The most connections served at once from one peer address.
    pub max_connections_per_peer: usize,
}

impl HttpOptions {
    /// Loopback on `port`, with a generated token.
    pub fn loopback(port: u16) -> HttpOptions {
        HttpOptions {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            auth: HttpAuth::generate(),
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            session_key: None,
            legacy_sse: false,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_peer: DEFAULT_MAX_CONNECTIONS_PER_PEER,
        }
    }
}

/// A pool being served over HTTP; stops when [`HttpServer::stop`] is called, when it is
/// dropped, or when the pool closes.
pub struct HttpServer {
    addr: SocketAddr,
    auth: HttpAuth,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl HttpServer {
    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL clients connect to.
    pub fn url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.addr)
    }

    /// The bearer token clients send, if there is one.
    pub fn token(&self) -> Option<&str> {
        match &self.auth {
            HttpAuth::Bearer(t) => Some(t),
            HttpAuth::OAuth(_) | HttpAuth::None => None,
        }
    }

    /// Runs until stopped (or until the listener fails).
    pub async fn wait(mut self) {
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// Stops accepting, ends open sessions and waits for the listener to close.
    pub async fn stop(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

type Body = BoxBody<Bytes, Infallible>;

fn plain(status: hyper::StatusCode, text: &'static str) -> hyper::Response<Body> {
    let mut response = hyper::Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}

impl Pool {
    /// Serves the pool over Streamable HTTP at `options.addr` (path `/mcp`), until the
    /// returned server is stopped or dropped.
    pub async fn serve_http(
        &self,
        serve: ServeOptions,
        options: HttpOptions,
    ) -> Result<HttpServer> {
        // Closing the pool stops what serves it (and a closed pool is not served at all).
        let stop = self.closed()?;
        if let HttpAuth::Bearer(token) = &options.auth {
            check_token(token)?;
        }
        let listener = tokio::net::TcpListener::bind(options.addr)
            .await
            .map_err(|e| Error::io(format!("listening on {}", options.addr), e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::io("reading the listening address", e))?;
        let mut hosts = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
        hosts.extend(options.allowed_hosts.iter().cloned());
        let legacy = options.legacy_sse.then(|| Legacy {
            sessions: Arc::default(),
            gateway: None,
            hosts: hosts.clone(),
            own_origins: own_origins(addr.port()).collect(),
        });
        let sessions = SealedSessions::new(options.session_key.as_deref())?;
        let oauth = match &options.auth {
            HttpAuth::OAuth(settings) => {
                Some(Arc::new(ResourceServer::start(settings.clone()).await?))
            }
            _ => None,
        };
        let mut config = StreamableHttpServerConfig::default()
            .with_cancellation_token(stop.child_token())
            .with_allowed_hosts(hosts.clone())
            .with_allowed_origins(own_origins(addr.port()).chain(options.allowed_origins.clone()))
            .enforce_origin_validation();
        config.session_store = Some(sessions.store());
        let profiles = crate::serve::view::profiles::load(self.config_path())?;
        let gateway = Gateway::new(self.clone(), serve, sessions.seal());
        let profiled = Profiled {
            gateway: gateway.clone(),
            config: config.clone(),
            served: Default::default(),
        };
        profiled.follow(profiles);
        let service = service_of(gateway.clone(), config);
        let legacy = legacy.map(|l| Legacy {
            gateway: Some(gateway.clone()),
            ..l
        });
        let auth = options.auth.clone();
        let site = Arc::new(Site {
            service,
            auth: auth.clone(),
            oauth,
            hosts,
            metrics: Metrics::watch(self),
            pool: self.clone(),
            cors: Cors::new(&options.allowed_origins),
            sessions,
            profiles: Arc::new(profiled),
            legacy,
            port: addr.port(),
            limits: Limits::new(options.max_connections, options.max_connections_per_peer),
        });
        let profiles = site.profiles.clone();
        crate::serve::view::reload::follow_config(self.clone(), stop.clone(), move |changed| {
            gateway.show_named(&changed);
            profiles.follow(changed);
        });
        let task = tokio::spawn(accept_loop(listener, site, stop.clone()));
        Ok(HttpServer {
            addr,
            auth,
            stop,
            task: Some(task),
        })
    }
}

type Service = StreamableHttpService<Gateway, LocalSessionManager>;

/// rmcp's HTTP service of a gateway: each session (or stateless request) gets its own.
fn service_of(gateway: Gateway, config: StreamableHttpServerConfig) -> Service {
    StreamableHttpService::new(
        move || Ok(gateway.for_client()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

/// The profiles served at `/mcp/p/NAME`, as the config has them now.
struct Profiled {
    /// The gateway each profile's is made from.
    gateway: Gateway,
    config: StreamableHttpServerConfig,
    served: std::sync::RwLock<std::collections::HashMap<String, (Gateway, Service)>>,
}

impl Profiled {
    /// Serves `profiles`: a profile kept shows its new self to its connected clients, a new
    /// one gets its URL, a removed one's URL answers 404.
    fn follow(&self, profiles: std::collections::BTreeMap<String, Profile>) {
        let mut served = self.served.write().unwrap();
        served.retain(|name, _| profiles.contains_key(name));
        for (name, profile) in profiles {
            match served.get(&name) {
                Some((gateway, _)) => gateway.show(profile),
                None => {
                    let gateway = self.gateway.for_profile(profile);
                    let service = service_of(gateway.clone(), self.config.clone());
                    served.insert(name, (gateway, service));
                }
            }
        }
    }

    fn get(&self, name: &str) -> Option<Service> {
        let served = self.served.read().unwrap();
        served.get(name).map(|(_, service)| service.clone())
    }
}

/// What every request may need.
struct Site {
    service: Service,
    /// Each profile of the config, by name.
    profiles: Arc<Profiled>,
    auth: HttpAuth,
    /// The token checks of resource-server mode.
    oauth: Option<Arc<ResourceServer>>,
    /// The host names this server answers to (DNS rebinding).
    hosts: Vec<String>,
    metrics: Arc<Metrics>,
    pool: Pool,
    cors: Cors,
    sessions: SealedSessions,
    /// The HTTP+SSE front, when asked for.
    legacy: Option<Legacy>,
    /// The port it listens on: part of its own address, as resource-server mode names it.
    port: u16,
    /// The connections open, and how many may be.
    limits: Arc<Limits>,
}

/// What the HTTP+SSE front needs: its sessions, the gateway they are of, and what Host and
/// Origin rmcp would accept on `/mcp` (this front does its own checks).
struct Legacy {
    sessions: Arc<LegacySessions>,
    gateway: Option<Gateway>,
    hosts: Vec<String>,
    own_origins: Vec<String>,
}

impl Legacy {
    /// Whether `request` comes through a name this server answers to (DNS rebinding) and,
    /// from a browser, from its own or an allowed origin.
    fn admits(&self, request: &hyper::Request<hyper::body::Incoming>, cors: &Cors) -> bool {
        if allowed_host(request, &self.hosts).is_none() {
            return false;
        }
        match request.headers().get(hyper::header::ORIGIN) {
            None => true,
            Some(origin) => {
                let text = origin.to_str().unwrap_or_default().to_ascii_lowercase();
                self.own_origins.contains(&text) || cors.allowed(request.headers()).is_some()
            }
        }
    }

    async fn answer(
        &self,
        request: hyper::Request<hyper::body::Incoming>,
        cors: &Cors,
    ) -> hyper::Response<Body> {
        if !self.admits(&request, cors) {
            return plain(
                hyper::StatusCode::FORBIDDEN,
                "Forbidden: Host or Origin not allowed (DNS rebinding)\n",
            );
        }
        let path = request.uri().path();
        let owner = request
            .extensions()
            .get::<Principal>()
            .map(Principal::owner);
        match (request.method(), path, &self.gateway) {
            (&hyper::Method::GET, SSE_PATH, Some(gateway)) => {
                self.sessions.open(gateway.for_client(), owner)
            }
            (&hyper::Method::POST, MESSAGES_PATH, _) => self.sessions.post(request, owner).await,
            _ => plain(
                hyper::StatusCode::METHOD_NOT_ALLOWED,
                "the HTTP+SSE transport takes GET /sse and POST /messages\n",
            ),
        }
    }
}

async fn accept_loop(listener: tokio::net::TcpListener, site: Arc<Site>, stop: CancellationToken) {
    loop {
        let (stream, peer) = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // Out of descriptors or the like: try again rather than stop serving.
                Err(e) => {
                    tracing::warn!("serve: accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // A streamed answer is written in several parts; with Nagle's algorithm the second
        // waits for the client's delayed ACK (40 ms on Linux) before it leaves, on every call.
        let _ = stream.set_nodelay(true);
        let admitted = site.limits.admit(peer.ip());
        let site = site.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT);
            let Some(admitted) = admitted else {
                // Past a cap: answered and closed, without reaching the gateway.
                builder.keep_alive(false);
                let handler = service_fn(|request: hyper::Request<hyper::body::Incoming>| {
                    std::future::ready(Ok::<_, Infallible>(over_capacity(&request)))
                });
                let _ = builder
                    .serve_connection(TokioIo::new(stream), handler)
                    .await;
                return;
            };
            let handler = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                let site = site.clone();
                async move { Ok::<_, Infallible>(route(&site, request).await) }
            });
            let connection = builder.serve_connection(TokioIo::new(stream), handler);
            tokio::pin!(connection);
            tokio::select! {
                // A client hanging up mid-stream is normal here; nothing to report.
                _ = connection.as_mut() => {}
                _ = stop.cancelled() => connection.as_mut().graceful_shutdown(),
            }
            drop(admitted);
        });
    }
}

/// The answer to a connection past a cap: the probes as usual, else 503.
fn over_capacity(request: &hyper::Request<hyper::body::Incoming>) -> hyper::Response<Body> {
    match request.uri().path() {
        "/healthz" => plain(hyper::StatusCode::OK, "ok\n"),
        "/readyz" => plain(hyper::StatusCode::OK, "ready\n"),
        _ => {
            let mut response = plain(
                hyper::StatusCode::SERVICE_UNAVAILABLE,
                "Service Unavailable: too many open connections (from this address, or in \
                 all); try again shortly\n",
            );
            response.headers_mut().insert(
                hyper::header::RETRY_AFTER,
                hyper::header::HeaderValue::from_static("1"),
            );
            response
        }
    }
}

/// The origins of pages this server itself would serve: a request from one is same-origin
/// (a browser sends `Origin` on a same-origin POST too), so it is no rebinding attempt and
/// needs no CORS.
fn own_origins(port: u16) -> impl Iterator<Item = String> {
    ["localhost", "127.0.0.1", "[::1]"]
        .into_iter()
        .map(move |host| format!("http://{host}:{port}"))
}

/// The name in the `Host` of `request` (without its port) when it is one of `hosts` (else a
/// DNS rebinding attempt).
fn allowed_host<'a>(
    request: &'a hyper::Request<hyper::body::Incoming>,
    hosts: &[String],
) -> Option<&'a str> {
    let host = request
        .headers()
        .get(hyper::header::HOST)
        .and_then(|h| h.to_str().ok())?;
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    hosts
        .iter()
        .any(|h| h.eq_ignore_ascii_case(name))
        .then_some(name)
}

/// [`answer`], with CORS for the allowed browser origins.
async fn route(
    site: &Site,
    request: hyper::Request<hyper::body::Incoming>,
) -> hyper::Response<Body> {
    let Some(origin) = site.cors.allowed(request.headers()) else {
        return answer(site, request).await;
    };
    // A preflight carries no token: it is answered before the token is asked for.
    if request.method() == hyper::Method::OPTIONS {
        let mut response = plain(hyper::StatusCode::NO_CONTENT, "");
        let requested = request
            .headers()
            .get(hyper::header::ACCESS_CONTROL_REQUEST_HEADERS);
        Cors::preflight(origin, requested, response.headers_mut());
        return response;
    }
    let mut response = answer(site, request).await;
    Cors::decorate(origin, response.headers_mut());
    response
}

async fn answer(
    site: &Site,
    mut request: hyper::Request<hyper::body::Incoming>,
) -> hyper::Response<Body> {
    let path = request.uri().path().to_string();
    let path = path.as_str();
    match path {
        "/healthz" => return plain(hyper::StatusCode::OK, "ok\n"),
        "/readyz" => return plain(hyper::StatusCode::OK, "ready\n"),
        _ if path.starts_with(METADATA_PATH) && site.oauth.is_some() => {
            return resource_metadata(site, &request);
        }
        MCP_PATH | "/status" | "/metrics" => {}
        SSE_PATH | MESSAGES_PATH if site.legacy.is_some() => {}
        _ if path.starts_with(PROFILE_PATH) => {}
        _ => {
            return plain(
                hyper::StatusCode::NOT_FOUND,
                "not found: MCP is served at /mcp\n",
            );
        }
    }
    // Every path that says something of the fleet is a DNS rebinding target, with a token
    // or without (`--no-auth`): a page on another name must not read it through the
    // browser. (rmcp checks `/mcp` again; the probes above tell nothing.)
    if allowed_host(&request, &site.hosts).is_none() {
        return plain(
            hyper::StatusCode::FORBIDDEN,
            "Forbidden: Host not allowed (DNS rebinding)\n",
        );
    }
    if let Err(refused) = authorize(site, &mut request).await {
        return refused;
    }
    match path {
        "/status" => typed(
            "application/json",
            site.metrics.status(&site.pool).to_string(),
        ),
        "/metrics" => typed(
            "text/plain; version=0.0.4",
            site.metrics.prometheus(&site.pool),
        ),
        MCP_PATH => mcp(site, &site.service, request).await,
        SSE_PATH | MESSAGES_PATH => match &site.legacy {
            Some(legacy) => legacy.answer(request, &site.cors).await,
            None => plain(hyper::StatusCode::NOT_FOUND, "not found\n"),
        },
        _ => {
            let name = path.strip_prefix(PROFILE_PATH).unwrap_or_default();
            match site.profiles.get(name) {
                Some(service) => mcp(site, &service, request).await,
                None => plain(
                    hyper::StatusCode::NOT_FOUND,
                    "no such profile: profiles are named under `profiles` in the config file\n",
                ),
            }
        }
    }
}

/// An MCP request, its session id opened on the way in and sealed on the way out.
async fn mcp(
    site: &Site,
    service: &Service,
    mut request: hyper::Request<hyper::body::Incoming>,
) -> hyper::Response<Body> {
    let owner = request
        .extensions()
        .get::<Principal>()
        .map(Principal::owner);
    let opened = site.sessions.open(request.headers_mut(), owner.as_deref());
    // 404 is what tells a client to start a new session.
    match opened {
        Opened::Foreign => {
            return plain(
                hyper::StatusCode::NOT_FOUND,
                "Not Found: Session not found (not issued by this server, or the replicas \
                 were given different session keys)\n",
            );
        }
        Opened::Ended => {
            return plain(
                hyper::StatusCode::NOT_FOUND,
                "Not Found: the session was ended (DELETE); start a new one\n",
            );
        }
        Opened::NotOwned => {
            return plain(
                hyper::StatusCode::NOT_FOUND,
                "Not Found: the session was opened with another user's token; start a new one\n",
            );
        }
        _ => {}
    }
    let ending = request.method() == hyper::Method::DELETE;
    let mut response = service.handle(request).await;
    if ending && response.status().is_success() {
        site.sessions.end(&opened);
    }
    site.sessions
        .close(&opened, response.headers_mut(), owner.as_deref());
    response
}

fn typed(content_type: &'static str, body: String) -> hyper::Response<Body> {
    let mut response = hyper::Response::new(Full::new(Bytes::from(body)).boxed());
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(content_type),
    );
    response
}

/// Lets `request` through when it carries what `site.auth` asks for; else the answer that
/// tells the client what it lacks.
async fn authorize(
    site: &Site,
    request: &mut hyper::Request<hyper::body::Incoming>,
) -> std::result::Result<(), hyper::Response<Body>> {
    match (&site.auth, &site.oauth) {
        (HttpAuth::Bearer(token), _) if !has_token(request, token) => {
            let mut response = plain(
                hyper::StatusCode::UNAUTHORIZED,
                "a bearer token is required (Authorization: Bearer TOKEN; mcpmux serve printed it)\n",
            );
            response.headers_mut().insert(
                hyper::header::WWW_AUTHENTICATE,
                hyper::header::HeaderValue::from_static("Bearer"),
            );
            Err(response)
        }
        (HttpAuth::OAuth(_), Some(oauth)) => {
            let principal = admit(site, oauth, request).await?;
            request.extensions_mut().insert(principal);
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Resource-server mode: checks the request's access token for the resource its path is.
async fn admit(
    site: &Site,
    oauth: &ResourceServer,
    request: &hyper::Request<hyper::body::Incoming>,
) -> std::result::Result<Principal, hyper::Response<Body>> {
    let Some(host) = allowed_host(request, &site.hosts) else {
        return Err(plain(
            hyper::StatusCode::FORBIDDEN,
            "Forbidden: Host not allowed (DNS rebinding)\n",
        ));
    };
    let resources = Resources::of(oauth, host, &site.hosts, site.port);
    let path = request.uri().path();
    let audiences = match &oauth.settings().audience {
        Some(audience) => vec![audience.clone()],
        None => resources.audiences(path),
    };
    let header = |name: &str| request.headers().get(name).and_then(|v| v.to_str().ok());
    let presented = Presented {
        authorization: header("authorization"),
        proof: header("dpop"),
        method: request.method().as_str(),
        urls: &resources.urls(path),
        audiences: &audiences,
    };
    oauth.admit(&presented).await.map_err(|refusal| {
        if let Refusal::Invalid(why) = &refusal {
            tracing::info!("serve: an access token was refused: {why}");
        }
        let metadata_url = resources.metadata_url(path);
        let (status, text) = match &refusal {
            Refusal::Scope => (
                hyper::StatusCode::FORBIDDEN,
                "the access token lacks a scope this server asks for\n".to_string(),
            ),
            Refusal::Missing => (
                hyper::StatusCode::UNAUTHORIZED,
                format!("an access token is required: its issuer is named at {metadata_url}\n"),
            ),
            Refusal::Invalid(why) => (
                hyper::StatusCode::UNAUTHORIZED,
                format!("the access token cannot be used: {why}\n"),
            ),
        };
        let mut response = hyper::Response::new(Full::new(Bytes::from(text)).boxed());
        *response.status_mut() = status;
        if let Ok(value) = oauth.challenge(&refusal, &metadata_url).parse() {
            response
                .headers_mut()
                .insert(hyper::header::WWW_AUTHENTICATE, value);
        }
        response
    })
}

/// Answers `/.well-known/oauth-protected-resource[PATH]`: the metadata of the resource PATH
/// names (`/mcp`, or a profile's `/mcp/p/NAME`).
fn resource_metadata(
    site: &Site,
    request: &hyper::Request<hyper::body::Incoming>,
) -> hyper::Response<Body> {
    let (Some(oauth), Some(host)) = (&site.oauth, allowed_host(request, &site.hosts)) else {
        return plain(
            hyper::StatusCode::FORBIDDEN,
            "Forbidden: Host not allowed (DNS rebinding)\n",
        );
    };
    let resources = Resources::of(oauth, host, &site.hosts, site.port);
    let suffix = &request.uri().path()[METADATA_PATH.len()..];
    let named = resources.named_by(suffix).filter(|(_, profile)| {
        profile
            .as_ref()
            .is_none_or(|p| site.profiles.get(p).is_some())
    });
    let Some((resource, _)) = named else {
        return plain(
            hyper::StatusCode::NOT_FOUND,
            "not found: the resources here are /mcp and the profiles' /mcp/p/NAME\n",
        );
    };
    let mut response = typed("application/json", oauth.metadata(&resource).to_string());
    // A public document: a browser client on any origin may read it, as it must to find
    // the issuer (no credentials ride on it).
    response.headers_mut().insert(
        hyper::header::ACCESS_CONTROL_ALLOW_ORIGIN,
        hyper::header::HeaderValue::from_static("*"),
    );
    response
}

/// The resource identifiers of this server: the root one (`/mcp`) and a profile's under it
/// (`/mcp/p/NAME`). They are what the server is configured as (`resource`), else its own
/// address: the names it answers to at the port it listens on. A request picks which of its
/// names is published, never the port: a token issued for another server on this machine
/// names another port, and must not pass here because a client wrote that port in `Host`.
struct Resources {
    /// The root resource, as published (no trailing slash).
    root: String,
    /// The root resource under every name this server answers to, when none is configured
    /// (a client names the resource by the URL it used).
    roots: Vec<String>,
}

impl Resources {
    /// The resources of a server listening on `port`, as a request that reached it as
    /// `name` (one of `names`) sees them.
    fn of(oauth: &ResourceServer, name: &str, names: &[String], port: u16) -> Resources {
        let at = |name: &str| match name.contains(':') {
            true => format!("http://[{name}]:{port}{MCP_PATH}"),
            false => format!("http://{name}:{port}{MCP_PATH}"),
        };
        match &oauth.settings().resource {
            Some(resource) => {
                let root = resource.trim_end_matches('/').to_string();
                Resources {
                    roots: vec![root.clone()],
                    root,
                }
            }
            None => Resources {
                root: at(name),
                roots: names.iter().map(|n| at(n)).collect(),
            },
        }
    }

    /// What follows `/mcp` in a request's path (`/p/NAME` for a profile, else nothing).
    fn below(path: &str) -> &str {
        path.strip_prefix(PROFILE_PATH)
            .map_or("", |_| &path[MCP_PATH.len()..])
    }

    /// The audiences a token may name for `path`: the root resource (every profile is part
    /// of it) or, for a profile, the profile's own.
    fn audiences(&self, path: &str) -> Vec<String> {
        let below = Self::below(path);
        let mut all = self.roots.clone();
        if !below.is_empty() {
            all.extend(self.roots.iter().map(|r| format!("{r}{below}")));
        }
        all
    }

    /// The URLs a DPoP proof for `path` may name.
    fn urls(&self, path: &str) -> Vec<String> {
        let below = Self::below(path);
        let root_path = url::Url::parse(&self.root)
            .map(|u| u.path().trim_end_matches('/').to_string())
            .unwrap_or_default();
        self.roots
            .iter()
            .map(|r| {
                let origin = r.strip_suffix(&root_path).unwrap_or(r);
                match path {
                    MCP_PATH => r.clone(),
                    _ if !below.is_empty() => format!("{r}{below}"),
                    other => format!("{origin}{other}"),
                }
            })
            .collect()
    }

    /// Where the metadata of the resource `path` is (RFC 9728: the well-known part between
    /// the resource's origin and its path).
    fn metadata_url(&self, path: &str) -> String {
        let resource = format!("{}{}", self.root, Self::below(path));
        match url::Url::parse(&resource) {
            Ok(url) => format!(
                "{}{METADATA_PATH}{}",
                url.origin().ascii_serialization(),
                url.path().trim_end_matches('/')
            ),
            Err(_) => resource,
        }
    }

    /// The resource a metadata path's `suffix` names (empty: the root), and the profile it
    /// is, if one.
    fn named_by(&self, suffix: &str) -> Option<(String, Option<String>)> {
        let root_path = url::Url::parse(&self.root)
            .map(|u| u.path().trim_end_matches('/').to_string())
            .unwrap_or_default();
        if suffix.is_empty() || suffix == root_path {
            return Some((self.root.clone(), None));
        }
        let profile = suffix.strip_prefix(&root_path)?.strip_prefix("/p/")?;
        (!profile.is_empty() && !profile.contains('/')).then(|| {
            (
                format!("{}/p/{profile}", self.root),
                Some(profile.to_string()),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The token's comparison looks at every byte whatever it finds (no early return a
    /// timing could tell), and still tells every difference: length, first byte, last byte.
    #[test]
    fn a_token_matches_only_itself() {
        let token = b"0123456789abcdef0123";
        assert!(same_secret(token, token));
        for other in [
            &b"0123456789abcdef012"[..],
            b"0123456789abcdef01234",
            b"x123456789abcdef0123",
            b"0123456789abcdef012x",
            b"",
        ] {
            assert!(!same_secret(token, other), "{other:?}");
        }
        assert!(check_token("fifteen-chars!!").is_err());
        assert!(check_token("sixteen-chars!!!").is_ok());
    }
}
