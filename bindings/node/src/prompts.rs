//! Prompts through the addon.

use napi::Env;
use napi::bindgen_prelude::PromiseRaw;
use napi_derive::napi;

use crate::{NativePool, Result, core_error, list_options, parse, promise, to_json};

#[napi]
impl NativePool {
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
}
