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
    let fallback = format!("[{code}] {message}");
    crate::runtime::attach(|py| {
        let class = CLASSES
            .get(py)
            .and_then(|d| d.bind(py).get_item(code).ok().flatten())
            .and_then(|c| c.cast_into::<PyType>().ok());
        match class {
            Some(class) => PyErr::from_type(class, (message, code.to_string())),
            None => pyo3::exceptions::PyRuntimeError::new_err(format!("[{code}] {message}")),
        }
    })
    .unwrap_or_else(|| pyo3::exceptions::PyRuntimeError::new_err(fallback))
}

/// The Python exception for a core error: its class by kind, its message as core wrote it.
pub fn to_py(e: mcpmux::Error) -> PyErr {
    error(e.kind().as_str(), e.to_string())
}

/// A caller's input that could not be used.
pub fn invalid(message: impl std::fmt::Display) -> PyErr {
    error("invalid_argument", message.to_string())
}
