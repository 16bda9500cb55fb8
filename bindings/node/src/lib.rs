//! The native half of the `mcpmux` npm package. It only marshals: every input arrives as a JSON
//! string that core deserializes, every output leaves as core's JSON (except `callTool`'s
//! result, converted straight into JS objects: see `calls.rs`), and every error carries core's
//! stable error code so the JavaScript layer (`index.js`) can throw the right class.
//!
//! This module is internal; the public, documented API is `index.js` / `index.d.ts`.

mod agent;
mod apps;
mod bridge;
mod calls;
mod errors;
mod host;
mod oauth;
mod serve;
mod stdout_watch;
mod tasks;
mod uv;
mod write_batch;

pub use apps::app_bridge_reply;

/// mimalloc, set up for a library in someone else's process (see `mcpmux::alloc`).
#[global_allocator]
static ALLOCATOR: mcpmux::alloc::Allocator = mcpmux::alloc::Allocator;

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mcpmux::{CallOptions, Pool, PoolOptions, ProgressFn, ServerInput, ServerPatch};
use napi::bindgen_prelude::{FunctionRef, PromiseRaw, ToNapiValue, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Status};

pub(crate) use errors::{Result, core_error, error, internal};
use napi_derive::napi;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A JS callback receiving one JSON string. Weak, so that it never keeps Node's event loop
/// alive by itself: an idle pool must not stop the process from exiting.
pub(crate) type JsonCallback = ThreadsafeFunction<String, (), String, Status, false, true>;

pub(crate) fn parse<T: DeserializeOwned>(what: &str, json: &str) -> Result<T> {
    serde_json::from_str(json)
        .map_err(|e| error("invalid_argument", format!("invalid {what}: {e}")))
}

/// A count a JS caller gave; a negative one is passed on as 0, which core refuses.
pub(crate) fn count(n: i64) -> usize {
    usize::try_from(n).unwrap_or(0)
}

pub(crate) fn to_json<T: Serialize>(value: &T) -> Result<String> {
    // Core's types always serialize; a failure here would be a bug worth reporting as such.
    serde_json::to_string(value)
        .map_err(|e| error("internal", format!("cannot encode result: {e}")))
}

/// The runtime every pool lives on (its connections' tasks, its calls): a current-thread tokio
/// runtime on a thread of its own, shared by every pool of the process.
///
/// napi's own runtime is multi-threaded; on a small machine a call then crosses more threads.
/// Measured with the bench (2 cores, stdio echo server, 32 calls in flight) a single runtime
/// thread beat both napi's runtime and a one-worker multi-thread runtime. Nothing here blocks
/// its thread: core moves blocking work (files) to tokio's blocking pool.
pub(crate) fn runtime() -> &'static tokio::runtime::Handle {
    static RUNTIME: OnceLock<tokio::runtime::Handle> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("mcpmux-runtime".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("cannot build the tokio runtime");
                let _ = tx.send(rt.handle().clone());
                // Runs for the life of the process (never dropped: see pitfalls on dropping a
                // runtime from one of its own threads).
                rt.block_on(std::future::pending::<()>());
            })
            .expect("cannot start the runtime thread");
        rx.recv().expect("the runtime thread did not start")
    })
}

/// The release this addon was built from. The package compares it with its own version when
/// it loads the addon, so a platform package of another release is refused, not half-used.
#[napi]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// Every event name core emits (core's `EVENT_NAMES`), so JS never keeps its own copy.
#[napi]
pub fn event_names() -> Vec<String> {
    mcpmux::EVENT_NAMES.iter().map(|s| s.to_string()).collect()
}

/// What the JS types mirror (`index.d.ts`: fields of records and events, error codes), as
/// JSON, for the drift tests.
#[napi]
pub fn mirrored() -> String {
    mcpmux::mirror::mirrored().to_string()
}

