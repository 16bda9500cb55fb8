//! OAuth for HTTP servers: how users authorize (a JS handler or core's default browser flow),
//! where tokens live (a JS store, a file, or memory) and logging out. JS callbacks go through
//! the pool's [`Bridge`](crate::bridge::Bridge) like every other host callback.
//!
//! Tokens are secrets: they cross to JS only as the payload of a JS token store's `save` and
//! the answer of its `load`, and never appear in an error message produced here.

use std::sync::Arc;

use mcpmux::auth::{
    AuthorizationPrompt, FileTokenStore, MemoryTokenStore, OAuthHandler, TokenStore,
};
use mcpmux::host::BoxFuture;
use napi::Env;
use napi::bindgen_prelude::PromiseRaw;
use napi_derive::napi;
use serde_json::{Value, json};

use crate::bridge::JsFn;
use crate::{JsonCallback, NativePool, core_error, error, promise};

/// A token store implemented in JS. The callback gets `{op, serverId, credentials?}` with
/// `op` one of `load`, `save`, `clear`; `load` answers the stored JSON or `null`.
struct JsTokenStore {
    js: JsFn,
}

impl JsTokenStore {
    fn ask(&self, payload: Value) -> BoxFuture<Result<Value, String>> {
        let js = self.js.clone();
        Box::pin(async move { js.ask(payload, None).await })
    }
}

impl TokenStore for JsTokenStore {
    fn load(&self, server_id: &str) -> BoxFuture<Result<Option<Value>, String>> {
        let answer = self.ask(json!({ "op": "load", "serverId": server_id }));
        Box::pin(async move {
            match answer.await? {
                Value::Null => Ok(None),
                v => Ok(Some(v)),
            }
        })
    }

    fn save(&self, server_id: &str, credentials: Value) -> BoxFuture<Result<(), String>> {
        let answer = self.ask(json!({
            "op": "save",
            "serverId": server_id,
            "credentials": credentials,
        }));
        Box::pin(async move { answer.await.map(|_| ()) })
    }

    fn clear(&self, server_id: &str) -> BoxFuture<Result<(), String>> {
        let answer = self.ask(json!({ "op": "clear", "serverId": server_id }));
        Box::pin(async move { answer.await.map(|_| ()) })
    }
}

impl NativePool {
    /// Core's default store: `<config>.tokens.json` (mode 0600).
    pub(crate) fn default_token_store(&self) -> Arc<dyn TokenStore> {
        let mut path = self.shared.pool.config_path().as_os_str().to_os_string();
        path.push(".tokens.json");
        Arc::new(FileTokenStore::new(path))
    }
}

#[napi]
impl NativePool {
    /// Takes users through authorization with `handler` (`null`: core's default, the system
    /// browser and a one-shot listener on 127.0.0.1). The handler gets
    /// `{serverId, serverName, authorizationUrl, redirectUri}` and answers the redirect URL.
    #[napi(ts_args_type = "handler: ((json: string) => void) | null, redirectUri: string")]
    pub fn set_oauth_handler(
        &self,
        handler: Option<JsonCallback>,
        redirect_uri: String,
    ) -> crate::Result<()> {
        let handler = match handler {
            None => None,
            Some(cb) => {
                if redirect_uri.is_empty() {
                    return Err(error(
                        "invalid_argument",
                        "an OAuth handler needs the redirectUri registered with the authorization server",
                    ));
                }
                let js = self.js_fn(cb);
                Some(OAuthHandler {
                    redirect_uri,
                    authorize: Arc::new(move |prompt: AuthorizationPrompt| {
                        let js = js.clone();
                        Box::pin(async move {
                            let payload =
                                serde_json::to_value(&prompt).map_err(|e| e.to_string())?;
                            match js.ask(payload, None).await? {
                                Value::String(url) if !url.is_empty() => Ok(url),
                                other => Err(format!(
                                    "the OAuth handler must answer the redirect URL as a string, not {}",
                                    kind(&other)
                                )),
                            }
                        })
                    }),
                })
            }
        };
        self.shared.pool.set_oauth_handler(handler);
        Ok(())
    }

    /// Keeps OAuth tokens in a JS store (see [`JsTokenStore`]).
    #[napi(ts_args_type = "callback: (json: string) => void")]
    pub fn set_token_store_js(&self, callback: JsonCallback) {
        let store = JsTokenStore {
            js: self.js_fn(callback),
        };
        self.shared.pool.set_token_store(Arc::new(store));
    }

    /// Keeps OAuth tokens in a JSON file (mode 0600); `null`: the default file next to the
    /// config.
    #[napi]
    pub fn set_token_store_file(&self, path: Option<String>) {
        let store: Arc<dyn TokenStore> = match path {
            Some(path) => Arc::new(FileTokenStore::new(path)),
            None => self.default_token_store(),
        };
        self.shared.pool.set_token_store(store);
    }

    /// Keeps OAuth tokens in memory only.
    #[napi]
    pub fn set_token_store_memory(&self) {
        self.shared
            .pool
            .set_token_store(Arc::new(MemoryTokenStore::default()));
    }

    /// Forgets a server's OAuth tokens and disconnects it.
    #[napi]
    pub fn logout<'e>(&self, env: &'e Env, server: String) -> crate::Result<PromiseRaw<'e, ()>> {
        let pool = self.pool();
        promise(env, async move {
            pool.logout(&server).await.map_err(core_error)
        })
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "an empty string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
