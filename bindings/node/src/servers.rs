//! The server list through the addon: listing, adding, changing and removing servers, and
//! connecting, testing and discovering them.

use mcpmux::{ServerInput, ServerPatch};
use napi::Env;
use napi::bindgen_prelude::PromiseRaw;
use napi_derive::napi;

use crate::{NativePool, Result, core_error, parse, promise, to_json};

#[napi]
impl NativePool {
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
    pub fn approve_server<'e>(
        &self,
        env: &'e Env,
        server: String,
    ) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.approve_server(&server).await.map_err(core_error)?)
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
}
