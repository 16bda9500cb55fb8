//! Requests beyond the pool's verbs through the extension: completions, and any request or
//! notification by method name.

use pyo3::prelude::*;

use crate::errors::to_py;
use crate::pool::{NativePool, from_json, json_result};
use crate::runtime::awaitable;

#[pymethods]
impl NativePool {
    /// Completion values for a prompt's or resource template's argument: `params_json` is
    /// MCP's `completion/complete` params.
    fn complete<'py>(
        &self,
        py: Python<'py>,
        server: String,
        params_json: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let params = from_json("completion params", &params_json)?;
        awaitable(py, async move {
            json_result(pool.complete(&server, params).await)
        })
    }

    /// Sends a request by method name; answers its result as JSON.
    #[pyo3(signature = (server, method, params_json=None))]
    fn request<'py>(
        &self,
        py: Python<'py>,
        server: String,
        method: String,
        params_json: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let params = params_json.map(|p| from_json("params", &p)).transpose()?;
        awaitable(py, async move {
            json_result(pool.request(&server, &method, params).await)
        })
    }

    /// Sends a notification by method name.
    #[pyo3(signature = (server, method, params_json=None))]
    fn notify<'py>(
        &self,
        py: Python<'py>,
        server: String,
        method: String,
        params_json: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let params = params_json.map(|p| from_json("params", &p)).transpose()?;
        awaitable(py, async move {
            pool.notify(&server, &method, params).await.map_err(to_py)
        })
    }
}
