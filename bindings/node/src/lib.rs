//! The native half of the `mcpmux` npm package. It only marshals: every input arrives as a JSON
//! string that core deserializes, every output leaves as core's JSON, and every error carries
//! core's stable error code so the JavaScript layer (`index.js`) can throw the right class.
//!
//! This module is internal; the public, documented API is `index.js` / `index.d.ts`.

mod agent;
mod bridge;
mod host;
mod oauth;

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpmux::{CallOptions, Pool, PoolOptions, ProgressFn, ServerInput, ServerPatch};
use napi::bindgen_prelude::{PromiseRaw, ToNapiValue};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Status};
use napi_derive::napi;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

/// Prefix of every error message this addon produces, followed by `<code>:`. `async fn`s cannot
/// set a custom `code` on the JS error (only a napi `Status`), so the code travels in the text.
const ERROR_PREFIX: &str = "mcpmux:";

/// A JS callback receiving one JSON string. Weak, so that it never keeps Node's event loop
/// alive by itself: an idle pool must not stop the process from exiting.
pub(crate) type JsonCallback = ThreadsafeFunction<String, (), String, Status, false, true>;

pub(crate) fn error(code: &str, message: impl std::fmt::Display) -> napi::Error {
    napi::Error::new(
        Status::GenericFailure,
        format!("{ERROR_PREFIX}{code}:{message}"),
    )
}

pub(crate) fn core_error(e: mcpmux::Error) -> napi::Error {
    error(e.kind().as_str(), e)
}

pub(crate) fn parse<T: DeserializeOwned>(what: &str, json: &str) -> napi::Result<T> {
    serde_json::from_str(json)
        .map_err(|e| error("invalid_argument", format!("invalid {what}: {e}")))
}

pub(crate) fn to_json<T: Serialize>(value: &T) -> napi::Result<String> {
    // Core's types always serialize; a failure here would be a bug worth reporting as such.
    serde_json::to_string(value)
        .map_err(|e| error("internal", format!("cannot encode result: {e}")))
}

/// Every event name core emits (core's `EVENT_NAMES`), so JS never keeps its own copy.
#[napi]
pub fn event_names() -> Vec<String> {
    mcpmux::EVENT_NAMES.iter().map(|s| s.to_string()).collect()
}

/// Opens a pool. `options` is core's `PoolOptions` as camelCase JSON (unknown keys are errors).
#[napi]
pub async fn open_pool(options: String) -> napi::Result<NativePool> {
    let options: PoolOptions = parse("pool options", &options)?;
    let pool = Pool::open(options).await.map_err(core_error)?;
    Ok(NativePool {
        shared: std::mem::ManuallyDrop::new(Arc::new(Shared {
            pool,
            calls: Mutex::new(HashMap::new()),
            next_call: AtomicU32::new(1),
            stop_events: CancellationToken::new(),
            bridge: Arc::default(),
            host_tools: Mutex::default(),
            canvas_listeners: Mutex::new(Some(std::collections::HashSet::new())),
        })),
        runtime: tokio::runtime::Handle::current(),
    })
}

/// One pool; see `Pool` in `index.d.ts`.
///
/// Every async method is a plain function returning a promise of a future that owns an `Arc`
/// of the state, never `&self`: when a worker is terminated, Node finalizes this object while
/// calls may still run, and a borrowed `&self` would then dangle.
#[napi]
pub struct NativePool {
    pub(crate) shared: std::mem::ManuallyDrop<Arc<Shared>>,
    /// The runtime the pool lives on. napi shuts its runtime down when the last JS environment
    /// goes away, before finalizers run; holding the handle lets `Drop` enter it anyway (work
    /// spawned on a runtime that is shut down is dropped, not a panic).
    pub(crate) runtime: tokio::runtime::Handle,
}

