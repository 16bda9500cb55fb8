//! The server list through the extension: listing, adding, changing and removing servers,
//! and connecting, testing and discovering them.

use mcpmux::{ServerInput, ServerPatch};
use pyo3::prelude::*;

use crate::errors::to_py;
use crate::pool::{NativePool, from_json, json_result, to_json};
use crate::runtime::awaitable;

#[pymethods]
impl NativePool {
    fn list_servers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move { json_result(pool.list_servers().await) })
    }

    fn get_server<'py>(&self, py: Python<'py>, server: String) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(
            py,
            async move { json_result(pool.get_server(&server).await) },
        )
    }

    fn add_server<'py>(&self, py: Python<'py>, input_json: String) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let input: ServerInput = from_json("server", &input_json)?;
        awaitable(py, async move { json_result(pool.add_server(input).await) })
    }

    fn add_json<'py>(&self, py: Python<'py>, text: String) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move { json_result(pool.add_json(&text).await) })
    }

    fn update_server<'py>(
        &self,
        py: Python<'py>,
        server: String,
        patch_json: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let patch: ServerPatch = from_json("server update", &patch_json)?;
        awaitable(py, async move {
            json_result(pool.update_server(&server, patch).await)
        })
    }

    fn approve_server<'py>(&self, py: Python<'py>, server: String) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move {
            json_result(pool.approve_server(&server).await)
        })
    }

    fn remove_server<'py>(&self, py: Python<'py>, server: String) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(
            py,
            async move { json_result(pool.remove_server(&server).await) },
        )
    }

    fn test_server<'py>(&self, py: Python<'py>, server: String) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(
            py,
            async move { json_result(pool.test_server(&server).await) },
        )
    }

    fn test_config<'py>(&self, py: Python<'py>, input_json: String) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let input: ServerInput = from_json("server", &input_json)?;
        awaitable(
            py,
            async move { json_result(pool.test_config(input).await) },
        )
    }

    fn discover<'py>(&self, py: Python<'py>, server: String) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move { json_result(pool.discover(&server).await) })
    }

    fn connect<'py>(&self, py: Python<'py>, server: String) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move { json_result(pool.connect(&server).await) })
    }

    fn connect_all<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move { to_json(&pool.connect_all().await) })
    }

    fn disconnect<'py>(&self, py: Python<'py>, server: String) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(
            py,
            async move { pool.disconnect(&server).await.map_err(to_py) },
        )
    }
}
