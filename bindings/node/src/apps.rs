//! MCP Apps on the napi side: the pool's verbs (`appView`, `appCall`, `appReadResource`,
//! `appBridge`) and a view's bridge as a JS class; the views cross as JSON.

use std::sync::Arc;

use mcpmux::{AppBridge, AppView, CallOptions};
use napi::Env;
use napi::bindgen_prelude::PromiseRaw;
use napi_derive::napi;
use serde_json::Value;

use crate::errors::core_error;
use crate::{NativePool, Result, parse, promise, to_json};

/// One rendered view's bridge (core's `AppBridge`): the host passes the view's messages in
/// and posts out what comes back.
#[napi]
pub struct NativeAppBridge {
    bridge: Arc<AppBridge>,
}

#[napi]
impl NativeAppBridge {
    /// The view, as JSON.
    #[napi]
    pub fn view(&self) -> Result<String> {
        to_json(self.bridge.view())
    }

    /// One message from the view (JSON): `{"post": [...], "host"?: message}` as JSON.
    #[napi]
    pub fn handle<'e>(&self, env: &'e Env, message: String) -> Result<PromiseRaw<'e, String>> {
        let message: Value = parse("message", &message)?;
        let bridge = Arc::clone(&self.bridge);
        promise(env, async move { to_json(&bridge.handle(message).await) })
    }

    /// The tool's arguments (JSON): the messages to post now, as a JSON array.
    #[napi]
    pub fn tool_input(&self, arguments: String) -> Result<String> {
        to_json(&self.bridge.tool_input(parse("arguments", &arguments)?))
    }

    /// The tool's result (JSON): the messages to post now, as a JSON array.
    #[napi]
    pub fn tool_result(&self, result: String) -> Result<String> {
        let result: mcpmux::model::CallToolResult = parse("result", &result)?;
        to_json(&self.bridge.tool_result(&result))
    }

    /// The call did not finish: the messages to post now, as a JSON array.
    #[napi]
    pub fn tool_cancelled(&self, reason: String) -> Result<String> {
        to_json(&self.bridge.tool_cancelled(&reason))
    }
}

/// A reply to the view's request `id` (JSON): the host's `result` (JSON, `{}` when absent),
/// or the `error` message the view sees; the JSON-RPC message as JSON.
#[napi]
pub fn app_bridge_reply(
    id: String,
    result: Option<String>,
    error: Option<String>,
) -> Result<String> {
    let id: Value = parse("id", &id)?;
    let answer = match (error, result) {
        (Some(message), _) => Err(message),
        (None, Some(result)) => Ok(parse("result", &result)?),
        (None, None) => Ok(Value::Object(Default::default())),
    };
    to_json(&AppBridge::reply(&id, answer).map_err(core_error)?)
}

#[napi]
impl NativePool {
    /// The view of a tool, read and checked, as JSON.
    #[napi]
    pub fn app_view<'e>(&self, env: &'e Env, tool_id: String) -> Result<PromiseRaw<'e, String>> {
        let pool = self.pool();
        promise(env, async move {
            to_json(&pool.app_view(&tool_id).await.map_err(core_error)?)
        })
    }

    /// A view's call of its server's tool `name`; `arguments` is JSON.
    #[napi]
    pub fn app_call<'e>(
        &self,
        env: &'e Env,
        view: String,
        name: String,
        arguments: String,
    ) -> Result<PromiseRaw<'e, String>> {
        let view: AppView = parse("view", &view)?;
        let arguments: Value = parse("arguments", &arguments)?;
        let pool = self.pool();
        promise(env, async move {
            let result = pool
                .app_call(&view, &name, arguments, CallOptions::default())
                .await
                .map_err(core_error)?;
            to_json(&result)
        })
    }

    /// A view's read of its server's resource `uri`.
    #[napi]
    pub fn app_read_resource<'e>(
        &self,
        env: &'e Env,
        view: String,
        uri: String,
    ) -> Result<PromiseRaw<'e, String>> {
        let view: AppView = parse("view", &view)?;
        let pool = self.pool();
        promise(env, async move {
            to_json(
                &pool
                    .app_read_resource(&view, &uri)
                    .await
                    .map_err(core_error)?,
            )
        })
    }

    /// The bridge of a view being rendered; `host_context` is JSON (`{}` for none).
    #[napi]
    pub fn app_bridge(&self, view: String, host_context: String) -> Result<NativeAppBridge> {
        let view: AppView = parse("view", &view)?;
        let host_context: Value = parse("hostContext", &host_context)?;
        Ok(NativeAppBridge {
            bridge: Arc::new(self.pool().app_bridge(view, host_context)),
        })
    }
}
