//! Providers and the agent: core's `mcpmux::agent` behind awaitables. Requests, responses,
//! options and results cross as JSON; Python callbacks through `callbacks`.

use std::sync::Arc;

use mcpmux::agent::{
    Agent, AgentOptions, ApprovalRequest, ApproveFn, HostChat, HostChatFn, HostProvider, Provider,
    ProviderConfig, RunOptions, RunParams,
};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use tokio_util::sync::CancellationToken;

use crate::callbacks::{NativeTokenSink, PyCallback, TokenStream, one};
use crate::errors::{invalid, to_py};
use crate::pool::NativePool;
use crate::runtime::{InRuntime, awaitable};

fn from_json<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> PyResult<T> {
    serde_json::from_str(text).map_err(|e| invalid(format!("invalid {what}: {e}")))
}

fn to_json<T: serde::Serialize>(value: &T) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| invalid(format!("cannot encode result: {e}")))
}

/// A model provider: made from a config, or implemented in Python.
#[pyclass(frozen, module = "mcpmux._native")]
pub struct NativeProvider {
    inner: Arc<dyn Provider>,
}

#[pymethods]
impl NativeProvider {
    fn name(&self) -> String {
        self.inner.name().to_string()
    }

    fn model(&self) -> String {
        self.inner.model()
    }

    fn set_model(&self, model: &str) {
        self.inner.set_model(model);
    }
}

/// A provider from core's camelCase `ProviderConfig` JSON (`type`: openai, remote, anthropic,
/// ollama).
#[pyfunction]
pub fn create_provider(config_json: String) -> PyResult<NativeProvider> {
    let config: ProviderConfig = from_json("provider config", &config_json)?;
    Ok(NativeProvider {
        inner: mcpmux::agent::create_provider(config).map_err(to_py)?,
    })
}

/// A provider implemented in Python: `adapter(request_json, on_token) -> response_json`, an
/// `async def` run on `event_loop`.
#[pyfunction]
pub fn host_provider(
    name: String,
    model: String,
    event_loop: Py<PyAny>,
    adapter: Py<PyAny>,
) -> NativeProvider {
    let callback = PyCallback::new(event_loop, adapter);
    let chat: HostChatFn = Arc::new(move |call: HostChat| {
        let request = serde_json::to_string(&call.request).unwrap_or_default();
        let on_token = call.on_token;
        let answer = callback.call(move |py| {
            let sink = Py::new(py, NativeTokenSink::new(on_token))?;
            PyTuple::new(
                py,
                [
                    request.into_pyobject(py)?.into_any(),
                    sink.into_any().into_bound(py),
                ],
            )
        });
        Box::pin(async move {
            let text = answer.await?;
            serde_json::from_str(&text)
                .map_err(|e| format!("the provider answered text that is not JSON ({e})"))
        })
    });
    NativeProvider {
        inner: Arc::new(HostProvider::new(name, model, chat)),
    }
}

/// A Python approval callback: `adapter(request_json)` answers the approval as JSON, read as
/// core's host contract says.
fn approve_fn(event_loop: Py<PyAny>, adapter: Py<PyAny>) -> ApproveFn {
    let callback = PyCallback::new(event_loop, adapter);
    Arc::new(move |request: ApprovalRequest| {
        let answer = callback.call(one(serde_json::to_string(&request).unwrap_or_default()));
        Box::pin(async move {
            // Core denies what failed or cannot be read; the adapter (`_host.py`) reports both.
            let value = answer
                .await
                .map_err(|e| e.to_string())
                .and_then(|text| serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}")));
            mcpmux::host::answers::approval_or_deny(value)
        })
    })
}

/// An agent over a pool and a provider.
#[pyclass(frozen, module = "mcpmux._native")]
pub struct NativeAgent {
    inner: InRuntime<Arc<Agent>>,
}

#[pymethods]
impl NativeAgent {
    /// `options_json`: core's camelCase `AgentOptions`.
    #[new]
    fn new(pool: &NativePool, provider: &NativeProvider, options_json: String) -> PyResult<Self> {
        let options: AgentOptions = from_json("agent options", &options_json)?;
        let pool = pool.pool()?;
        Ok(NativeAgent {
            inner: InRuntime::new(Arc::new(Agent::new(pool, provider.inner.clone(), options))),
        })
    }

    fn model(&self) -> String {
        self.inner.provider().model()
    }

    fn provider_name(&self) -> String {
        self.inner.provider().name().to_string()
    }

    fn set_model(&self, model: &str) {
        self.inner.set_model(model);
    }

    fn system_prompt(&self) -> String {
        self.inner.system_prompt()
    }

    /// Runs the loop for one prompt. `params_json`: core's `RunParams`; `on_token(text)` runs
    /// on `event_loop`, every token before the result; `approve` is an adapter (see
    /// `approve_fn`). Cancelling the awaitable cancels the run (calls in flight included).
    #[pyo3(signature = (prompt, params_json, event_loop, on_token=None, approve=None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        prompt: String,
        params_json: String,
        event_loop: Py<PyAny>,
        on_token: Option<Py<PyAny>>,
        approve: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let params: RunParams = from_json("run parameters", &params_json)?;
        let tokens = on_token.map(|cb| TokenStream::start(event_loop.clone_ref(py), cb));
        let approve = approve.map(|a| approve_fn(event_loop, a));
        let agent = Arc::clone(&self.inner);
        let cancel = CancellationToken::new();
        let guard = cancel.clone().drop_guard();
        awaitable(py, async move {
            let _guard = guard;
            let options = RunOptions {
                params,
                on_token: tokens.as_ref().map(TokenStream::token_fn),
                approve,
                cancel: Some(cancel),
            };
            let result = agent.run(&prompt, options).await;
            if let Some(tokens) = &tokens {
                tokens.flush().await;
            }
            to_json(&result.map_err(to_py)?)
        })
    }

    /// Routes servers' sampling requests to this agent's provider; with `approve` (an
    /// adapter on `event_loop`), each request is shown to it first.
    #[pyo3(signature = (event_loop=None, approve=None))]
    fn handle_sampling(
        &self,
        event_loop: Option<Py<PyAny>>,
        approve: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let approve = match (event_loop, approve) {
            (Some(l), Some(a)) => Some(approve_fn(l, a)),
            _ => None,
        };
        self.inner.handle_sampling(approve);
        Ok(())
    }
}
