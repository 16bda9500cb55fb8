//! Resources through the extension: listing, reading and subscribing.

use pyo3::prelude::*;

use crate::errors::to_py;
use crate::pool::{NativePool, json_result};
use crate::runtime::awaitable;

#[pymethods]
impl NativePool {
    /// With `refresh`, the servers are asked again past every cache.
    #[pyo3(signature = (server=None, refresh=false))]
    fn list_resources<'py>(
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
            json_result(pool.list_resources_with(server.as_deref(), options).await)
        })
    }

    /// With `refresh`, the servers are asked again past every cache.
    #[pyo3(signature = (server=None, refresh=false))]
    fn list_resource_templates<'py>(
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
            json_result(
                pool.list_resource_templates_with(server.as_deref(), options)
                    .await,
            )
        })
    }

    fn read_resource<'py>(
        &self,
        py: Python<'py>,
        server: String,
        uri: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move {
            json_result(pool.read_resource(&server, &uri).await)
        })
    }

    fn subscribe_resource<'py>(
        &self,
        py: Python<'py>,
        server: String,
        uri: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move {
            pool.subscribe_resource(&server, &uri).await.map_err(to_py)
        })
    }

    fn unsubscribe_resource<'py>(
        &self,
        py: Python<'py>,
        server: String,
        uri: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move {
            pool.unsubscribe_resource(&server, &uri)
                .await
                .map_err(to_py)
        })
    }
}
