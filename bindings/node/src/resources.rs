//! Resources through the addon: listing, reading and subscribing.

use napi::Env;
use napi::bindgen_prelude::PromiseRaw;
use napi_derive::napi;

use crate::{NativePool, Result, core_error, list_options, promise, to_json};

#[napi]
impl NativePool {
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
}
