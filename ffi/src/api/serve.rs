//! Serving a pool as one MCP server over Streamable HTTP, as `mcpmux serve --http` does: for
//! a desktop host that exposes its pool to a browser UI or to other MCP clients.

use std::ffi::c_char;
use std::sync::Mutex;

use mcpmux_core::serve::{HttpServeSettings, HttpServer};
use serde_json::json;

use crate::bodies::{answer_json, free_handle, new_handle};
use crate::calls::pool_entry;
use crate::error::{FfiResult, opt_str_arg};
use crate::handles::{Table, Tag};
use crate::mcpmux_status::{self};
use crate::rt::block_on;
use crate::{mcpmux_http_server, mcpmux_pool};

pub(crate) struct HttpServerEntry {
    /// Taken when the handle is freed, to stop it.
    server: Mutex<Option<HttpServer>>,
    url: String,
    token: Option<String>,
}

impl Drop for HttpServerEntry {
    fn drop(&mut self) {
        if let Some(server) = self.server.lock().unwrap().take() {
            // The port is free when mcpmux_http_server_free() returns.
            block_on(server.stop());
        }
    }
}

static HTTP_SERVERS: Table<HttpServerEntry> = Table::new(Tag::HttpServer, "http server");

/// Serves an open pool over Streamable HTTP at `/mcp` until mcpmux_http_server_free() or
/// the pool's close. `settings_json` (NULL for the defaults: 127.0.0.1, any free port, a
/// generated token, mode auto) is a JSON object such as
/// `{"addr": "127.0.0.1:8808", "token": "...", "allowedOrigins": ["http://localhost:5173"],
/// "mode": "search"}` (fields: addr, token, noAuth, allowedOrigins, allowedHosts, mode
/// (direct, search, auto), autoLimit, nameBudget, serverName, sessionKey (a secret of 16
/// characters or more that replicas share, so any of them serves any session), auditLog (a
/// file that gets one JSON line per tool call), legacySse (also the 2024-11-05 HTTP+SSE
/// transport at /sse and /messages), oauth (accept access tokens an OAuth authorization server
/// issued instead of one shared token: `{"issuer": URL, "resource": URL, "audience": "...",
/// "scopes": [...], "jwksUri": URL}`, only issuer required; the issuer's metadata and keys
/// are read before this returns), maxConnections and maxConnectionsPerPeer (the connections
/// served at once, in all (512) and from one address (256); past either, 503); an unknown
/// field is an error, a token of fewer than 16 characters is refused, and noAuth is refused
/// off loopback). mcpmux_http_server_info() gives the URL and token (null behind oauth).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_pool_serve_http(
    pool: mcpmux_pool,
    settings_json: *const c_char,
    out_server: *mut mcpmux_http_server,
) -> mcpmux_status {
    new_handle(out_server, "out_server", &HTTP_SERVERS, || {
        let entry = pool_entry(pool)?;
        let settings = match unsafe { opt_str_arg(settings_json, "settings_json") }? {
            Some(text) => HttpServeSettings::from_json(text)?,
            None => HttpServeSettings::default(),
        };
        let (serve, http) = settings.into_options()?;
        let pool = entry.pool.clone();
        let server = block_on(async move { pool.serve_http(serve, http).await })?;
        Ok(HttpServerEntry {
            url: server.url(),
            token: server.token().map(str::to_owned),
            server: Mutex::new(Some(server)),
        })
    })
}

/// Where clients connect and what they send: `{"url": "http://127.0.0.1:PORT/mcp",
/// "token": "..."}` (`token` null without one).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_http_server_info(
    server: mcpmux_http_server,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    answer_json(out_json, || -> FfiResult<_> {
        let entry = HTTP_SERVERS.get(server)?;
        Ok(json!({"url": entry.url, "token": entry.token}))
    })
}

/// Stops serving (the port is closed when it returns; requests in progress end) and frees
/// the handle. A second free is MCPMUX_ERR_INVALID_HANDLE; 0 is ignored.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_http_server_free(server: mcpmux_http_server) -> mcpmux_status {
    free_handle(&HTTP_SERVERS, server)
}
