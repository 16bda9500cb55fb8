//! Skills (the Skills extension) through the extension: listing, loading, reading their
//! files.

use pyo3::prelude::*;

use crate::pool::{NativePool, json_result};
use crate::runtime::awaitable;

#[pymethods]
impl NativePool {
    #[pyo3(signature = (server=None))]
    fn list_skills<'py>(
        &self,
        py: Python<'py>,
        server: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move {
            json_result(pool.list_skills(server.as_deref()).await)
        })
    }

    fn load_skill<'py>(
        &self,
        py: Python<'py>,
        server: String,
        skill: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move {
            json_result(pool.load_skill(&server, &skill).await)
        })
    }

    fn read_skill_file<'py>(
        &self,
        py: Python<'py>,
        server: String,
        skill: String,
        uri: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move {
            json_result(pool.read_skill_file(&server, &skill, &uri).await)
        })
    }
}