/// What core makes of a host's answer of `kind` (`tool_result`, `approval`, `sampling`,
/// `elicitation`, `roots`, `provider_reply`), as JSON; a refused answer is an
/// `invalid_argument` error. The contract every binding shares (tests/contract).
#[napi]
pub fn read_host_answer(kind: String, answer: String) -> Result<String> {
    let kind: mcpmux::host::answers::AnswerKind = serde_json::from_value(Value::String(kind))
        .map_err(|_| {
            error(
                "invalid_argument",
                "answer kind must be tool_result, approval, sampling, elicitation, roots or \
                 provider_reply",
            )
        })?;
    let value: Value = parse("answer", &answer)?;
    to_json(&mcpmux::host::answers::read(kind, value).map_err(core_error)?)
}

/// Opens a pool. `options` is core's `PoolOptions` as camelCase JSON (unknown keys are errors).
#[napi(ts_return_type = "Promise<NativePool>")]
pub fn open_pool(env: &Env, options: String) -> Result<PromiseRaw<'_, NativePool>> {
    let options: PoolOptions = parse("pool options", &options)?;
    promise(env, async move {
        let pool = Pool::open(options).await.map_err(core_error)?;
        Ok(NativePool {
            shared: std::mem::ManuallyDrop::new(Arc::new(Shared {
                pool,
                calls: Mutex::new(HashMap::new()),
                next_call: AtomicU32::new(1),
                stop_events: CancellationToken::new(),
                forwarding: Mutex::new(None),
                bridge: Arc::default(),
                canvas_listeners: Mutex::new(Some(std::collections::HashSet::new())),
                servers: Mutex::new(Some(HashMap::new())),
                next_server: AtomicU32::new(1),
            })),
            runtime: runtime().clone(),
            port: OnceLock::new(),
        })
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
    /// Where `callTool`'s promises are settled (see `calls.rs`); made by `initCalls`.
    port: OnceLock<calls::Port>,
}

pub(crate) struct Shared {
    pool: Pool,
    /// Cancellation tokens of the calls in flight, by the id `beginCall` handed out. Registered
    /// synchronously so an abort that fires before the call's future first runs is not lost.
    pub(crate) calls: Mutex<HashMap<u32, CancellationToken>>,
    next_call: AtomicU32,
    /// Ends the event forwarding task.
    stop_events: CancellationToken,
    /// Ends the forwarding `onEvent` started, for `offEvents`.
    forwarding: Mutex<Option<CancellationToken>>,
    /// JS callbacks waiting for their answers.
    pub(crate) bridge: Arc<bridge::Bridge>,
    /// Canvas subscriptions made from JS, released at close (`None` once closed, so that no
    /// subscription slips in after).
    pub(crate) canvas_listeners: Mutex<Option<std::collections::HashSet<u64>>>,
    /// The servers `serveHttp` started, stopped by `stopHttp` or at close (see `serve.rs`).
    pub(crate) servers: serve::Servers,
    next_server: AtomicU32,
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

/// Runs `fut` on the pools' runtime and returns its promise, which rejects with a JS error
/// whose `code` is the error's (see `errors.rs`).
pub(crate) fn promise<'e, T, F>(env: &'e Env, fut: F) -> Result<PromiseRaw<'e, T>>
where
    T: ToNapiValue + Send + 'static,
    F: Future<Output = Result<T>> + Send + 'static,
{
    // napi rejects only with its own `napi::Error`, whose code is a napi status: the outcome
    // crosses as a value, and on the JS thread an error becomes the JS error it rejects with
    // (napi rejects with a JS error it is handed as is).
    let outcome = async move { Ok(on_runtime(fut).await) };
    env.spawn_future_with_callback(outcome, |env, outcome: Result<T>| {
        outcome.map_err(|e| {
            // SAFETY: the callback runs on the JS thread of `env`, where the value was made.
            let value =
                unsafe { Unknown::from_raw_unchecked(env.raw(), errors::js_error(env, &e)) };
            napi::Error::from(value)
        })
    })
    .map_err(internal)
}

/// Runs `fut` on the pools' runtime, wherever it is awaited.
pub(crate) async fn on_runtime<T, F>(fut: F) -> Result<T>
where
    T: Send + 'static,
    F: Future<Output = Result<T>> + Send + 'static,
{
    runtime()
        .spawn(fut)
        .await
        .map_err(|e| error("internal", format!("the task failed: {e}")))?
}

#[napi]
impl NativePool {
    pub(crate) fn shared(&self) -> Arc<Shared> {
        Arc::clone(&self.shared)
    }

    pub(crate) fn pool(&self) -> Pool {
        self.shared.pool.clone()
    }

    /// Forwards every pool event, as JSON, to `callback` until `offEvents` or the pool closes
    /// (replacing an earlier `onEvent`). The JS `Pool` forwards only while it has listeners:
    /// with none, core builds no per-call events at all.
    #[napi(ts_args_type = "callback: (json: string) => void")]
    pub fn on_event(&self, callback: JsonCallback) {
        // Subscribed here, synchronously: no event after this call is missed.
        let mut events = self.shared.pool.events();
        let stop = self.shared.stop_events.child_token();
        if let Some(previous) = self.shared.forwarding.lock().unwrap().replace(stop.clone()) {
            previous.cancel();
        }
        runtime().spawn(async move {
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

    /// Stops what `onEvent` started; nothing happens without it.
    #[napi]
    pub fn off_events(&self) {
        if let Some(token) = self.shared.forwarding.lock().unwrap().take() {
            token.cancel();
        }
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
    pub fn server_states(&self) -> Result<String> {
        to_json(&self.shared.pool.server_states())
    }

    #[napi]
    pub fn list_servers<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.list_servers().await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn get_server<'e>(&self, env: &'e Env, server: String) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.get_server(&server).await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn add_server<'e>(&self, env: &'e Env, input: String) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            let input: ServerInput = parse("server", &input)?;
            to_json(&pool.add_server(input).await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn add_json<'e>(&self, env: &'e Env, text: String) -> Result<PromiseRaw<'e, String>> {
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
    ) -> Result<PromiseRaw<'e, String>> {
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
    ) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.remove_server(&server).await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn test_server<'e>(&self, env: &'e Env, server: String) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.test_server(&server).await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn test_config<'e>(&self, env: &'e Env, input: String) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            let input: ServerInput = parse("server", &input)?;
            to_json(&pool.test_config(input).await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn discover<'e>(&self, env: &'e Env, server: String) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.discover(&server).await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn connect<'e>(&self, env: &'e Env, server: String) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.connect(&server).await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn connect_all<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move { to_json(&pool.connect_all().await) })
    }

    #[napi]
    pub fn disconnect<'e>(&self, env: &'e Env, server: String) -> Result<PromiseRaw<'e, ()>> {
        let pool = self.pool();
        promise(env, async move {
            pool.disconnect(&server).await.map_err(core_error)
        })
    }

    /// With `refresh`, the servers are asked again past every cache.
    #[napi]
    pub fn list_tools<'e>(
        &self,
        env: &'e Env,
        server: Option<String>,
        refresh: Option<bool>,
    ) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        let options = list_options(refresh);
        promise(env, async move {
            to_json(
                &pool
                    .list_tools_with(server.as_deref(), options)
                    .await
                    .map_err(core_error)?,
            )
        })
    }

    /// Ranked tools for `query`, from the tools known once the servers never listed (or
    /// whose config changed) are listed.
    #[napi]
    pub fn search_tools<'e>(
        &self,
        env: &'e Env,
        query: String,
        limit: Option<i64>,
    ) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        let limit = limit.map(count);
        promise(env, async move {
            to_json(&pool.search_tools(&query, limit).await.map_err(core_error)?)
        })
    }

    /// Lists the servers `servers` (core's `ServerFilter` JSON) lets through whose tools are
    /// not known; the ones that could not be listed, as JSON.
    #[napi]
    pub fn ensure_catalog<'e>(
        &self,
        env: &'e Env,
        servers: String,
    ) -> Result<PromiseRaw<'e, String>> {
        let filter: mcpmux::ServerFilter = parse("servers", &servers)?;
        let pool = self.pool();
        promise(
            env,
            async move { to_json(&pool.ensure_catalog(&filter).await) },
        )
    }

    /// Every tool known without connecting anything.
    #[napi]
    pub fn known_tools<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, String>> {
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

    /// Makes the queue `callTool` settles its promises through; `makeError(message)` turns an
    /// addon error message into the error to reject with, and `parseJson` is `JSON.parse`,
    /// which makes the results. Called once, by `Pool`.
    #[napi(ts_args_type = "makeError: (error: Error) => Error, parseJson: (text: string) => any")]
    pub fn init_calls(
        &self,
        env: &Env,
        make_error: FunctionRef<Unknown<'static>, Unknown<'static>>,
        parse_json: FunctionRef<Unknown<'static>, Unknown<'static>>,
    ) -> Result<()> {
        let port = calls::Port::new(env, make_error, parse_json).map_err(internal)?;
        let _ = self.port.set(port);
        Ok(())
    }

    /// Calls a tool. `cancelId` (from `beginCall`) makes the call cancellable by `cancelCall`;
    /// `on_progress` gets each progress as JSON. Resolves with the result object; rejects with
    /// what `makeError` made of the error.
    #[napi(
        ts_args_type = "toolId: string, arguments: string, cancelId?: number | null, timeoutMs?: number | null, onProgress?: ((json: string) => void) | null, options?: string | null, onTask?: ((json: string) => void) | null",
        ts_return_type = "Promise<any>"
    )]
    #[allow(
        clippy::too_many_arguments,
        reason = "one per option of a call, from JS"
    )]
    pub fn call_tool<'e>(
        &self,
        env: &'e Env,
        tool_id: String,
        arguments: String,
        cancel_id: Option<u32>,
        timeout_ms: Option<f64>,
        on_progress: Option<JsonCallback>,
        options: Option<String>,
        on_task: Option<JsonCallback>,
    ) -> Result<Unknown<'e>> {
        let port = self
            .port
            .get()
            .ok_or_else(|| error("internal", "initCalls was not called"))?;
        let shared = self.shared();
        let guard = cancel_id.map(|id| CallGuard {
            shared: shared.clone(),
            id,
        });
        let cancel = cancel_id.and_then(|id| shared.calls.lock().unwrap().get(&id).cloned());
        let fut = async move {
            let result = call_tool(
                &shared.pool,
                &tool_id,
                &arguments,
                timeout_ms,
                Callbacks {
                    on_progress,
                    on_task,
                },
                cancel,
                options.as_deref(),
            )
            .await;
            drop(guard);
            match result {
                Ok(r) => match serde_json::to_string(&r) {
                    Ok(json) => calls::Outcome::Json(json),
                    Err(e) => calls::Outcome::Err(error("internal", e.to_string())),
                },
                Err(e) => calls::Outcome::Err(e),
            }
        };
        let promise = port.start(env, Box::pin(fut)).map_err(internal)?;
        // SAFETY: a promise made on this thread, in this call's scope.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), promise) })
    }

    /// `callTool` started in the background, followed by the `NativeTaskRun` it returns (core's
    /// `TaskRun`; `TaskRun` in `lib/pool.js` is its JS face).
    #[napi]
    pub fn start_task(
        &self,
        tool_id: String,
        arguments: String,
        timeout_ms: Option<f64>,
        on_progress: Option<JsonCallback>,
        options: Option<String>,
    ) -> Result<tasks::NativeTaskRun> {
        let arguments: serde_json::Value = parse("tool arguments", &arguments)?;
        let callbacks = Callbacks {
            on_progress,
            on_task: None,
        };
        let options = call_options(timeout_ms, callbacks, None, options.as_deref())?;
        let _ctx = self.runtime.enter();
        let run = self.pool().start_task(&tool_id, arguments, options);
        Ok(tasks::NativeTaskRun::new(run))
    }

    /// With `refresh`, the servers are asked again past every cache.
    #[napi]
    pub fn list_resources<'e>(
        &self,
        env: &'e Env,
        server: Option<String>,
        refresh: Option<bool>,
    ) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        let options = list_options(refresh);
        promise(env, async move {
            to_json(
                &pool
                    .list_resources_with(server.as_deref(), options)
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
        refresh: Option<bool>,
    ) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        let options = list_options(refresh);
        promise(env, async move {
            let list = pool
                .list_resource_templates_with(server.as_deref(), options)
                .await;
            to_json(&list.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn read_resource<'e>(
        &self,
        env: &'e Env,
        server: String,
        uri: String,
    ) -> Result<PromiseRaw<'e, String>> {
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

    /// The skills of one server, or of every server that offers any, without reading a file.
    #[napi]
    pub fn list_skills<'e>(
        &self,
        env: &'e Env,
        server: Option<String>,
    ) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(
                &pool
                    .list_skills(server.as_deref())
                    .await
                    .map_err(core_error)?,
            )
        })
    }

    /// Loads a skill, its `SKILL.md` checked against the listing.
    #[napi]
    pub fn load_skill<'e>(
        &self,
        env: &'e Env,
        server: String,
        skill: String,
    ) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.load_skill(&server, &skill).await.map_err(core_error)?)
        })
    }

    /// Reads one file of a skill, checked against the listing.
    #[napi]
    pub fn read_skill_file<'e>(
        &self,
        env: &'e Env,
        server: String,
        skill: String,
        uri: String,
    ) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(
                &pool
                    .read_skill_file(&server, &skill, &uri)
                    .await
                    .map_err(core_error)?,
            )
        })
    }

    /// Completion values for a prompt's or resource template's argument: `params` is MCP's
    /// `completion/complete` params as JSON.
    #[napi]
    pub fn complete<'e>(
        &self,
        env: &'e Env,
        server: String,
        params: String,
    ) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        let params = parse("completion params", &params)?;
        promise(env, async move {
            to_json(&pool.complete(&server, params).await.map_err(core_error)?)
        })
    }

    /// Sends a request by method name (`params`: a JSON object or `null`); resolves with its
    /// result as JSON.
    #[napi]
    pub fn request<'e>(
        &self,
        env: &'e Env,
        server: String,
        method: String,
        params: String,
    ) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        let params = parse("params", &params)?;
        promise(env, async move {
            to_json(
                &pool
                    .request(&server, &method, params)
                    .await
                    .map_err(core_error)?,
            )
        })
    }

    /// Sends a notification by method name (`params`: a JSON object or `null`).
    #[napi]
    pub fn notify<'e>(
        &self,
        env: &'e Env,
        server: String,
        method: String,
        params: String,
    ) -> Result<PromiseRaw<'e, ()>> {
        let pool = self.pool();
        let params = parse("params", &params)?;
        promise(env, async move {
            pool.notify(&server, &method, params)
                .await
                .map_err(core_error)
        })
    }

    #[napi]
    pub fn subscribe_resource<'e>(
        &self,
        env: &'e Env,
        server: String,
        uri: String,
    ) -> Result<PromiseRaw<'e, ()>> {
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
    ) -> Result<PromiseRaw<'e, ()>> {
        let pool = self.pool();
        promise(env, async move {
            pool.unsubscribe_resource(&server, &uri)
                .await
                .map_err(core_error)
        })
    }

    /// With `refresh`, the servers are asked again past every cache.
    #[napi]
    pub fn list_prompts<'e>(
        &self,
        env: &'e Env,
        server: Option<String>,
        refresh: Option<bool>,
    ) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        let options = list_options(refresh);
        promise(env, async move {
            to_json(
                &pool
                    .list_prompts_with(server.as_deref(), options)
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
    ) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            let arguments: Option<serde_json::Map<String, serde_json::Value>> =
                parse("prompt arguments", &arguments)?;
            let result = pool.get_prompt(&server, &name, arguments).await;
            to_json(&result.map_err(core_error)?)
        })
    }

    /// Stops the servers `serveHttp` started, closes the pool (see core's `Pool::close`) and
    /// stops event delivery. Idempotent.
    #[napi]
    pub fn close<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, ()>> {
        let shared = self.shared();
        promise(env, async move {
            // First, so that no served client starts a call while calls in flight drain (core
            // would stop them too, once the pool is closed).
            serve::stop_all(&shared).await;
            // Core's close also drops every host callback (the JS functions they hold), the
            // host tools and the canvas listeners; calls still waiting for JS fail here.
            shared.pool.close().await;
            // No canvas subscription after the close (core dropped those made before).
            shared.canvas_listeners.lock().unwrap().take();
            shared.stop_events.cancel();
            shared.bridge.close();
            Ok(())
        })
    }
}

