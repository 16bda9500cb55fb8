//! `NativePool`: core's `Pool` behind awaitables. Inputs and outputs cross as JSON text (core's
//! serde shapes); the Python package turns them into keyword arguments and dataclasses.

use std::mem::ManuallyDrop;
use std::sync::Arc;
use std::time::Duration;

use mcpmux::host::answers;
use mcpmux::{CallOptions, Pool, PoolOptions, Progress, ServerInput, ServerPatch};
use pyo3::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::callbacks::{PyCallback, one};
use crate::errors::{error, invalid, to_py};
use crate::events::{NativeEvents, NativeSubscription};
use crate::runtime::{InRuntime, attach, awaitable, running_loop, runtime};

/// One open pool. Everything async returns an awaitable of the running event loop.
#[pyclass(frozen, module = "mcpmux._native")]
pub struct NativePool {
    /// Never dropped in a forked child: its connections and child processes are the parent's.
    pool: ManuallyDrop<Pool>,
    /// The process that opened it.
    pid: u32,
    /// Cancelled by `close`, ending every event stream of this pool.
    pub(crate) closed: CancellationToken,
}

impl Drop for NativePool {
    fn drop(&mut self) {
        if self.pid == crate::runtime::pid() {
            // Connections stop their tasks on drop, which needs the runtime's context.
            let _ctx = runtime().enter();
            // SAFETY: dropped once, here, and never used again.
            unsafe { ManuallyDrop::drop(&mut self.pool) };
        }
    }
}

pub(crate) fn to_json<T: Serialize>(value: &T) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| invalid(format!("cannot encode result: {e}")))
}

pub(crate) fn from_json<T: DeserializeOwned>(what: &str, text: &str) -> PyResult<T> {
    serde_json::from_str(text).map_err(|e| invalid(format!("invalid {what}: {e}")))
}

pub(crate) fn json_result<T: Serialize>(r: mcpmux::Result<T>) -> PyResult<String> {
    to_json(&r.map_err(to_py)?)
}

