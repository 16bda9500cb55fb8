//! `serveHttp`: the pool served as one MCP server over Streamable HTTP (core's `serve`). The
//! settings cross as core's `HttpServeSettings` JSON and core checks them (an unusable one is
//! an `invalid_argument` error naming the fix).
//!
//! The servers live in the pool's state, by id (`Shared::servers`), not in a JS object: a
//! listening server must not stop because the garbage collector took the object that stood for
//! it, and closing the pool stops every server it serves.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use mcpmux::serve::{HttpServeSettings, HttpServer};
use napi::Env;
use napi::bindgen_prelude::PromiseRaw;
use napi_derive::napi;
use serde::Serialize;

use crate::{NativePool, Shared, core_error, promise, to_json};

/// The servers of a pool, by id; `None` once the pool is closed, so that none slips in after.
pub(crate) type Servers = std::sync::Mutex<Option<HashMap<u32, HttpServer>>>;

/// What JS learns of a server it started.
#[derive(Serialize)]
struct Started<'a> {
    id: u32,
    url: String,
    token: Option<&'a str>,
}

#[napi]
impl NativePool {
    /// Serves the pool over Streamable HTTP. `settings` is core's `HttpServeSettings` as
    /// camelCase JSON (unknown keys are errors). Resolves with `{ id, url, token }` as JSON; the
    /// server runs until `stopHttp(id)` or the pool closes.
    #[napi]
    pub fn serve_http<'e>(
        &self,
        env: &'e Env,
        settings: String,
    ) -> crate::Result<PromiseRaw<'e, String>> {
        let (serve, http) = HttpServeSettings::from_json(&settings)
            .and_then(HttpServeSettings::into_options)
            .map_err(core_error)?;
        let shared = self.shared();
        promise(env, async move {
            if shared.servers.lock().unwrap().is_none() {
                return Err(core_error(mcpmux::Error::ShuttingDown));
            }
            let server = shared
                .pool
                .serve_http(serve, http)
                .await
                .map_err(core_error)?;
            let id = shared.next_server.fetch_add(1, Ordering::Relaxed);
            let json = to_json(&Started {
                id,
                url: server.url(),
                token: server.token(),
            })?;
            let refused = match shared.servers.lock().unwrap().as_mut() {
                Some(servers) => {
                    servers.insert(id, server);
                    None
                }
                // Closed while it was binding.
                None => Some(server),
            };
            if let Some(server) = refused {
                server.stop().await;
                return Err(core_error(mcpmux::Error::ShuttingDown));
            }
            Ok(json)
        })
    }

    /// Stops a server `serveHttp` started: no new connections, open sessions ended; resolves
    /// once the listener is closed. An unknown or stopped id is ignored.
    #[napi]
    pub fn stop_http<'e>(&self, env: &'e Env, id: u32) -> crate::Result<PromiseRaw<'e, ()>> {
        let shared = self.shared();
        promise(env, async move {
            let server = shared
                .servers
                .lock()
                .unwrap()
                .as_mut()
                .and_then(|servers| servers.remove(&id));
            if let Some(server) = server {
                server.stop().await;
            }
            Ok(())
        })
    }
}

/// Stops every server of the pool and refuses new ones: the first step of closing it, so that
/// no client starts a call while the pool drains the calls in flight.
pub(crate) async fn stop_all(shared: &Shared) {
    let servers = shared.servers.lock().unwrap().take();
    // Each stop only waits for its listener to close: at once.
    for server in servers.into_iter().flat_map(HashMap::into_values) {
        server.stop().await;
    }
}