/// One tool call, from the arguments `callTool` got to core's result.
/// What a call tells JS while it runs: its progress, and the status of its task.
struct Callbacks {
    on_progress: Option<JsonCallback>,
    on_task: Option<JsonCallback>,
}

/// A call's options as JS gives them: its time limit, its callbacks (each told JSON), its
/// cancellation and its settings (core's `CallSettings`, as JSON).
fn call_options(
    timeout_ms: Option<f64>,
    callbacks: Callbacks,
    cancel: Option<CancellationToken>,
    settings: Option<&str>,
) -> Result<CallOptions> {
    let settings: Option<mcpmux::CallSettings> =
        settings.map(|s| parse("call options", s)).transpose()?;
    let timeout = match timeout_ms {
        None => None,
        Some(ms) if ms.is_finite() && ms > 0.0 => Some(Duration::from_secs_f64(ms / 1000.0)),
        Some(ms) => {
            return Err(error(
                "invalid_argument",
                format!("timeoutMs must be a positive number of milliseconds, not {ms}"),
            ));
        }
    };
    let on_progress = callbacks.on_progress.map(|cb| -> ProgressFn {
        Arc::new(move |p| {
            if let Ok(json) = serde_json::to_string(&p) {
                cb.call(json, ThreadsafeFunctionCallMode::NonBlocking);
            }
        })
    });
    let on_task = callbacks.on_task.map(|cb| -> mcpmux::TaskFn {
        Arc::new(move |update| {
            if let Ok(json) = serde_json::to_string(&update) {
                cb.call(json, ThreadsafeFunctionCallMode::NonBlocking);
            }
        })
    });
    let mut options = CallOptions {
        timeout,
        on_progress,
        on_task,
        cancel,
        ..Default::default()
    };
    if let Some(settings) = settings {
        settings.apply(&mut options);
    }
    Ok(options)
}

async fn call_tool(
    pool: &Pool,
    tool_id: &str,
    arguments: &str,
    timeout_ms: Option<f64>,
    callbacks: Callbacks,
    cancel: Option<CancellationToken>,
    settings: Option<&str>,
) -> Result<impl Serialize + Send + 'static> {
    let arguments: serde_json::Value = parse("tool arguments", arguments)?;
    let options = call_options(timeout_ms, callbacks, cancel, settings)?;
    // Core watches `cancel` for server and host tools alike.
    pool.call_tool(tool_id, arguments, options)
        .await
        .map_err(core_error)
}

/// The options of a list call, from its optional `refresh` flag.
fn list_options(refresh: Option<bool>) -> mcpmux::ListOptions {
    mcpmux::ListOptions {
        refresh: refresh.unwrap_or(false),
        ..Default::default()
    }
}
