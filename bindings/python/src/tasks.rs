//! `NativeTaskRun`: core's `TaskRun` (a tool call followed in the background) behind
//! awaitables. The following itself is core's; `TaskRun` in `_pool.py` only gives it Python's
//! types.

use std::sync::Arc;

use pyo3::prelude::*;

use crate::errors::to_py;
use crate::pool::{NativePool, from_json};
use crate::runtime::{Deliver, awaitable, runtime};
use crate::tools::{progress_fn, timeout_of};
use mcpmux::CallOptions;

/// A task run: its status, the next one, cancel, and the result.
#[pyclass(frozen, module = "mcpmux._native")]
pub struct NativeTaskRun {
    run: Arc<mcpmux::TaskRun>,
}

/// A status as Python takes it: `(task_id, status, status_message)`.
type Update = (String, String, Option<String>);

fn update(u: mcpmux::TaskUpdate) -> Update {
    (u.task_id, u.status, u.status_message)
}

impl NativeTaskRun {
    pub fn new(run: mcpmux::TaskRun) -> Self {
        NativeTaskRun { run: Arc::new(run) }
    }
}

#[pymethods]
impl NativeTaskRun {
    /// The last status, if the server announced one.
    fn status(&self) -> Option<Update> {
        self.run.status().map(update)
    }

    /// An awaitable of the next status not told yet, or `None` once the call has ended.
    fn changed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let run = self.run.clone();
        awaitable(py, async move { Ok(run.changed().await.map(update)) })
    }

    /// Cancels the call and its task at the server.
    fn cancel(&self) {
        self.run.cancel();
    }

    /// An awaitable of the call's `CallToolResult` (given once; `TaskRun` keeps it).
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let run = self.run.clone();
        let call: crate::runtime::BoxFuture = Box::pin(async move {
            let result = run.result().await;
            Box::new(move |py: Python<'_>| match result {
                Ok(r) => crate::convert::call_tool_result(py, &r).map(Bound::unbind),
                Err(e) => Err(to_py(e)),
            }) as Deliver
        });
        #[cfg(unix)]
        {
            crate::completion::future_on_runtime(py, call)
        }
        #[cfg(not(unix))]
        {
            crate::runtime::legacy_awaitable(py, async move {
                Ok(crate::runtime::Delivered(call.await))
            })
        }
    }
}

#[pymethods]
impl NativePool {
    /// `call_tool` started in the background, followed by the `NativeTaskRun` it returns
    /// (core's `TaskRun`; `TaskRun` in `_pool.py` is its Python face).
    #[pyo3(signature = (tool_id, arguments, timeout=None, on_progress=None, options_json=None))]
    fn start_task(
        &self,
        py: Python<'_>,
        tool_id: String,
        arguments: &Bound<'_, PyAny>,
        timeout: Option<f64>,
        on_progress: Option<Py<PyAny>>,
        options_json: Option<String>,
    ) -> PyResult<crate::tasks::NativeTaskRun> {
        let pool = self.pool()?;
        let arguments = crate::convert::arguments(arguments)?;
        let mut options = CallOptions {
            timeout: timeout_of(timeout)?,
            on_progress: on_progress
                .map(|callback| progress_fn(py, callback))
                .transpose()?,
            ..Default::default()
        };
        if let Some(text) = options_json {
            from_json::<mcpmux::CallSettings>("call options", &text)?.apply(&mut options);
        }
        let _ctx = runtime().enter();
        Ok(crate::tasks::NativeTaskRun::new(
            pool.start_task(&tool_id, arguments, options),
        ))
    }
}
