//! Skills (the Skills extension) through the addon: listing, loading, reading their files.

use napi::Env;
use napi::bindgen_prelude::PromiseRaw;
use napi_derive::napi;

use crate::{NativePool, Result, core_error, promise, to_json};

#[napi]
impl NativePool {
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
}
