//! What the host answers through the extension: host tools, the sampling, elicitation and
//! roots handlers, and roots.

use std::sync::Arc;

use mcpmux::host::answers;
use pyo3::prelude::*;
use serde::Serialize;

use crate::callbacks::{PyCallback, one};
use crate::errors::{invalid, to_py};
use crate::pool::{NativePool, from_json, to_json};
use crate::runtime::awaitable;

#[pymethods]
impl NativePool {
    /// Registers a host tool whose handler is `adapter(arguments_json) -> result_json`, an
    /// `async def` run on `event_loop`. Returns the tool as listed (JSON).
    fn register_tool(
        &self,
        name: String,
        description: String,
        schema_json: String,
        event_loop: Py<PyAny>,
        adapter: Py<PyAny>,
    ) -> PyResult<String> {
        let pool = self.pool()?;
        let input_schema: serde_json::Value = from_json("input schema", &schema_json)?;
        let callback = PyCallback::new(event_loop, adapter);
        let tool_name = name.clone();
        let handler: mcpmux::HostToolHandler = Arc::new(move |arguments: serde_json::Value| {
            let answer = callback.call(one(arguments.to_string()));
            let tool_name = tool_name.clone();
            Box::pin(async move {
                let text = answer.await?;
                read_answer(
                    &text,
                    answers::tool_result,
                    &format!("host tool '{tool_name}'"),
                )
            })
        });
        let info = pool
            .register_tool(mcpmux::HostTool {
                name,
                description,
                input_schema,
                handler,
            })
            .map_err(to_py)?;
        to_json(&info)
    }

    /// Removes a host tool; whether it was there.
    fn unregister_tool(&self, name: &str) -> PyResult<bool> {
        Ok(self.pool()?.unregister_tool(name))
    }

    /// Sets (or with `None`, removes) the sampling handler: `adapter(request_json)` answers
    /// a `CreateMessageResult` as JSON. With `tools`, it takes the request's tools and may
    /// answer `tool_use` content (declared to servers as `sampling.tools`).
    #[pyo3(signature = (event_loop=None, adapter=None, tools=false))]
    fn set_sampling_handler(
        &self,
        event_loop: Option<Py<PyAny>>,
        adapter: Option<Py<PyAny>>,
        tools: bool,
    ) -> PyResult<()> {
        let pool = self.pool()?;
        let handler = match (event_loop, adapter) {
            (Some(event_loop), Some(adapter)) => {
                let callback = PyCallback::new(event_loop, adapter);
                let h: mcpmux::SamplingHandler = Arc::new(move |req| {
                    let answer = callback.call(one(host_request_json(&req)));
                    Box::pin(async move {
                        let text = answer.await?;
                        read_answer(&text, answers::sampling_result, "the sampling handler")
                    })
                });
                Some(h)
            }
            _ => None,
        };
        pool.set_sampling_handler_with(handler, mcpmux::SamplingSupport { tools });
        Ok(())
    }

    /// Sets (or with `None`, removes) the elicitation handler: `adapter(request_json)`
    /// answers an `ElicitResult` as JSON.
    #[pyo3(signature = (event_loop=None, adapter=None))]
    fn set_elicitation_handler(
        &self,
        event_loop: Option<Py<PyAny>>,
        adapter: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let pool = self.pool()?;
        let handler = match (event_loop, adapter) {
            (Some(event_loop), Some(adapter)) => {
                let callback = PyCallback::new(event_loop, adapter);
                let h: mcpmux::ElicitationHandler = Arc::new(move |req| {
                    let answer = callback.call(one(host_request_json(&req)));
                    Box::pin(async move {
                        let text = answer.await?;
                        read_answer(
                            &text,
                            answers::elicitation_result,
                            "the elicitation handler",
                        )
                    })
                });
                Some(h)
            }
            _ => None,
        };
        pool.set_elicitation_handler(handler);
        Ok(())
    }

    /// Sets (or with `None`, removes) the roots handler: `adapter(request_json)` answers the
    /// roots (a JSON list of `{"uri", "name"?}`) for one server's `roots/list`; without
    /// one, the lists set with `set_roots` / `set_server_roots` answer.
    #[pyo3(signature = (event_loop=None, adapter=None))]
    fn set_roots_handler(
        &self,
        event_loop: Option<Py<PyAny>>,
        adapter: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let pool = self.pool()?;
        let handler = match (event_loop, adapter) {
            (Some(event_loop), Some(adapter)) => {
                let callback = PyCallback::new(event_loop, adapter);
                let h: mcpmux::RootsHandler = Arc::new(move |req| {
                    let answer = callback.call(one(host_request_json(&req)));
                    Box::pin(async move {
                        let text = answer.await?;
                        read_answer(&text, answers::roots, "the roots handler")
                    })
                });
                Some(h)
            }
            _ => None,
        };
        pool.set_roots_handler(handler);
        Ok(())
    }

    /// Tells every connected server that the roots changed (they ask again).
    fn notify_roots_changed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move {
            pool.notify_roots_changed().await;
            Ok(())
        })
    }

    /// The pool's roots, as JSON.
    fn roots(&self) -> PyResult<String> {
        to_json(&self.pool()?.roots())
    }

    /// Replaces the pool's roots (JSON list of `{"uri", "name"?}`); servers are told.
    fn set_roots<'py>(&self, py: Python<'py>, roots_json: String) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        #[allow(
            deprecated,
            reason = "roots are deprecated by SEP-2577 but servers use them"
        )]
        let roots: Vec<mcpmux::model::Root> = from_json("roots", &roots_json)?;
        awaitable(py, async move {
            pool.set_roots(roots).await;
            Ok(())
        })
    }

    /// Gives one server its own roots; `None` returns it to the pool's.
    #[pyo3(signature = (server, roots_json=None))]
    fn set_server_roots<'py>(
        &self,
        py: Python<'py>,
        server: String,
        roots_json: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        #[allow(
            deprecated,
            reason = "roots are deprecated by SEP-2577 but servers use them"
        )]
        let roots: Option<Vec<mcpmux::model::Root>> = match roots_json {
            None => None,
            Some(text) => Some(from_json("roots", &text)?),
        };
        awaitable(py, async move {
            pool.set_server_roots(&server, roots).await.map_err(to_py)
        })
    }
}

pub(super) fn host_request_json<P: Serialize>(req: &mcpmux::HostRequest<P>) -> String {
    serde_json::to_string(req).unwrap_or_default()
}

/// Reads what a Python adapter answered (JSON text) as core's host contract says.
pub(super) fn read_answer<T>(
    text: &str,
    read: impl FnOnce(serde_json::Value) -> Result<T, String>,
    who: &str,
) -> Result<T, String> {
    let value =
        serde_json::from_str(text).map_err(|e| format!("the answer of {who} is not JSON ({e})"))?;
    read(value).map_err(|e| format!("the answer of {who} was refused: {e}"))
}

/// What core makes of a host's answer of `kind` (the contract table's `accepted`), as JSON;
/// a refused answer raises `InvalidArgumentError`.
#[pyfunction]
pub fn read_host_answer(kind: &str, answer_json: &str) -> PyResult<String> {
    let kind: answers::AnswerKind = serde_json::from_value(kind.into()).map_err(|_| {
        invalid(format!(
            "answer kind must be tool_result, approval, sampling, elicitation, roots or \
             provider_reply, not {kind:?}"
        ))
    })?;
    let value = from_json("answer", answer_json)?;
    to_json(&answers::read(kind, value).map_err(to_py)?)
}
