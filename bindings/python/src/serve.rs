//! `NativeHttpServer`: a pool served as one MCP server over Streamable HTTP (core's
//! `Pool::serve_http`). The settings cross as core's `HttpServeSettings` JSON, which core
//! checks; this side only holds the running server until it is stopped.

use std::sync::Mutex;

use mcpmux::serve::{HttpServeSettings, HttpServer};
use pyo3::prelude::*;

use crate::errors::{error, to_py};
use crate::pool::NativePool;
use crate::runtime::{InRuntime, awaitable};

/// A pool being served over HTTP: stopped by `stop()`, when dropped, or when its pool closes.
#[pyclass(frozen, module = "mcpmux._native")]
pub struct NativeHttpServer {
    url: String,
    token: Option<String>,
    /// `None` once stopped. Never dropped in a forked child: its task is the parent's.
    server: InRuntime<Mutex<Option<HttpServer>>>,
    /// The process that started it.
    pid: u32,
}

/// Starts serving `pool` with `settings_json` (core's camelCase `HttpServeSettings`); a
/// setting core refuses raises `InvalidArgumentError` before anything listens.
pub fn serve_http<'py>(
    py: Python<'py>,
    pool: &NativePool,
    settings_json: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let pool = pool.pool()?;
    let (serve, http) = HttpServeSettings::from_json(settings_json)
        .and_then(HttpServeSettings::into_options)
        .map_err(to_py)?;
    awaitable(py, async move {
        let server = pool.serve_http(serve, http).await.map_err(to_py)?;
        Ok(NativeHttpServer {
            url: server.url(),
            token: server.token().map(str::to_string),
            server: InRuntime::new(Mutex::new(Some(server))),
            pid: crate::runtime::pid(),
        })
    })
}

#[pymethods]
impl NativeHttpServer {
    /// The URL clients connect to (`http://host:port/mcp`).
    fn url(&self) -> &str {
        &self.url
    }

    /// The bearer token clients send, or `None` when serving without one.
    fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Stops accepting, ends open sessions and waits for the listener to close; stopping
    /// again does nothing.
    fn stop<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if self.pid != crate::runtime::pid() {
            return Err(error(
                "invalid_argument",
                format!(
                    "this server was started in process {} before a fork; it serves from there",
                    self.pid
                ),
            ));
        }
        let server = self.server.lock().unwrap_or_else(|e| e.into_inner()).take();
        awaitable(py, async move {
            if let Some(server) = server {
                server.stop().await;
            }
            Ok(())
        })
    }
}
