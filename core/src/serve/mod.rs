//! A pool served as one MCP server (`mcpmux serve`), for MCP clients that want a single
//! server in front of a fleet: Claude Desktop, Cursor, VS Code, browser UIs. The pool does the
//! hard half (one shared connection per server, started on first use, lists from the catalog,
//! reconnects); this module is the server face: [`Gateway`] answers MCP requests with the
//! pool's verbs under stable names ([`view::names`]), over stdio or Streamable HTTP ([`front::http`]).

pub mod front;
mod gateway;
pub mod relay;
pub mod resource_server;
mod settings;
pub mod view;

// The public modules' paths from before the gateway was nested by concept.
pub use front::{audit, connections, http};
pub use view::{exposure, names, profiles};

pub use front::http::{HttpAuth, HttpOptions, HttpServer};
pub use gateway::Gateway;
pub use resource_server::OAuthResourceSettings;
pub use settings::HttpServeSettings;
pub use view::exposure::Exposure;
pub use view::profiles::Profile;

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
    pub audit: Option<std::sync::Arc<front::audit::AuditLog>>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            server_name: "mcpmux".into(),
            name_budget: 0,
            exposure: Exposure::default(),
            auto_limit: view::exposure::AUTO_LIMIT,
            forward_host_requests: false,
            profile: Profile::default(),
            audit: None,
        }
    }
}

impl Pool {
    /// Serves the pool over this process's stdin and stdout until the client closes stdin.
    pub async fn serve_stdio(&self, options: ServeOptions) -> Result<()> {
        let (reader, writer) = front::stdio::stdio();
        self.serve_io(options, reader, writer).await
    }

    /// Serves the pool to one client over a byte stream (a pipe, a socket), newline-delimited
    /// JSON as on stdio, until the client closes its end. Tool calls take a lane beside rmcp's
    /// session loop (`front/call_lane`); what a client sees is the same as through
    /// [`Pool::serve_transport`].
    pub async fn serve_io<R, W>(&self, options: ServeOptions, reader: R, writer: W) -> Result<()>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (gateway, _following) = self.client_gateway(options)?;
        let (output, writing) = front::call_lane::Output::start(writer);
        let session = std::sync::Arc::new(std::sync::OnceLock::new());
        let ended = tokio_util::sync::CancellationToken::new();
        // The loop reads what the lane passes on from this in-memory pipe.
        let (to_loop, from_lane) = tokio::io::duplex(64 * 1024);
        let lane = front::call_lane::Lane::new(gateway.clone(), session.clone(), output.clone());
        let reading = tokio::spawn(lane.run(reader, to_loop, ended.clone()));
        let opening = front::call_lane::Opening {
            gateway,
            session,
            ended: ended.clone(),
        };
        let served = async {
            let running = match opening
                .serve((from_lane, front::call_lane::LoopWriter::new(output.clone())))
                .await
            {
                Ok(running) => running,
                // A client that left before it began (a host checking that the command
                // starts, one restarting) is not this server's failure.
                Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
                Err(e) => return Err(serving_failed(e)),
            };
            // A session that began without `initialize` (2026-07-28) opens here.
            let peer = running.peer().clone();
            running.service().open(peer);
            running.waiting().await.map(drop).map_err(serving_failed)
        };
        let result = served.await;
        // The loop is done (the client closed its end, or the loop failed): the lane's calls
        // end with it, and what they and the loop queued is written before returning.
        ended.cancel();
        let _ = reading.await;
        output.close();
        let _ = writing.await;
        result
    }

    /// Serves the pool to one client over any rmcp transport (a pipe, a socket pair), until
    /// the client goes away.
    pub async fn serve_transport<T, E, A>(&self, options: ServeOptions, transport: T) -> Result<()>
    where
        T: rmcp::transport::IntoTransport<rmcp::RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        // Config changes reach this client for as long as it is served.
        let (gateway, _following) = self.client_gateway(options)?;
        let running = gateway.serve(transport).await.map_err(serving_failed)?;
        running.waiting().await.map(drop).map_err(serving_failed)
    }

    /// A gateway for one served client, shown the config's changes until the guard drops.
    fn client_gateway(
        &self,
        options: ServeOptions,
    ) -> Result<(Gateway, tokio_util::sync::DropGuard)> {
        let following = self.closed()?.child_token();
        let seal = std::sync::Arc::new(relay::seal::Seal::new(None)?);
        let gateway = Gateway::new(self.clone(), options, seal);
        let shown = gateway.clone();
        view::reload::follow_config(self.clone(), following.clone(), move |profiles| {
            shown.show_named(&profiles);
        });
        Ok((gateway, following.drop_guard()))
    }
}

/// An error of rmcp's session with a served client.
fn serving_failed(e: impl std::fmt::Display) -> Error {
    Error::io("serving a client", std::io::Error::other(e.to_string()))
}
