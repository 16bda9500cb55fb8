//! Direct conversions between Python objects and JSON values, for the hot path of a tool call:
//! no JSON text in between.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use serde_json::{Map, Number, Value};

/// Deeper than this, `json.dumps` decides (it also finds cycles).
const MAX_DEPTH: usize = 64;

/// The JSON value of `obj` when it is made only of exact `dict` (with `str` keys), `list`,
/// `tuple`, `str`, `int` (64-bit), finite `float`, `bool` and `None`: the value `json.dumps`
/// would write. `None` for anything else (the caller then asks `json.dumps`).
pub fn py_to_json(obj: &Bound<'_, PyAny>) -> Option<Value> {
    to_json(obj, 0)
}

fn to_json(obj: &Bound<'_, PyAny>, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    if obj.is_none() {
        return Some(Value::Null);
    }
    if let Ok(s) = obj.cast_exact::<PyString>() {
        return s.to_str().ok().map(|s| Value::String(s.to_owned()));
    }
    if let Ok(d) = obj.cast_exact::<PyDict>() {
        let mut map = Map::new();
        for (k, v) in d.iter() {
            let k = k.cast_exact::<PyString>().ok()?.to_str().ok()?;
            map.insert(k.to_owned(), to_json(&v, depth + 1)?);
        }
        return Some(Value::Object(map));
    }
    if let Ok(b) = obj.cast_exact::<PyBool>() {
        return Some(Value::Bool(b.is_true()));
    }
    if obj.is_exact_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Some(Value::from(i));
        }
        return obj.extract::<u64>().ok().map(Value::from);
    }
    if let Ok(f) = obj.cast_exact::<PyFloat>() {
        return Number::from_f64(f.value()).map(Value::Number);
    }
    if let Ok(l) = obj.cast_exact::<PyList>() {
        let mut items = Vec::with_capacity(l.len());
        for v in l.iter() {
            items.push(to_json(&v, depth + 1)?);
        }
        return Some(Value::Array(items));
    }
    if let Ok(t) = obj.cast_exact::<PyTuple>() {
        let mut items = Vec::with_capacity(t.len());
        for v in t.iter() {
            items.push(to_json(&v, depth + 1)?);
        }
        return Some(Value::Array(items));
    }
    None
}

/// The Python object `json.loads` would make of `value`.
pub fn json_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for v in items {
                list.append(json_to_py(py, v)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(PyString::new(py, k), json_to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// `mcpmux.types.CallToolResult`, registered by the package when it is imported.
static CALL_TOOL_RESULT: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static OBJECT_NEW: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static JSON_DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A call's arguments as JSON: directly, or through `json.dumps` for what the direct
/// conversion does not cover (so every input means what it always meant).
pub fn arguments(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if let Some(value) = py_to_json(obj) {
        return Ok(value);
    }
    let py = obj.py();
    let dumps = JSON_DUMPS.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("json")?.getattr("dumps")?.unbind())
    })?;
    let text = match dumps.bind(py).call1((obj,)) {
        Ok(t) => t.extract::<String>()?,
        Err(e)
            if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py)
                || e.is_instance_of::<pyo3::exceptions::PyValueError>(py) =>
        {
            return Err(crate::errors::invalid(format!(
                "tool arguments are not JSON: {}",
                e.value(py)
            )));
        }
        Err(e) => return Err(e),
    };
    serde_json::from_str(&text)
        .map_err(|e| crate::errors::invalid(format!("invalid tool arguments: {e}")))
}

/// Registers the class tool call results are made of (called once by `mcpmux._pool`).
#[pyfunction]
pub fn _register_result_types(py: Python<'_>, call_tool_result: Bound<'_, PyType>) {
    let _ = CALL_TOOL_RESULT.set(py, call_tool_result.unbind());
}

/// The JSON dict of a result that holds only plain text blocks (the usual answer), built
/// without going through a `serde_json::Value` tree first; `None` for anything else. Keys
/// come in the order the general path gives them (sorted, as serde_json's map keeps them).
fn plain_text_raw<'py>(
    py: Python<'py>,
    result: &mcpmux::model::CallToolResult,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    use mcpmux::model::ContentBlock;
    if result.structured_content.is_some() || result.meta.is_some() {
        return Ok(None);
    }
    let content = PyList::empty(py);
    for block in &result.content {
        match block {
            ContentBlock::Text(t) if t.meta.is_none() && t.annotations.is_none() => {
                let item = PyDict::new(py);
                item.set_item(pyo3::intern!(py, "text"), &t.text)?;
                item.set_item(pyo3::intern!(py, "type"), pyo3::intern!(py, "text"))?;
                content.append(item)?;
            }
            _ => return Ok(None),
        }
    }
    let raw = PyDict::new(py);
    raw.set_item(pyo3::intern!(py, "content"), content)?;
    if let Some(is_error) = result.is_error {
        raw.set_item(pyo3::intern!(py, "isError"), is_error)?;
    }
    if let Some(t) = &result.result_type {
        raw.set_item(pyo3::intern!(py, "resultType"), t.as_str())?;
    }
    Ok(Some(raw))
}

/// A tool's result as `CallToolResult.from_dict(raw)` makes it (without its per-field
/// lookups), or the raw dict before the class is registered.
pub fn call_tool_result<'py>(
    py: Python<'py>,
    result: &mcpmux::model::CallToolResult,
) -> PyResult<Bound<'py, PyAny>> {
    let raw = match plain_text_raw(py, result)? {
        Some(raw) => raw,
        None => {
            let value = serde_json::to_value(result)
                .map_err(|e| crate::errors::invalid(format!("cannot encode result: {e}")))?;
            json_to_py(py, &value)?.cast_into::<PyDict>()?
        }
    };
    let Some(class) = CALL_TOOL_RESULT.get(py) else {
        return Ok(raw.into_any());
    };
    // A frozen dataclass: its fields live in the instance's `__dict__`, which `__init__`
    // would fill through `object.__setattr__` one by one.
    let object_new = OBJECT_NEW.get_or_try_init(py, || {
        Ok::<_, PyErr>(
            py.import("builtins")?
                .getattr("object")?
                .getattr("__new__")?
                .unbind(),
        )
    })?;
    let instance = object_new.bind(py).call1((class.bind(py),))?;
    let fields = instance
        .getattr(pyo3::intern!(py, "__dict__"))?
        .cast_into::<PyDict>()?;
    let content = match raw.get_item(pyo3::intern!(py, "content"))? {
        Some(c) => c,
        None => PyList::empty(py).into_any(),
    };
    let get = |key: &Bound<'py, PyString>| -> PyResult<Bound<'py, PyAny>> {
        Ok(raw
            .get_item(key)?
            .unwrap_or_else(|| py.None().into_bound(py)))
    };
    fields.set_item(pyo3::intern!(py, "_raw"), &raw)?;
    fields.set_item(pyo3::intern!(py, "content"), content)?;
    fields.set_item(
        pyo3::intern!(py, "structured_content"),
        get(pyo3::intern!(py, "structuredContent"))?,
    )?;
    fields.set_item(
        pyo3::intern!(py, "is_error"),
        get(pyo3::intern!(py, "isError"))?,
    )?;
    fields.set_item(pyo3::intern!(py, "meta"), get(pyo3::intern!(py, "_meta"))?)?;
    Ok(instance)
}