pub(crate) struct Shared {
    pool: Pool,
    /// Cancellation tokens of the calls in flight, by the id `beginCall` handed out. Registered
    /// synchronously so an abort that fires before the call's future first runs is not lost.
    pub(crate) calls: Mutex<HashMap<u32, CancellationToken>>,
    next_call: AtomicU32,
    /// Ends the event forwarding task.
    stop_events: CancellationToken,
    /// JS callbacks waiting for their answers.
    pub(crate) bridge: Arc<bridge::Bridge>,
    /// Host tools registered from JS: unregistered at close, which releases their JS functions.
    pub(crate) host_tools: Mutex<std::collections::HashSet<String>>,
    /// Canvas subscriptions made from JS, released at close (`None` once closed, so that no
    /// subscription slips in after).
    pub(crate) canvas_listeners: Mutex<Option<std::collections::HashSet<u64>>>,
}

impl Shared {
    /// A JS callback called through this pool's bridge.
    pub(crate) fn js_fn(&self, callback: JsonCallback) -> bridge::JsFn {
        bridge::JsFn {
            bridge: self.bridge.clone(),
            callback: Arc::new(callback),
        }
    }
}

impl Drop for NativePool {
    fn drop(&mut self) {
        self.shared.stop_events.cancel();
        // Core's connections may spawn clean-up tasks when dropped, which needs a runtime
        // context; the finalizer runs on the JS thread, outside of it.
        let _entered = self.runtime.enter();
        // SAFETY: `shared` is never used again; dropping it here, inside the runtime context,
        // instead of after this function returns is the point.
        unsafe { std::mem::ManuallyDrop::drop(&mut self.shared) };
    }
}

/// Removes a call's token when the call ends, however it ends.
pub(crate) struct CallGuard {
    pub(crate) shared: Arc<Shared>,
    pub(crate) id: u32,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.shared.calls.lock().unwrap().remove(&self.id);
    }
}

/// Runs `fut` on napi's runtime and returns its promise; rejections carry `ERROR_PREFIX` codes.
pub(crate) fn promise<'e, T, F>(env: &'e Env, fut: F) -> napi::Result<PromiseRaw<'e, T>>
where
    T: ToNapiValue + Send + 'static,
    F: Future<Output = napi::Result<T>> + Send + 'static,
{
    env.spawn_future(fut)
}

#[napi]
impl NativePool {
    pub(crate) fn shared(&self) -> Arc<Shared> {
        Arc::clone(&self.shared)
    }

    pub(crate) fn pool(&self) -> Pool {
        self.shared.pool.clone()
    }

    /// Forwards every pool event, as JSON, to `callback` until the pool closes.
    #[napi(ts_args_type = "callback: (json: string) => void")]
    pub fn on_event(&self, callback: JsonCallback) {
        let mut events = self.shared.pool.events();
        let stop = self.shared.stop_events.clone();
        napi::bindgen_prelude::spawn(async move {
            loop {
                let event = tokio::select! {
                    e = events.recv() => e,
                    _ = stop.cancelled() => None,
                };
                let Some(event) = event else { break };
                let Ok(json) = serde_json::to_string(&event) else {
                    continue;
                };
                // Closing: the JS environment is going away (worker exit); stop quietly.
                if callback.call(json, ThreadsafeFunctionCallMode::NonBlocking) == Status::Closing {
                    break;
                }
            }
        });
    }

    #[napi]
    pub fn config_path(&self) -> String {
        self.shared.pool.config_path().display().to_string()
    }

    #[napi]
    pub fn in_flight(&self) -> u32 {
        self.shared.pool.in_flight().try_into().unwrap_or(u32::MAX)
    }

    #[napi]
    pub fn server_states(&self) -> napi::Result<String> {
        to_json(&self.shared.pool.server_states())
    }

