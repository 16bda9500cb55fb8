//! Requests beyond the pool's verbs through the addon: completions, and any request or
//! notification by method name.

use napi::Env;
use napi::bindgen_prelude::PromiseRaw;
use napi_derive::napi;

use crate::{NativePool, Result, core_error, parse, promise, to_json};

#[napi]
impl NativePool {
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
}
