//! The native half of the `mcpmux` npm package. It only marshals: every input arrives as a JSON
//! string that core deserializes, every output leaves as core's JSON (except `callTool`'s
//! result, converted straight into JS objects: see `calls.rs`), and every error carries core's
//! stable error code so the JavaScript layer (`index.js`) can throw the right class.
//!
//! This module is internal; the public, documented API is `index.js` / `index.d.ts`. Its
//! files follow the topics of the pool's API, as `ffi/src/api/` does: `servers.rs`,
//! `tools.rs`, `tasks.rs`, `resources.rs`, `prompts.rs`, `skills.rs`, `requests.rs`, `apps.rs`,
//! `host.rs`, `oauth.rs`, `agent.rs`, `serve.rs`; this one holds the pool itself (open, events,
//! close) and what they share.

mod agent;
mod apps;
mod bridge;
mod calls;
mod errors;
mod host;
mod oauth;
mod prompts;
mod requests;
mod resources;
mod serve;
mod servers;
mod skills;
mod stdout_watch;
mod tasks;
mod tools;
mod uv;
mod write_batch;

pub use apps::app_bridge_reply;

/// mimalloc, set up for a library in someone else's process (see `mcpmux::alloc`).
#[global_allocator]
static ALLOCATOR: mcpmux::alloc::Allocator = mcpmux::alloc::Allocator;

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex, OnceLock};

use mcpmux::{Pool, PoolOptions};
use napi::bindgen_prelude::{PromiseRaw, ToNapiValue, Unknown};
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

/// The options of a list call, from its optional `refresh` flag.
pub(crate) fn list_options(refresh: Option<bool>) -> mcpmux::ListOptions {
    mcpmux::ListOptions {
        refresh: refresh.unwrap_or(false),
        ..Default::default()
    }
}
