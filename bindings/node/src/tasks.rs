//! `NativeTaskRun`: core's `TaskRun` (a tool call followed in the background) behind promises.
//! The following itself is core's; `TaskRun` in `lib/pool.js` only gives it JS's idiom.

use std::sync::Arc;

use napi::Env;
use napi::bindgen_prelude::PromiseRaw;
use napi_derive::napi;

use crate::errors::core_error;
use crate::tools::{Callbacks, call_options};
use crate::{JsonCallback, NativePool, Result, parse, promise, to_json};

/// A task run: its status, the next one, cancel, and the result.
#[napi]
pub struct NativeTaskRun {
    /// Dropped anywhere: a run holds no connection, and its call goes on (detached) until it
    /// ends or is cancelled.
    run: Arc<mcpmux::TaskRun>,
}

impl NativeTaskRun {
    pub(crate) fn new(run: mcpmux::TaskRun) -> Self {
        NativeTaskRun { run: Arc::new(run) }
    }
}

#[napi]
impl NativeTaskRun {
    /// The last status as JSON (a `TaskUpdate`), if the server announced one.
    #[napi]
    pub fn status(&self) -> Result<Option<String>> {
        self.run.status().map(|u| to_json(&u)).transpose()
    }

    /// The next status not told yet, as JSON; null once the call has ended.
    #[napi]
    pub fn changed<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, Option<String>>> {
        let run = self.run.clone();
        promise(env, async move {
            run.changed().await.map(|u| to_json(&u)).transpose()
        })
    }

    /// Cancels the call and its task at the server.
    #[napi]
    pub fn cancel(&self) {
        self.run.cancel();
    }

    /// The call's `CallToolResult` as JSON (given once; `TaskRun` keeps it).
    #[napi]
    pub fn result<'e>(&self, env: &'e Env) -> Result<PromiseRaw<'e, String>> {
        let run = self.run.clone();
        promise(env, async move {
            to_json(&run.result().await.map_err(core_error)?)
        })
    }
}

#[napi]
impl NativePool {
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
    ) -> Result<NativeTaskRun> {
        let arguments: serde_json::Value = parse("tool arguments", &arguments)?;
        let callbacks = Callbacks {
            on_progress,
            on_task: None,
        };
        let options = call_options(timeout_ms, callbacks, None, options.as_deref())?;
        let _ctx = self.runtime.enter();
        let run = self.pool().start_task(&tool_id, arguments, options);
        Ok(NativeTaskRun::new(run))
    }
}
