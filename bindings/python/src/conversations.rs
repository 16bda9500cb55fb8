//! Discovery's layers and conversations through the extension: a conversation sees the
//! discovery tools first, and a server's tools after its first use.

use std::sync::Arc;

use mcpmux::CallOptions;
use pyo3::prelude::*;
use tokio_util::sync::CancellationToken;

use crate::pool::{NativePool, from_json, json_result, to_json};
use crate::runtime::{InRuntime, awaitable};
use crate::tools::timeout_of;

#[pymethods]
impl NativePool {
    /// One layer per server (and the host's tools), as JSON, after listing the servers
    /// whose tools are not known yet.
    fn layers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move { json_result(Ok(pool.layers().await)) })
    }

    /// The layers as known now, without connecting anything, as JSON.
    fn known_layers(&self) -> PyResult<String> {
        to_json(&self.pool()?.known_layers())
    }

    /// A conversation over the servers `filter_json` (core's `ServerFilter`) lets through.
    #[pyo3(signature = (filter_json=None))]
    fn conversation(&self, filter_json: Option<String>) -> PyResult<NativeConversation> {
        let filter = match filter_json {
            None => Default::default(),
            Some(text) => from_json("server filter", &text)?,
        };
        Ok(NativeConversation {
            inner: InRuntime::new(Arc::new(self.pool()?.conversation_with(filter))),
        })
    }
}

/// One conversation: discovery tools first, a server's tools after its first use.
#[pyclass(frozen, module = "mcpmux._native")]
pub struct NativeConversation {
    inner: InRuntime<Arc<mcpmux::Conversation>>,
}

#[pymethods]
impl NativeConversation {
    /// The function definitions to offer a model now, as JSON.
    fn tools(&self) -> PyResult<String> {
        to_json(&self.inner.tools())
    }

    /// Ids of the servers activated so far, as JSON.
    fn activated(&self) -> PyResult<String> {
        to_json(&self.inner.activated())
    }

    /// Calls a function of the conversation (discovery answered locally).
    #[pyo3(signature = (name, arguments_json, timeout=None))]
    fn call<'py>(
        &self,
        py: Python<'py>,
        name: String,
        arguments_json: String,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let inner = Arc::clone(&self.inner);
        let arguments: serde_json::Value = from_json("tool arguments", &arguments_json)?;
        let timeout = timeout_of(timeout)?;
        let cancel = CancellationToken::new();
        let guard = cancel.clone().drop_guard();
        awaitable(py, async move {
            let _guard = guard;
            let options = CallOptions {
                timeout,
                cancel: Some(cancel),
                ..Default::default()
            };
            json_result(inner.call(&name, arguments, options).await)
        })
    }
}
