//! Prompts through the extension.

use pyo3::prelude::*;

use crate::pool::{NativePool, from_json, json_result};
use crate::runtime::awaitable;

#[pymethods]
impl NativePool {
    /// With `refresh`, the servers are asked again past every cache.
    #[pyo3(signature = (server=None, refresh=false))]
    fn list_prompts<'py>(
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
            json_result(pool.list_prompts_with(server.as_deref(), options).await)
        })
    }

    #[pyo3(signature = (server, name, arguments_json=None))]
    fn get_prompt<'py>(
        &self,
        py: Python<'py>,
        server: String,
        name: String,
        arguments_json: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let arguments: Option<serde_json::Map<String, serde_json::Value>> = match arguments_json {
            None => None,
            Some(text) => from_json("prompt arguments", &text)?,
        };
        awaitable(py, async move {
            json_result(pool.get_prompt(&server, &name, arguments).await)
        })
    }
}