/// Opens a pool with options given as core's camelCase JSON.
#[pyfunction]
pub fn open_pool(py: Python<'_>, options_json: String) -> PyResult<Bound<'_, PyAny>> {
    let options: PoolOptions = from_json("pool options", &options_json)?;
    awaitable(py, async move {
        let pool = Pool::open(options).await.map_err(to_py)?;
        Ok(NativePool {
            pool: ManuallyDrop::new(pool),
            pid: crate::runtime::pid(),
            closed: CancellationToken::new(),
        })
    })
}

/// Core's default pool options, as camelCase JSON.
#[pyfunction]
pub fn default_options() -> PyResult<String> {
    to_json(&PoolOptions::default())
}

impl NativePool {
    /// The pool, unless this is a forked child of the process that opened it.
    pub(crate) fn pool(&self) -> PyResult<Pool> {
        if self.pid != crate::runtime::pid() {
            return Err(error(
                "invalid_argument",
                format!(
                    "this pool was opened in process {} before a fork; open a new pool in this process",
                    self.pid
                ),
            ));
        }
        Ok((*self.pool).clone())
    }
}

#[pymethods]
impl NativePool {
    /// The config file's path.
    fn config_path(&self) -> PyResult<String> {
        Ok(self.pool()?.config_path().display().to_string())
    }

    /// The options the pool runs with, as camelCase JSON.
    fn options(&self) -> PyResult<String> {
        to_json(self.pool()?.options())
    }

    /// Calls in flight.
    fn in_flight(&self) -> PyResult<usize> {
        Ok(self.pool()?.in_flight())
    }

    /// Connection state of every visible server, as JSON.
    fn server_states(&self) -> PyResult<String> {
        to_json(&self.pool()?.server_states())
    }

    /// `limit` as the caller gave it (core says what `None` and 0 mean).
    #[pyo3(signature = (query, limit=None))]
    fn search_tools<'py>(
        &self,
        py: Python<'py>,
        query: String,
        limit: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let limit = limit.map(count);
        awaitable(py, async move {
            json_result(pool.search_tools(&query, limit).await)
        })
    }

    /// Lists the servers whose tools are not known yet (`filter_json`: core's `ServerFilter`,
    /// default all); the servers that could not be listed, as JSON.
    #[pyo3(signature = (filter_json=None))]
    fn ensure_catalog<'py>(
        &self,
        py: Python<'py>,
        filter_json: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let filter: mcpmux::ServerFilter = match filter_json {
            None => Default::default(),
            Some(text) => from_json("server filter", &text)?,
        };
        let pool = self.pool()?;
        awaitable(py, async move {
            json_result(Ok(pool.ensure_catalog(&filter).await))
        })
    }

    fn known_tools(&self) -> PyResult<String> {
        to_json(&self.pool()?.known_tools())
    }

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

    /// With `refresh`, the servers are asked again past every cache.
    #[pyo3(signature = (server=None, refresh=false))]
    fn list_tools<'py>(
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
            json_result(pool.list_tools_with(server.as_deref(), options).await)
        })
    }

    /// Calls a tool. `timeout` is in seconds; `on_progress(progress, total, message)` runs on
    /// the calling event loop's thread; `options_json` is core's `CallSettings` (`validate`,
    /// `meta`, `maxTotalMs`), `None` for none. Cancelling the awaitable cancels the call in
    /// core, which tells the server (`notifications/cancelled`).
    /// `on_task(task_id, status, status_message)`, on the same thread, hears each status of the
    /// task the server runs the call as, if it does.
    #[pyo3(signature = (tool_id, arguments, timeout=None, on_progress=None, options_json=None, on_task=None))]
    #[allow(
        clippy::too_many_arguments,
        reason = "one per option of a call, from Python"
    )]
    fn call_tool<'py>(
        &self,
        py: Python<'py>,
        tool_id: String,
        arguments: &Bound<'py, PyAny>,
        timeout: Option<f64>,
        on_progress: Option<Py<PyAny>>,
        options_json: Option<String>,
        on_task: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let arguments = crate::convert::arguments(arguments)?;
        let on_task = match on_task {
            None => None,
            Some(callback) => {
                let event_loop = running_loop(py)?.unbind();
                let f: mcpmux::TaskFn = Arc::new(move |u: mcpmux::TaskUpdate| {
                    attach(|py| {
                        let _ = event_loop.call_method1(
                            py,
                            "call_soon_threadsafe",
                            (
                                callback.clone_ref(py),
                                u.task_id,
                                u.status,
                                u.status_message,
                            ),
                        );
                    });
                });
                Some(f)
            }
        };
        let timeout = timeout_of(timeout)?;
        let settings: Option<mcpmux::CallSettings> = options_json
            .map(|text| from_json("call options", &text))
            .transpose()?;
        let with_progress = on_progress.is_some();
        let on_progress = on_progress
            .map(|callback| progress_fn(py, callback))
            .transpose()?;
        // Boxed at once: the call's state machine is large, and every move would copy it.
        // Cancelling the awaitable drops this future, and dropping a call in flight is what
        // sends the server `notifications/cancelled`: no cancellation token is needed.
        let call: crate::runtime::BoxFuture = Box::pin(async move {
            let mut options = CallOptions {
                timeout,
                on_progress,
                on_task,
                ..Default::default()
            };
            if let Some(settings) = settings {
                settings.apply(&mut options);
            }
            let result = pool.call_tool(&tool_id, arguments, options).await;
            // The Python object is built on the loop thread, which holds the GIL already.
            Box::new(move |py: Python<'_>| match result {
                Ok(r) => crate::convert::call_tool_result(py, &r).map(Bound::unbind),
                Err(e) => Err(to_py(e)),
            }) as crate::runtime::Deliver
        });
        #[cfg(unix)]
        {
            if with_progress {
                // Polled as a tokio task, as before: core's rmcp path routes a progress
                // notification from a task of its own, which a call polled on the loop can
                // outrun (the last notification would find the route gone).
                crate::completion::future_on_runtime(py, call)
            } else {
                crate::completion::future_on_loop(py, call)
            }
        }
        #[cfg(not(unix))]
        {
            crate::runtime::legacy_awaitable(py, async move {
                Ok(crate::runtime::Delivered(call.await))
            })
        }
    }

    /// `call_tool` started in the background, followed by the `NativeTaskRun` it returns
    /// (core's `TaskRun`; `TaskRun` in `_pool.py` is its Python face).
    #[pyo3(signature = (tool_id, arguments, timeout=None, on_progress=None, options_json=None))]
    fn start_task(
        &self,
        py: Python<'_>,
        tool_id: String,
        arguments: &Bound<'_, PyAny>,
        timeout: Option<f64>,
        on_progress: Option<Py<PyAny>>,
        options_json: Option<String>,
    ) -> PyResult<crate::tasks::NativeTaskRun> {
        let pool = self.pool()?;
        let arguments = crate::convert::arguments(arguments)?;
        let mut options = CallOptions {
            timeout: timeout_of(timeout)?,
            on_progress: on_progress
                .map(|callback| progress_fn(py, callback))
                .transpose()?,
            ..Default::default()
        };
        if let Some(text) = options_json {
            from_json::<mcpmux::CallSettings>("call options", &text)?.apply(&mut options);
        }
        let _ctx = runtime().enter();
        Ok(crate::tasks::NativeTaskRun::new(
            pool.start_task(&tool_id, arguments, options),
        ))
    }

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

    /// The MCP App view of a tool, read and checked, as JSON.
    fn app_view<'py>(&self, py: Python<'py>, tool_id: String) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(
            py,
            async move { json_result(pool.app_view(&tool_id).await) },
        )
    }

    /// A view's call of its server's tool `name`.
    fn app_call<'py>(
        &self,
        py: Python<'py>,
        view_json: String,
        name: String,
        arguments_json: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let view: mcpmux::AppView = from_json("view", &view_json)?;
        let arguments: serde_json::Value = from_json("tool arguments", &arguments_json)?;
        awaitable(py, async move {
            json_result(
                pool.app_call(&view, &name, arguments, CallOptions::default())
                    .await,
            )
        })
    }

    /// A view's read of its server's resource `uri`.
    fn app_read_resource<'py>(
        &self,
        py: Python<'py>,
        view_json: String,
        uri: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let view: mcpmux::AppView = from_json("view", &view_json)?;
        awaitable(py, async move {
            json_result(pool.app_read_resource(&view, &uri).await)
        })
    }

    /// The bridge of a view being rendered.
    fn app_bridge(
        &self,
        view_json: String,
        host_context_json: String,
    ) -> PyResult<crate::apps::NativeAppBridge> {
        let view: mcpmux::AppView = from_json("view", &view_json)?;
        let context: serde_json::Value = from_json("host context", &host_context_json)?;
        Ok(crate::apps::NativeAppBridge::new(
            self.pool()?.app_bridge(view, context),
        ))
    }

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

    // --- host tools, host requests, recipes, conversations ------------------------------

    /// Registers a host tool whose handler is `adapter(arguments_json) -> result_json`, an
    /// `async def` run on `event_loop`. Returns the tool as listed (JSON).
    fn register_tool(
        &self,
        name: String,
        description: String,
        schema_json: String,
        event_loop: Py<PyAny>,
        adapter: Py<PyAny>,
    ) -> PyResult<String> {
        let pool = self.pool()?;
        let input_schema: serde_json::Value = from_json("input schema", &schema_json)?;
        let callback = PyCallback::new(event_loop, adapter);
        let tool_name = name.clone();
        let handler: mcpmux::HostToolHandler = Arc::new(move |arguments: serde_json::Value| {
            let answer = callback.call(one(arguments.to_string()));
            let tool_name = tool_name.clone();
            Box::pin(async move {
                let text = answer.await?;
                read_answer(
                    &text,
                    answers::tool_result,
                    &format!("host tool '{tool_name}'"),
                )
            })
        });
        let info = pool
            .register_tool(mcpmux::HostTool {
                name,
                description,
                input_schema,
                handler,
            })
            .map_err(to_py)?;
        to_json(&info)
    }

    /// Removes a host tool; whether it was there.
    fn unregister_tool(&self, name: &str) -> PyResult<bool> {
        Ok(self.pool()?.unregister_tool(name))
    }

    /// Sets (or with `None`, removes) the sampling handler: `adapter(request_json)` answers
    /// a `CreateMessageResult` as JSON. With `tools`, it takes the request's tools and may
    /// answer `tool_use` content (declared to servers as `sampling.tools`).
    #[pyo3(signature = (event_loop=None, adapter=None, tools=false))]
    fn set_sampling_handler(
        &self,
        event_loop: Option<Py<PyAny>>,
        adapter: Option<Py<PyAny>>,
        tools: bool,
    ) -> PyResult<()> {
        let pool = self.pool()?;
        let handler = match (event_loop, adapter) {
            (Some(event_loop), Some(adapter)) => {
                let callback = PyCallback::new(event_loop, adapter);
                let h: mcpmux::SamplingHandler = Arc::new(move |req| {
                    let answer = callback.call(one(host_request_json(&req)));
                    Box::pin(async move {
                        let text = answer.await?;
                        read_answer(&text, answers::sampling_result, "the sampling handler")
                    })
                });
                Some(h)
            }
            _ => None,
        };
        pool.set_sampling_handler_with(handler, mcpmux::SamplingSupport { tools });
        Ok(())
    }

    /// Sets (or with `None`, removes) the elicitation handler: `adapter(request_json)`
    /// answers an `ElicitResult` as JSON.
    #[pyo3(signature = (event_loop=None, adapter=None))]
    fn set_elicitation_handler(
        &self,
        event_loop: Option<Py<PyAny>>,
        adapter: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let pool = self.pool()?;
        let handler = match (event_loop, adapter) {
            (Some(event_loop), Some(adapter)) => {
                let callback = PyCallback::new(event_loop, adapter);
                let h: mcpmux::ElicitationHandler = Arc::new(move |req| {
                    let answer = callback.call(one(host_request_json(&req)));
                    Box::pin(async move {
                        let text = answer.await?;
                        read_answer(
                            &text,
                            answers::elicitation_result,
                            "the elicitation handler",
                        )
                    })
                });
                Some(h)
            }
            _ => None,
        };
        pool.set_elicitation_handler(handler);
        Ok(())
    }

    /// Sets (or with `None`, removes) the roots handler: `adapter(request_json)` answers the
    /// roots (a JSON list of `{"uri", "name"?}`) for one server's `roots/list`; without
    /// one, the lists set with `set_roots` / `set_server_roots` answer.
    #[pyo3(signature = (event_loop=None, adapter=None))]
    fn set_roots_handler(
        &self,
        event_loop: Option<Py<PyAny>>,
        adapter: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let pool = self.pool()?;
        let handler = match (event_loop, adapter) {
            (Some(event_loop), Some(adapter)) => {
                let callback = PyCallback::new(event_loop, adapter);
                let h: mcpmux::RootsHandler = Arc::new(move |req| {
                    let answer = callback.call(one(host_request_json(&req)));
                    Box::pin(async move {
                        let text = answer.await?;
                        read_answer(&text, answers::roots, "the roots handler")
                    })
                });
                Some(h)
            }
            _ => None,
        };
        pool.set_roots_handler(handler);
        Ok(())
    }

    /// Tells every connected server that the roots changed (they ask again).
    fn notify_roots_changed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move {
            pool.notify_roots_changed().await;
            Ok(())
        })
    }

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

    /// The pool's roots, as JSON.
    fn roots(&self) -> PyResult<String> {
        to_json(&self.pool()?.roots())
    }

    /// Replaces the pool's roots (JSON list of `{"uri", "name"?}`); servers are told.
    fn set_roots<'py>(&self, py: Python<'py>, roots_json: String) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        #[allow(
            deprecated,
            reason = "roots are deprecated by SEP-2577 but servers use them"
        )]
        let roots: Vec<mcpmux::model::Root> = from_json("roots", &roots_json)?;
        awaitable(py, async move {
            pool.set_roots(roots).await;
            Ok(())
        })
    }

    /// Gives one server its own roots; `None` returns it to the pool's.
    #[pyo3(signature = (server, roots_json=None))]
    fn set_server_roots<'py>(
        &self,
        py: Python<'py>,
        server: String,
        roots_json: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        #[allow(
            deprecated,
            reason = "roots are deprecated by SEP-2577 but servers use them"
        )]
        let roots: Option<Vec<mcpmux::model::Root>> = match roots_json {
            None => None,
            Some(text) => Some(from_json("roots", &text)?),
        };
        awaitable(py, async move {
            pool.set_server_roots(&server, roots).await.map_err(to_py)
        })
    }

    /// Adds a recipe (markdown with front matter); returns it as JSON.
    fn register_recipe(&self, markdown: &str) -> PyResult<String> {
        json_result(self.pool()?.register_recipe(markdown))
    }

    fn list_recipes(&self) -> PyResult<String> {
        to_json(&self.pool()?.recipes().list())
    }

    fn get_recipe(&self, name: &str) -> PyResult<Option<String>> {
        self.pool()?
            .recipes()
            .get(name)
            .map(|r| to_json(&r))
            .transpose()
    }

    #[pyo3(signature = (query, limit=None))]
    fn search_recipes(&self, query: &str, limit: Option<i64>) -> PyResult<String> {
        json_result(self.pool()?.search_recipes(query, limit.map(count)))
    }

    /// The canvas's widgets, as JSON.
    fn canvas(&self) -> PyResult<String> {
        to_json(&self.pool()?.canvas().to_json())
    }

    /// One layer per server (and the host's tools), as JSON, after listing the servers
    /// whose tools are not known yet.
    fn layers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        awaitable(py, async move { json_result(Ok(pool.layers().await)) })
    }

    /// The layers as known now, without connecting anything, as JSON.
    fn known_layers(&self) -> PyResult<String> {
        to_json(&self.pool()?.known_layers())
    }

    /// A conversation over the servers `filter_json` (core's `ServerFilter`) lets through.
    #[pyo3(signature = (filter_json=None))]
    fn conversation(&self, filter_json: Option<String>) -> PyResult<NativeConversation> {
        let filter = match filter_json {
            None => Default::default(),
            Some(text) => from_json("server filter", &text)?,
        };
        Ok(NativeConversation {
            inner: InRuntime::new(Arc::new(self.pool()?.conversation_with(filter))),
        })
    }

    /// A new subscription to this pool's events, read with `recv()`.
    fn events(&self) -> PyResult<NativeEvents> {
        Ok(NativeEvents::new(
            self.pool()?.events(),
            self.closed.clone(),
        ))
    }

    /// Calls `callback(event_json)` on `event_loop`'s thread for every event, until the
    /// returned subscription is cancelled, the pool is closed or the loop is closed.
    fn subscribe(
        &self,
        event_loop: Py<PyAny>,
        callback: Py<PyAny>,
    ) -> PyResult<NativeSubscription> {
        Ok(NativeSubscription::start(
            self.pool()?.events(),
            self.closed.clone(),
            event_loop,
            callback,
        ))
    }

    /// Serves the pool as one MCP server over Streamable HTTP (`settings_json`: core's
    /// `HttpServeSettings`); answers a `NativeHttpServer`.
    fn serve_http<'py>(&self, py: Python<'py>, settings_json: &str) -> PyResult<Bound<'py, PyAny>> {
        crate::serve::serve_http(py, self, settings_json)
    }

    /// Closes the pool (see core's `Pool::close`); event streams end after the last events.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool()?;
        let closed = self.closed.clone();
        awaitable(py, async move {
            pool.close().await;
            closed.cancel();
            Ok(())
        })
    }
}

