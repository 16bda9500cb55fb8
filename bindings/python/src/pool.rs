//! `NativePool`: core's `Pool` behind awaitables. Inputs and outputs cross as JSON text (core's
//! serde shapes); the Python package turns them into keyword arguments and dataclasses. This
//! file holds the pool itself (open, events, serve, close); its methods live in a file per
//! topic of the pool's API, as `ffi/src/api/` does (`servers.rs`, `tools.rs`, `tasks.rs`,
//! `resources.rs`, `prompts.rs`, `skills.rs`, `requests.rs`, `apps.rs`, `host.rs`,
//! `oauth.rs`, `widgets.rs`, `conversations.rs`), each a `#[pymethods]` block of its own.

use std::mem::ManuallyDrop;

use mcpmux::{Pool, PoolOptions};
use pyo3::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::errors::{error, invalid, to_py};
use crate::events::{NativeEvents, NativeSubscription};
use crate::runtime::{awaitable, runtime};

/// One open pool. Everything async returns an awaitable of the running event loop.
#[pyclass(frozen, module = "mcpmux._native")]
pub struct NativePool {
    /// Never dropped in a forked child: its connections and child processes are the parent's.
    pool: ManuallyDrop<Pool>,
    /// The process that opened it.
    pid: u32,
    /// Cancelled by `close`, ending every event stream of this pool.
    pub(crate) closed: CancellationToken,
}

impl Drop for NativePool {
    fn drop(&mut self) {
        if self.pid == crate::runtime::pid() {
            // Connections stop their tasks on drop, which needs the runtime's context.
            let _ctx = runtime().enter();
            // SAFETY: dropped once, here, and never used again.
            unsafe { ManuallyDrop::drop(&mut self.pool) };
        }
    }
}

pub(crate) fn to_json<T: Serialize>(value: &T) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| invalid(format!("cannot encode result: {e}")))
}

pub(crate) fn from_json<T: DeserializeOwned>(what: &str, text: &str) -> PyResult<T> {
    serde_json::from_str(text).map_err(|e| invalid(format!("invalid {what}: {e}")))
}

pub(crate) fn json_result<T: Serialize>(r: mcpmux::Result<T>) -> PyResult<String> {
    to_json(&r.map_err(to_py)?)
}

/// Opens a pool with options given as core's camelCase JSON.
#[pyfunction]
pub fn open_pool(py: Python<'_>, options_json: String) -> PyResult<Bound<'_, PyAny>> {
    let options: PoolOptions = from_json("pool options", &options_json)?;
    awaitable(py, async move {
        let pool = Pool::open(options).await.map_err(to_py)?;
        Ok(NativePool {
            pool: ManuallyDrop::new(pool),
            pid: crate::runtime::pid(),
            closed: CancellationToken::new(),
        })
    })
}

/// Core's default pool options, as camelCase JSON.
#[pyfunction]
pub fn default_options() -> PyResult<String> {
    to_json(&PoolOptions::default())
}

impl NativePool {
    /// The pool, unless this is a forked child of the process that opened it.
    pub(crate) fn pool(&self) -> PyResult<Pool> {
        if self.pid != crate::runtime::pid() {
            return Err(error(
                "invalid_argument",
                format!(
                    "this pool was opened in process {} before a fork; open a new pool in this process",
                    self.pid
                ),
            ));
        }
        Ok((*self.pool).clone())
    }
}

#[pymethods]
impl NativePool {
    /// The config file's path.
    fn config_path(&self) -> PyResult<String> {
        Ok(self.pool()?.config_path().display().to_string())
    }

    /// The options the pool runs with, as camelCase JSON.
    fn options(&self) -> PyResult<String> {
        to_json(self.pool()?.options())
    }

    /// Calls in flight.
    fn in_flight(&self) -> PyResult<usize> {
        Ok(self.pool()?.in_flight())
    }

    /// Connection state of every visible server, as JSON.
    fn server_states(&self) -> PyResult<String> {
        to_json(&self.pool()?.server_states())
    }

    // --- host tools, host requests, recipes, conversations ------------------------------

    /// A new subscription to this pool's events, read with `recv()`.
    fn events(&self) -> PyResult<NativeEvents> {
        Ok(NativeEvents::new(
            self.pool()?.events(),
            self.closed.clone(),
        ))
    }

    /// Calls `callback(event_json)` on `event_loop`'s thread for every event, until the
    /// returned subscription is cancelled, the pool is closed or the loop is closed.
    fn subscribe(
        &self,
        event_loop: Py<PyAny>,
        callback: Py<PyAny>,
    ) -> PyResult<NativeSubscription> {
        Ok(NativeSubscription::start(
            self.pool()?.events(),
            self.closed.clone(),
            event_loop,
            callback,
        ))
    }

    /// Serves the pool as one MCP server over Streamable HTTP (`settings_json`: core's
    /// `HttpServeSettings`); answers a `NativeHttpServer`.
    fn serve_http<'py>(&self, py: Python<'py>, settings_json: &str) -> PyResult<Bound<'py, PyAny>> {
        crate::serve::serve_http(py, self, settings_json)
    }

    /// Closes the pool (see core's `Pool::close`); event streams end after the last events.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let closed = self.closed.clone();
        awaitable(py, async move {
            pool.close().await;
            closed.cancel();
            Ok(())
        })
    }
}

/// A host request (sampling, elicitation, roots) as the Python handler gets it.
/// A request without params (`roots/list`) gets an empty `params` object.
/// A count a Python caller gave; a negative one is passed on as 0, which core refuses.
pub(crate) fn count(n: i64) -> usize {
    usize::try_from(n).unwrap_or(0)
}
