//! OAuth for HTTP servers: the Python authorization callback and a token store written in
//! Python, as core's `OAuthHandler` and `TokenStore`. Credentials cross as JSON text and
//! never appear in error messages (they are secrets).

use std::sync::Arc;

use mcpmux::auth::{AuthorizationPrompt, AuthorizeFn, OAuthHandler, TokenStore};
use mcpmux::host::BoxFuture;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use serde_json::Value;

use crate::callbacks::{PyCallback, one};
use crate::errors::{invalid, to_py};
use crate::pool::NativePool;
use crate::runtime::awaitable;

/// `adapter(prompt_json) -> json string of the redirect URL` (an exception is the failure).
pub fn handler(event_loop: Py<PyAny>, adapter: Py<PyAny>, redirect_uri: String) -> OAuthHandler {
    let callback = PyCallback::new(event_loop, adapter);
    let authorize: AuthorizeFn = Arc::new(move |prompt: AuthorizationPrompt| {
        let text = serde_json::to_string(&prompt).unwrap_or_default();
        let answer = callback.call(one(text));
        Box::pin(async move {
            let text = answer.await?;
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::String(url)) => Ok(url),
                _ => Err("the OAuth handler did not answer a redirect URL".into()),
            }
        })
    });
    OAuthHandler {
        redirect_uri,
        authorize,
    }
}

/// A token store whose `adapter(op, server_id, credentials_json) -> json` is written in Python
/// (`op` is `load`, `save` or `clear`; `load` answers the credentials or `null`).
pub struct PyTokenStore {
    callback: Arc<PyCallback>,
}

impl PyTokenStore {
    pub fn new(event_loop: Py<PyAny>, adapter: Py<PyAny>) -> Self {
        PyTokenStore {
            callback: PyCallback::new(event_loop, adapter),
        }
    }

    fn call(
        &self,
        op: &'static str,
        server_id: &str,
        credentials: String,
    ) -> BoxFuture<Result<Value, String>> {
        let server_id = server_id.to_string();
        let answer = self
            .callback
            .call(move |py: Python<'_>| PyTuple::new(py, [op.to_string(), server_id, credentials]));
        Box::pin(async move {
            let text = answer.await?;
            // Not echoed: the text may hold credentials.
            serde_json::from_str(&text)
                .map_err(|e| format!("the token store's {op} answered invalid JSON ({e})"))
        })
    }
}

impl TokenStore for PyTokenStore {
    fn load(&self, server_id: &str) -> BoxFuture<Result<Option<Value>, String>> {
        let answer = self.call("load", server_id, "null".into());
        Box::pin(async move {
            Ok(match answer.await? {
                Value::Null => None,
                v => Some(v),
            })
        })
    }

    fn save(&self, server_id: &str, credentials: Value) -> BoxFuture<Result<(), String>> {
        let answer = self.call("save", server_id, credentials.to_string());
        Box::pin(async move { answer.await.map(drop) })
    }

    fn clear(&self, server_id: &str) -> BoxFuture<Result<(), String>> {
        let answer = self.call("clear", server_id, "null".into());
        Box::pin(async move { answer.await.map(drop) })
    }
}

#[pymethods]
impl NativePool {
    /// Sets how users authorize OAuth-protected servers: `adapter(prompt_json)` answers the
    /// redirect URL (JSON text); with `None`, the default (browser and loopback listener).
    #[pyo3(signature = (event_loop=None, adapter=None, redirect_uri=None))]
    fn set_oauth_handler(
        &self,
        event_loop: Option<Py<PyAny>>,
        adapter: Option<Py<PyAny>>,
        redirect_uri: Option<String>,
    ) -> PyResult<()> {
        let pool = self.pool()?;
        let handler = match (event_loop, adapter) {
            (Some(event_loop), Some(adapter)) => {
                let redirect_uri = redirect_uri
                    .ok_or_else(|| invalid("an OAuth handler needs its redirect_uri"))?;
                Some(crate::oauth::handler(event_loop, adapter, redirect_uri))
            }
            _ => None,
        };
        pool.set_oauth_handler(handler);
        Ok(())
    }

    /// Keeps OAuth tokens with a Python store: `adapter(op, server_id, credentials_json)`.
    fn set_token_store(&self, event_loop: Py<PyAny>, adapter: Py<PyAny>) -> PyResult<()> {
        let store = crate::oauth::PyTokenStore::new(event_loop, adapter);
        self.pool()?.set_token_store(Arc::new(store));
        Ok(())
    }

    /// Keeps OAuth tokens in a JSON file (mode 0600).
    fn set_file_token_store(&self, path: std::path::PathBuf) -> PyResult<()> {
        let store = mcpmux::auth::FileTokenStore::new(path);
        self.pool()?.set_token_store(Arc::new(store));
        Ok(())
    }

    /// Keeps OAuth tokens in memory only.
    fn set_memory_token_store(&self) -> PyResult<()> {
        let store = mcpmux::auth::MemoryTokenStore::default();
        self.pool()?.set_token_store(Arc::new(store));
        Ok(())
    }

    /// Forgets a server's OAuth tokens and disconnects it.
    fn logout<'py>(&self, py: Python<'py>, server: String) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move { pool.logout(&server).await.map_err(to_py) })
    }
}