/// A host request (sampling, elicitation, roots) as the Python handler gets it.
/// A request without params (`roots/list`) gets an empty `params` object.
/// A count a Python caller gave; a negative one is passed on as 0, which core refuses.
fn count(n: i64) -> usize {
    usize::try_from(n).unwrap_or(0)
}

fn host_request_json<P: Serialize>(req: &mcpmux::HostRequest<P>) -> String {
    serde_json::to_string(req).unwrap_or_default()
}

/// Reads what a Python adapter answered (JSON text) as core's host contract says.
fn read_answer<T>(
    text: &str,
    read: impl FnOnce(serde_json::Value) -> Result<T, String>,
    who: &str,
) -> Result<T, String> {
    let value =
        serde_json::from_str(text).map_err(|e| format!("the answer of {who} is not JSON ({e})"))?;
    read(value).map_err(|e| format!("the answer of {who} was refused: {e}"))
}

/// What core makes of a host's answer of `kind` (the contract table's `accepted`), as JSON;
/// a refused answer raises `InvalidArgumentError`.
#[pyfunction]
pub fn read_host_answer(kind: &str, answer_json: &str) -> PyResult<String> {
    let kind: answers::AnswerKind = serde_json::from_value(kind.into()).map_err(|_| {
        invalid(format!(
            "answer kind must be tool_result, approval, sampling, elicitation, roots or \
             provider_reply, not {kind:?}"
        ))
    })?;
    let value = from_json("answer", answer_json)?;
    to_json(&answers::read(kind, value).map_err(to_py)?)
}

