//! Maps core's errors to the Python exception classes of `mcpmux.errors`, by stable code.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

/// `code -> exception class`, registered by the Python package when it is imported.
static CLASSES: PyOnceLock<Py<PyDict>> = PyOnceLock::new();

/// Registers the exception class of each error code (called once by `mcpmux.errors`).
#[pyfunction]
pub fn _register_errors(py: Python<'_>, classes: Bound<'_, PyDict>) -> PyResult<()> {
    let _ = CLASSES.set(py, classes.unbind());
    Ok(())
}

/// A Python exception of the class registered for `code`, `RuntimeError` before registration.
pub fn error(code: &str, message: String) -> PyErr {
    error_with_data(code, message, None)
}

/// [`error`] carrying `data` (what core's `Error::data` gives), as the exception's `data`.
fn error_with_data(code: &str, message: String, data: Option<serde_json::Value>) -> PyErr {
    let fallback = format!("[{code}] {message}");
    crate::runtime::attach(|py| {
        let class = CLASSES
            .get(py)
            .and_then(|d| d.bind(py).get_item(code).ok().flatten())
            .and_then(|c| c.cast_into::<PyType>().ok());
        let data = data.and_then(|d| python_value(py, &d));
        match class {
            Some(class) => PyErr::from_type(class, (message, code.to_string(), data)),
            None => pyo3::exceptions::PyRuntimeError::new_err(format!("[{code}] {message}")),
        }
    })
    .unwrap_or_else(|| pyo3::exceptions::PyRuntimeError::new_err(fallback))
}

/// `value` as the Python object `json.loads` makes of it.
fn python_value(py: Python<'_>, value: &serde_json::Value) -> Option<Py<PyAny>> {
    let json = py.import("json").ok()?;
    let loaded = json.call_method1("loads", (value.to_string(),)).ok()?;
    Some(loaded.unbind())
}

/// The Python exception for a core error: its class by kind, its message as core wrote it,
/// and what it carries besides (`data`).
pub fn to_py(e: mcpmux::Error) -> PyErr {
    error_with_data(e.kind().as_str(), e.to_string(), e.data())
}

/// A caller's input that could not be used.
pub fn invalid(message: impl std::fmt::Display) -> PyErr {
    error("invalid_argument", message.to_string())
}
