//! A pool served as one MCP server (`mcpmux serve`), for MCP clients that want a single
//! server in front of a fleet: Claude Desktop, Cursor, VS Code, browser UIs. The pool does the
//! hard half (one shared connection per server, started on first use, lists from the catalog,
//! reconnects); this module is the server face: [`Gateway`] answers MCP requests with the
//! pool's verbs under stable names ([`names`]), over stdio or Streamable HTTP ([`http`]).

pub mod audit;
mod changes;
mod cors;
pub mod exposure;
mod gateway;
mod host_requests;
pub mod http;
mod input_rounds;
mod legacy_sse;
mod logging;
mod metrics;
pub mod names;
pub mod profiles;
mod reload;
pub mod resource_server;
mod seal;
mod sessions;
mod settings;
mod stdio;
mod subscriptions;
mod tasks;

pub use exposure::Exposure;
pub use gateway::Gateway;
pub use http::{HttpAuth, HttpOptions, HttpServer};
pub use profiles::Profile;
pub use resource_server::OAuthResourceSettings;
pub use settings::HttpServeSettings;

use rmcp::ServiceExt;

use crate::error::{Error, Result};
use crate::pool::Pool;

/// How a pool presents itself as a server, whatever the front.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The `serverInfo.name` clients see.
    pub server_name: String,
    /// Characters the client puts in front of every tool name (Claude Code's
    /// `mcp__mcpmux__` is 13): names are cut so that the whole stays within 64.
    pub name_budget: usize,
    /// Which tools clients see: every one, or the search surface.
    pub exposure: Exposure,
    /// `Exposure::Auto` lists every tool up to this many, the search surface past it.
    pub auto_limit: usize,
    /// Sets the pool's sampling and elicitation handlers to ask the client whose call made
    /// the upstream ask (what `mcpmux serve` does; a host with handlers of its own leaves it
    /// off). Set before the servers connect: they learn of it then.
    pub forward_host_requests: bool,
    /// Which part of the fleet clients see, and how (default: every server and tool). Over
    /// HTTP this is the view at `/mcp`; each profile of the config is served at `/mcp/p/NAME`.
    pub profile: Profile,
    /// Where every tool call is recorded (a JSON line each), if anywhere.
    pub audit: Option<std::sync::Arc<audit::AuditLog>>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            server_name: "mcpmux".into(),
            name_budget: 0,
            exposure: Exposure::default(),
            auto_limit: exposure::AUTO_LIMIT,
            forward_host_requests: false,
            profile: Profile::default(),
            audit: None,
        }
    }
}

impl Pool {
    /// Serves the pool over this process's stdin and stdout until the client closes stdin.
    pub async fn serve_stdio(&self, options: ServeOptions) -> Result<()> {
        self.serve_transport(options, stdio::stdio()).await
    }

    /// Serves the pool to one client over any rmcp transport (a pipe, a socket pair), until
    /// the client goes away.
    pub async fn serve_transport<T, E, A>(&self, options: ServeOptions, transport: T) -> Result<()>
    where
        T: rmcp::transport::IntoTransport<rmcp::RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        // Config changes reach this client for as long as it is served.
        let following = self.closed()?.child_token();
        let seal = std::sync::Arc::new(seal::Seal::new(None)?);
        let gateway = Gateway::new(self.clone(), options, seal);
        let shown = gateway.clone();
        reload::follow_config(self.clone(), following.clone(), move |profiles| {
            shown.show_named(&profiles);
        });
        let _following = following.drop_guard();
        let running = gateway
            .serve(transport)
            .await
            .map_err(|e| Error::io("serving a client", std::io::Error::other(e.to_string())))?;
        running
            .waiting()
            .await
            .map(drop)
            .map_err(|e| Error::io("serving a client", std::io::Error::other(e.to_string())))
    }
}
