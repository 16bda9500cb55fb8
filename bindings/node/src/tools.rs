//! Tools through the addon: listing, search, the catalog, and calls (settled on the JS thread
//! by `calls.rs`), with the call options JS gives.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mcpmux::{CallOptions, Pool, ProgressFn};
use napi::Env;
use napi::bindgen_prelude::{FunctionRef, PromiseRaw, Unknown};
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;

use crate::{
    CallGuard, JsonCallback, NativePool, Result, core_error, count, error, internal, list_options,
    parse, promise, to_json,
};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

#[napi]
impl NativePool {
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
        let port = crate::calls::Port::new(env, make_error, parse_json).map_err(internal)?;
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
                    Ok(json) => crate::calls::Outcome::Json(json),
                    Err(e) => crate::calls::Outcome::Err(error("internal", e.to_string())),
                },
                Err(e) => crate::calls::Outcome::Err(e),
            }
        };
        let promise = port.start(env, Box::pin(fut)).map_err(internal)?;
        // SAFETY: a promise made on this thread, in this call's scope.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), promise) })
    }
}

/// One tool call, from the arguments `callTool` got to core's result.
/// What a call tells JS while it runs: its progress, and the status of its task.
pub(super) struct Callbacks {
    pub(crate) on_progress: Option<JsonCallback>,
    pub(crate) on_task: Option<JsonCallback>,
}

/// A call's options as JS gives them: its time limit, its callbacks (each told JSON), its
/// cancellation and its settings (core's `CallSettings`, as JSON).
pub(super) fn call_options(
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

pub(super) async fn call_tool(
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
