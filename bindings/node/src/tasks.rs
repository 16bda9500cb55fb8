//! `NativeTaskRun`: core's `TaskRun` (a tool call followed in the background) behind promises.
//! The following itself is core's; `TaskRun` in `lib/pool.js` only gives it JS's idiom.

use std::sync::Arc;

use napi::Env;
use napi::bindgen_prelude::PromiseRaw;
use napi_derive::napi;

use crate::errors::core_error;
use crate::{Result, promise, to_json};

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