/// A Python progress callback, called on `py`'s running loop with each update.
fn progress_fn(py: Python<'_>, callback: Py<PyAny>) -> PyResult<mcpmux::ProgressFn> {
    let event_loop = running_loop(py)?.unbind();
    Ok(Arc::new(move |p: Progress| {
        attach(|py| {
            // A closed loop means nobody waits for the call any more.
            let _ = event_loop.call_method1(
                py,
                "call_soon_threadsafe",
                (callback.clone_ref(py), p.progress, p.total, p.message),
            );
        });
    }))
}

/// Parses a timeout in seconds.
pub(crate) fn timeout_of(timeout: Option<f64>) -> PyResult<Option<Duration>> {
    match timeout {
        None => Ok(None),
        Some(t) if t.is_finite() && t > 0.0 => Ok(Some(Duration::from_secs_f64(t))),
        Some(t) => Err(invalid(format!(
            "timeout must be a positive number of seconds, not {t}"
        ))),
    }
}

/// One conversation: discovery tools first, a server's tools after its first use.
#[pyclass(frozen, module = "mcpmux._native")]
pub struct NativeConversation {
    inner: InRuntime<Arc<mcpmux::Conversation>>,
}

#[pymethods]
impl NativeConversation {
    /// The function definitions to offer a model now, as JSON.
    fn tools(&self) -> PyResult<String> {
        to_json(&self.inner.tools())
    }

    /// Ids of the servers activated so far, as JSON.
    fn activated(&self) -> PyResult<String> {
        to_json(&self.inner.activated())
    }

    /// Calls a function of the conversation (discovery answered locally).
    #[pyo3(signature = (name, arguments_json, timeout=None))]
    fn call<'py>(
        &self,
        py: Python<'py>,
        name: String,
        arguments_json: String,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let inner = Arc::clone(&self.inner);
        let arguments: serde_json::Value = from_json("tool arguments", &arguments_json)?;
        let timeout = timeout_of(timeout)?;
        let cancel = CancellationToken::new();
        let guard = cancel.clone().drop_guard();
        awaitable(py, async move {
            let _guard = guard;
            let options = CallOptions {
                timeout,
                cancel: Some(cancel),
                ..Default::default()
            };
            json_result(inner.call(&name, arguments, options).await)
        })
    }
}
