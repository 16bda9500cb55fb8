//! MCP Apps on the Python side: a view's bridge (core's `AppBridge`) as a native class; the
//! views and messages cross as JSON.

use std::sync::Arc;

use mcpmux::AppBridge;
use pyo3::prelude::*;

use crate::pool::{NativePool, from_json, json_result, to_json};
use crate::runtime::{InRuntime, awaitable};
use mcpmux::CallOptions;

/// One rendered view's bridge: the host passes the view's messages in and posts out what
/// comes back.
#[pyclass(frozen, module = "mcpmux._native")]
pub struct NativeAppBridge {
    inner: InRuntime<Arc<AppBridge>>,
}

impl NativeAppBridge {
    pub(crate) fn new(bridge: AppBridge) -> Self {
        NativeAppBridge {
            inner: InRuntime::new(Arc::new(bridge)),
        }
    }
}

#[pymethods]
impl NativeAppBridge {
    /// A reply to the view's request `id_json`: the host's result (JSON, `{}` when absent), or
    /// the `error` message the view sees; the JSON-RPC message as JSON.
    #[staticmethod]
    #[pyo3(signature = (id_json, result_json=None, error=None))]
    fn reply(id_json: &str, result_json: Option<&str>, error: Option<String>) -> PyResult<String> {
        let id: serde_json::Value = from_json("id", id_json)?;
        let answer = match (error, result_json) {
            (Some(message), _) => Err(message),
            (None, Some(result)) => Ok(from_json("result", result)?),
            (None, None) => Ok(serde_json::Value::Object(Default::default())),
        };
        to_json(&AppBridge::reply(&id, answer).map_err(crate::errors::to_py)?)
    }

    /// The view, as JSON.
    fn view(&self) -> PyResult<String> {
        to_json(self.inner.view())
    }

    /// One message from the view (JSON): `{"post": [...], "host"?: message}` as JSON.
    fn handle<'py>(&self, py: Python<'py>, message_json: String) -> PyResult<Bound<'py, PyAny>> {
        let message: serde_json::Value = from_json("message", &message_json)?;
        let bridge = Arc::clone(&self.inner);
        awaitable(py, async move { to_json(&bridge.handle(message).await) })
    }

    /// The tool's arguments (JSON): the messages to post now, as a JSON array.
    fn tool_input(&self, arguments_json: String) -> PyResult<String> {
        to_json(
            &self
                .inner
                .tool_input(from_json("arguments", &arguments_json)?),
        )
    }

    /// The tool's result (JSON): the messages to post now, as a JSON array.
    fn tool_result(&self, result_json: String) -> PyResult<String> {
        let result: mcpmux::model::CallToolResult = from_json("result", &result_json)?;
        to_json(&self.inner.tool_result(&result))
    }

    /// The call did not finish: the messages to post now, as a JSON array.
    fn tool_cancelled(&self, reason: String) -> PyResult<String> {
        to_json(&self.inner.tool_cancelled(&reason))
    }
}

#[pymethods]
impl NativePool {
    /// The MCP App view of a tool, read and checked, as JSON.
    fn app_view<'py>(&self, py: Python<'py>, tool_id: String) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(
            py,
            async move { json_result(pool.app_view(&tool_id).await) },
        )
    }

    /// A view's call of its server's tool `name`.
    fn app_call<'py>(
        &self,
        py: Python<'py>,
        view_json: String,
        name: String,
        arguments_json: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let view: mcpmux::AppView = from_json("view", &view_json)?;
        let arguments: serde_json::Value = from_json("tool arguments", &arguments_json)?;
        awaitable(py, async move {
            json_result(
                pool.app_call(&view, &name, arguments, CallOptions::default())
                    .await,
            )
        })
    }

    /// A view's read of its server's resource `uri`.
    fn app_read_resource<'py>(
        &self,
        py: Python<'py>,
        view_json: String,
        uri: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let view: mcpmux::AppView = from_json("view", &view_json)?;
        awaitable(py, async move {
            json_result(pool.app_read_resource(&view, &uri).await)
        })
    }

    /// The bridge of a view being rendered.
    fn app_bridge(
        &self,
        view_json: String,
        host_context_json: String,
    ) -> PyResult<crate::apps::NativeAppBridge> {
        let view: mcpmux::AppView = from_json("view", &view_json)?;
        let context: serde_json::Value = from_json("host context", &host_context_json)?;
        Ok(crate::apps::NativeAppBridge::new(
            self.pool()?.app_bridge(view, context),
        ))
    }
}
