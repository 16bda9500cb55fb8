//! Tools through the extension: search, the catalog, listing, and calls (with the call
//! options Python gives).

use std::sync::Arc;
use std::time::Duration;

use mcpmux::{CallOptions, Progress};
use pyo3::prelude::*;

use crate::errors::{invalid, to_py};
use crate::pool::{NativePool, count, from_json, json_result, to_json};
use crate::runtime::{attach, awaitable, running_loop};

#[pymethods]
impl NativePool {
    /// `limit` as the caller gave it (core says what `None` and 0 mean).
    #[pyo3(signature = (query, limit=None))]
    fn search_tools<'py>(
        &self,
        py: Python<'py>,
        query: String,
        limit: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let limit = limit.map(count);
        awaitable(py, async move {
            json_result(pool.search_tools(&query, limit).await)
        })
    }

    /// Lists the servers whose tools are not known yet (`filter_json`: core's `ServerFilter`,
    /// default all); the servers that could not be listed, as JSON.
    #[pyo3(signature = (filter_json=None))]
    fn ensure_catalog<'py>(
        &self,
        py: Python<'py>,
        filter_json: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let filter: mcpmux::ServerFilter = match filter_json {
            None => Default::default(),
            Some(text) => from_json("server filter", &text)?,
        };
        let pool = self.pool()?;
        awaitable(py, async move {
            json_result(Ok(pool.ensure_catalog(&filter).await))
        })
    }

    fn known_tools(&self) -> PyResult<String> {
        to_json(&self.pool()?.known_tools())
    }

    /// With `refresh`, the servers are asked again past every cache.
    #[pyo3(signature = (server=None, refresh=false))]
    fn list_tools<'py>(
        &self,
        py: Python<'py>,
        server: Option<String>,
        refresh: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let options = mcpmux::ListOptions {
            refresh,
            ..Default::default()
        };
        awaitable(py, async move {
            json_result(pool.list_tools_with(server.as_deref(), options).await)
        })
    }

    /// Calls a tool. `timeout` is in seconds; `on_progress(progress, total, message)` runs on
    /// the calling event loop's thread; `options_json` is core's `CallSettings` (`validate`,
    /// `meta`, `maxTotalMs`), `None` for none. Cancelling the awaitable cancels the call in
    /// core, which tells the server (`notifications/cancelled`).
    /// `on_task(task_id, status, status_message)`, on the same thread, hears each status of the
    /// task the server runs the call as, if it does.
    #[pyo3(signature = (tool_id, arguments, timeout=None, on_progress=None, options_json=None, on_task=None))]
    #[allow(
        clippy::too_many_arguments,
        reason = "one per option of a call, from Python"
    )]
    fn call_tool<'py>(
        &self,
        py: Python<'py>,
        tool_id: String,
        arguments: &Bound<'py, PyAny>,
        timeout: Option<f64>,
        on_progress: Option<Py<PyAny>>,
        options_json: Option<String>,
        on_task: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let arguments = crate::convert::arguments(arguments)?;
        let on_task = match on_task {
            None => None,
            Some(callback) => {
                let event_loop = running_loop(py)?.unbind();
                let f: mcpmux::TaskFn = Arc::new(move |u: mcpmux::TaskUpdate| {
                    attach(|py| {
                        let _ = event_loop.call_method1(
                            py,
                            "call_soon_threadsafe",
                            (
                                callback.clone_ref(py),
                                u.task_id,
                                u.status,
                                u.status_message,
                            ),
                        );
                    });
                });
                Some(f)
            }
        };
        let timeout = timeout_of(timeout)?;
        let settings: Option<mcpmux::CallSettings> = options_json
            .map(|text| from_json("call options", &text))
            .transpose()?;
        let with_progress = on_progress.is_some();
        let on_progress = on_progress
            .map(|callback| progress_fn(py, callback))
            .transpose()?;
        // Boxed at once: the call's state machine is large, and every move would copy it.
        // Cancelling the awaitable drops this future, and dropping a call in flight is what
        // sends the server `notifications/cancelled`: no cancellation token is needed.
        let call: crate::runtime::BoxFuture = Box::pin(async move {
            let mut options = CallOptions {
                timeout,
                on_progress,
                on_task,
                ..Default::default()
            };
            if let Some(settings) = settings {
                settings.apply(&mut options);
            }
            let result = pool.call_tool(&tool_id, arguments, options).await;
            // The Python object is built on the loop thread, which holds the GIL already.
            Box::new(move |py: Python<'_>| match result {
                Ok(r) => crate::convert::call_tool_result(py, &r).map(Bound::unbind),
                Err(e) => Err(to_py(e)),
            }) as crate::runtime::Deliver
        });
        #[cfg(unix)]
        {
            if with_progress {
                // Polled as a tokio task, as before: core's rmcp path routes a progress
                // notification from a task of its own, which a call polled on the loop can
                // outrun (the last notification would find the route gone).
                crate::completion::future_on_runtime(py, call)
            } else {
                crate::completion::future_on_loop(py, call)
            }
        }
        #[cfg(not(unix))]
        {
            crate::runtime::legacy_awaitable(py, async move {
                Ok(crate::runtime::Delivered(call.await))
            })
        }
    }
}

/// A Python progress callback, called on `py`'s running loop with each update.
pub(super) fn progress_fn(py: Python<'_>, callback: Py<PyAny>) -> PyResult<mcpmux::ProgressFn> {
    let event_loop = running_loop(py)?.unbind();
    Ok(Arc::new(move |p: Progress| {
        attach(|py| {
            // A closed loop means nobody waits for the call any more.
            let _ = event_loop.call_method1(
                py,
                "call_soon_threadsafe",
                (callback.clone_ref(py), p.progress, p.total, p.message),
            );
        });
    }))
}

/// Parses a timeout in seconds.
pub(crate) fn timeout_of(timeout: Option<f64>) -> PyResult<Option<Duration>> {
    match timeout {
        None => Ok(None),
        Some(t) if t.is_finite() && t > 0.0 => Ok(Some(Duration::from_secs_f64(t))),
        Some(t) => Err(invalid(format!(
            "timeout must be a positive number of seconds, not {t}"
        ))),
    }
}