    #[napi]
    pub fn list_servers<'e>(&self, env: &'e Env) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.list_servers().await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn get_server<'e>(
        &self,
        env: &'e Env,
        server: String,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.get_server(&server).await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn add_server<'e>(
        &self,
        env: &'e Env,
        input: String,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            let input: ServerInput = parse("server", &input)?;
            to_json(&pool.add_server(input).await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn add_json<'e>(&self, env: &'e Env, text: String) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.add_json(&text).await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn update_server<'e>(
        &self,
        env: &'e Env,
        server: String,
        patch: String,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            let patch: ServerPatch = parse("server patch", &patch)?;
            to_json(
                &pool
                    .update_server(&server, patch)
                    .await
                    .map_err(core_error)?,
            )
        })
    }

    #[napi]
    pub fn remove_server<'e>(
        &self,
        env: &'e Env,
        server: String,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.remove_server(&server).await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn test_server<'e>(
        &self,
        env: &'e Env,
        server: String,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.test_server(&server).await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn test_config<'e>(
        &self,
        env: &'e Env,
        input: String,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            let input: ServerInput = parse("server", &input)?;
            to_json(&pool.test_config(input).await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn discover<'e>(
        &self,
        env: &'e Env,
        server: String,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.discover(&server).await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn connect<'e>(
        &self,
        env: &'e Env,
        server: String,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.connect(&server).await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn connect_all<'e>(&self, env: &'e Env) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move { to_json(&pool.connect_all().await) })
    }

    #[napi]
    pub fn disconnect<'e>(&self, env: &'e Env, server: String) -> napi::Result<PromiseRaw<'e, ()>> {
        let pool = self.pool();
        promise(env, async move {
            pool.disconnect(&server).await.map_err(core_error)
        })
    }

    #[napi]
    pub fn list_tools<'e>(
        &self,
        env: &'e Env,
        server: Option<String>,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(
                &pool
                    .list_tools(server.as_deref())
                    .await
                    .map_err(core_error)?,
            )
        })
    }

    /// Ranked tools for `query`, from the tools already known; never connects. Runs on the
    /// runtime because (re)building the index after tool lists change is not free.
    #[napi]
    pub fn search_tools<'e>(
        &self,
        env: &'e Env,
        query: String,
        limit: u32,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.search_tools(&query, limit as usize))
        })
    }

    /// Every tool known without connecting anything.
    #[napi]
    pub fn known_tools<'e>(&self, env: &'e Env) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move { to_json(&pool.known_tools()) })
    }

    /// Registers a call and returns its id, for `cancelCall` and `callTool`.
    #[napi]
    pub fn begin_call(&self) -> u32 {
        let id = self.shared.next_call.fetch_add(1, Ordering::Relaxed);
        let mut calls = self.shared.calls.lock().unwrap();
        calls.insert(id, CancellationToken::new());
        id
    }

    /// Cancels a call begun with `beginCall`; a finished or unknown call is ignored.
    #[napi]
    pub fn cancel_call(&self, id: u32) {
        if let Some(token) = self.shared.calls.lock().unwrap().get(&id) {
            token.cancel();
        }
    }

    /// Calls a tool. `id` comes from `beginCall`; `on_progress` gets each progress as JSON.
    #[napi(
        ts_args_type = "id: number, toolId: string, arguments: string, timeoutMs?: number | null, onProgress?: ((json: string) => void) | null"
    )]
    pub fn call_tool<'e>(
        &self,
        env: &'e Env,
        id: u32,
        tool_id: String,
        arguments: String,
        timeout_ms: Option<f64>,
        on_progress: Option<JsonCallback>,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let guard = CallGuard {
            shared: self.shared(),
            id,
        };
        promise(env, async move {
            let cancel = guard.shared.calls.lock().unwrap().get(&id).cloned();
            let arguments: serde_json::Value = parse("tool arguments", &arguments)?;
            let timeout = match timeout_ms {
                None => None,
                Some(ms) if ms.is_finite() && ms > 0.0 => {
                    Some(Duration::from_secs_f64(ms / 1000.0))
                }
                Some(ms) => {
                    return Err(error(
                        "invalid_argument",
                        format!("timeoutMs must be a positive number of milliseconds, not {ms}"),
                    ));
                }
            };
            let on_progress = on_progress.map(|cb| -> ProgressFn {
                Arc::new(move |p| {
                    if let Ok(json) = serde_json::to_string(&p) {
                        cb.call(json, ThreadsafeFunctionCallMode::NonBlocking);
                    }
                })
            });
            let options = CallOptions {
                timeout,
                on_progress,
                cancel,
            };
            let pool = &guard.shared.pool;
            let local = pool.tool_server(&tool_id).as_deref() == Some(mcpmux::local::LOCAL_SERVER);
            let cancel = options.cancel.clone().unwrap_or_default();
            let call = pool.call_tool(&tool_id, arguments, options);
            // Core does not watch the cancellation token of host (local) tools; dropping the
            // call here is what aborts the JS handler's signal.
            let result = if local {
                tokio::select! {
                    r = call => r,
                    _ = cancel.cancelled() => Err(mcpmux::Error::Cancelled),
                }
            } else {
                call.await
            };
            to_json(&result.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn list_resources<'e>(
        &self,
        env: &'e Env,
        server: Option<String>,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(
                &pool
                    .list_resources(server.as_deref())
                    .await
                    .map_err(core_error)?,
            )
        })
    }

    #[napi]
    pub fn list_resource_templates<'e>(
        &self,
        env: &'e Env,
        server: Option<String>,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            let list = pool.list_resource_templates(server.as_deref()).await;
            to_json(&list.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn read_resource<'e>(
        &self,
        env: &'e Env,
        server: String,
        uri: String,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(
                &pool
                    .read_resource(&server, &uri)
                    .await
                    .map_err(core_error)?,
            )
        })
    }

    #[napi]
    pub fn subscribe_resource<'e>(
        &self,
        env: &'e Env,
        server: String,
        uri: String,
    ) -> napi::Result<PromiseRaw<'e, ()>> {
        let pool = self.pool();
        promise(env, async move {
            pool.subscribe_resource(&server, &uri)
                .await
                .map_err(core_error)
        })
    }

    #[napi]
    pub fn unsubscribe_resource<'e>(
        &self,
        env: &'e Env,
        server: String,
        uri: String,
    ) -> napi::Result<PromiseRaw<'e, ()>> {
        let pool = self.pool();
        promise(env, async move {
            pool.unsubscribe_resource(&server, &uri)
                .await
                .map_err(core_error)
        })
    }

    #[napi]
    pub fn list_prompts<'e>(
        &self,
        env: &'e Env,
        server: Option<String>,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(
                &pool
                    .list_prompts(server.as_deref())
                    .await
                    .map_err(core_error)?,
            )
        })
    }

    /// `arguments` is a JSON object of strings, or `null`.
    #[napi]
    pub fn get_prompt<'e>(
        &self,
        env: &'e Env,
        server: String,
        name: String,
        arguments: String,
    ) -> napi::Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            let arguments: Option<serde_json::Map<String, serde_json::Value>> =
                parse("prompt arguments", &arguments)?;
            let result = pool.get_prompt(&server, &name, arguments).await;
            to_json(&result.map_err(core_error)?)
        })
    }

    /// Closes the pool (see core's `Pool::close`) and stops event delivery. Idempotent.
    #[napi]
    pub fn close<'e>(&self, env: &'e Env) -> napi::Result<PromiseRaw<'e, ()>> {
        let shared = self.shared();
        promise(env, async move {
            shared.pool.close().await;
            shared.stop_events.cancel();
            // Drop the JS handlers (they hold references to JS functions) and fail any call
            // still waiting for one.
            shared.pool.set_sampling_handler(None);
            shared.pool.set_elicitation_handler(None);
            shared.pool.set_roots_handler(None);
            shared.pool.set_oauth_handler(None);
            shared
                .pool
                .set_token_store(Arc::new(mcpmux::auth::MemoryTokenStore::default()));
            let host_tools = std::mem::take(&mut *shared.host_tools.lock().unwrap());
            for name in host_tools {
                shared.pool.unregister_tool(&name);
            }
            let listeners = shared.canvas_listeners.lock().unwrap().take();
            let canvas = shared.pool.canvas();
            for id in listeners.into_iter().flatten() {
                canvas.unsubscribe(id);
            }
            shared.bridge.close();
            Ok(())
        })
    }
}
