//! The application's side of a pool: host tools, sampling and elicitation handlers, roots,
//! recipes and the canvas. JS callbacks arrive as weak thread-safe functions and are called
//! through the pool's [`Bridge`](crate::bridge::Bridge).
#![allow(
    deprecated,
    reason = "roots and sampling are deprecated by SEP-2577 but servers still use them"
)]

use std::sync::Arc;

use mcpmux::host::answers;
use mcpmux::{ElicitationHandler, HostTool, RootsHandler, SamplingHandler};
use napi::Env;
use napi::bindgen_prelude::PromiseRaw;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;
use serde_json::Value;

use crate::bridge::JsFn;
use crate::{JsonCallback, NativePool, core_error, error, parse, promise, to_json};

#[napi]
impl NativePool {
    pub(crate) fn js_fn(&self, callback: JsonCallback) -> JsFn {
        self.shared.js_fn(callback)
    }

    /// The answer of a JS callback called through the bridge: `ok` with its JSON result, or
    /// not with the message of what it threw.
    #[napi]
    pub fn host_reply(&self, id: u32, ok: bool, text: String) {
        self.shared.bridge.reply(id, ok, text);
    }

    /// Text a JS provider streams while answering call `id`.
    #[napi]
    pub fn host_token(&self, id: u32, text: String) {
        self.shared.bridge.token(id, &text);
    }

    /// Registers (or replaces) a host tool. `handler` answers a `CallToolResult` as JSON.
    #[napi(
        ts_args_type = "name: string, description: string, inputSchema: string, handler: (json: string) => void"
    )]
    pub fn register_tool(
        &self,
        name: String,
        description: String,
        input_schema: String,
        handler: JsonCallback,
    ) -> crate::Result<String> {
        let input_schema: Value = parse("input schema", &input_schema)?;
        let js = self.js_fn(handler);
        let tool_name = name.clone();
        let info = self
            .shared
            .pool
            .register_tool(HostTool {
                name: name.clone(),
                description,
                input_schema,
                handler: Arc::new(move |args| {
                    let (js, tool_name) = (js.clone(), tool_name.clone());
                    Box::pin(async move {
                        let answer = js.ask(args, None).await?;
                        answers::tool_result(answer).map_err(|e| {
                            format!("the answer of host tool '{tool_name}' was refused: {e}")
                        })
                    })
                }),
            })
            .map_err(core_error)?;
        to_json(&info)
    }

    /// Removes a host tool; whether it existed.
    #[napi]
    pub fn unregister_tool(&self, name: String) -> bool {
        self.shared.pool.unregister_tool(&name)
    }

    /// Answers servers' sampling requests with `handler` (`null`: refuse them). The handler
    /// gets `{serverId, serverName, params}` and answers a `CreateMessageResult`. With
    /// `tools`, it takes the request's tools and may answer `tool_use` content.
    #[napi(ts_args_type = "handler: ((json: string) => void) | null, tools?: boolean | null")]
    pub fn set_sampling_handler(&self, handler: Option<JsonCallback>, tools: Option<bool>) {
        let handler = handler.map(|cb| -> SamplingHandler {
            let js = self.js_fn(cb);
            Arc::new(move |req| {
                let js = js.clone();
                Box::pin(async move {
                    let payload = serde_json::to_value(&req).map_err(|e| e.to_string())?;
                    let answer = js.ask(payload, None).await?;
                    answers::sampling_result(answer)
                        .map_err(|e| format!("the answer of the sampling handler was refused: {e}"))
                })
            })
        });
        let support = mcpmux::SamplingSupport {
            tools: tools.unwrap_or(false),
        };
        self.shared.pool.set_sampling_handler_with(handler, support);
    }

    /// Answers servers' elicitation requests with `handler` (`null`: decline them).
    #[napi(ts_args_type = "handler: ((json: string) => void) | null")]
    pub fn set_elicitation_handler(&self, handler: Option<JsonCallback>) {
        let handler = handler.map(|cb| -> ElicitationHandler {
            let js = self.js_fn(cb);
            Arc::new(move |req| {
                let js = js.clone();
                Box::pin(async move {
                    let payload = serde_json::to_value(&req).map_err(|e| e.to_string())?;
                    let answer = js.ask(payload, None).await?;
                    answers::elicitation_result(answer).map_err(|e| {
                        format!("the answer of the elicitation handler was refused: {e}")
                    })
                })
            })
        });
        self.shared.pool.set_elicitation_handler(handler);
    }

    /// Answers servers' `roots/list` with `handler` (`null`: the lists of `setRoots` /
    /// `setServerRoots`). The handler gets `{serverId, serverName}` and answers a list of
    /// `{uri, name?}`.
    #[napi(ts_args_type = "handler: ((json: string) => void) | null")]
    pub fn set_roots_handler(&self, handler: Option<JsonCallback>) {
        let handler = handler.map(|cb| -> RootsHandler {
            let js = self.js_fn(cb);
            Arc::new(move |req| {
                let js = js.clone();
                Box::pin(async move {
                    let payload = serde_json::to_value(&req).map_err(|e| e.to_string())?;
                    let answer = js.ask(payload, None).await?;
                    answers::roots(answer)
                        .map_err(|e| format!("the answer of the roots handler was refused: {e}"))
                })
            })
        });
        self.shared.pool.set_roots_handler(handler);
    }

    /// Tells every connected server that the roots changed (they ask again).
    #[napi]
    pub fn notify_roots_changed<'e>(&self, env: &'e Env) -> crate::Result<PromiseRaw<'e, ()>> {
        let pool = self.pool();
        promise(env, async move {
            pool.notify_roots_changed().await;
            Ok(())
        })
    }

    /// The pool's roots (those of servers without their own), as JSON.
    #[napi]
    pub fn roots(&self) -> crate::Result<String> {
        to_json(&self.shared.pool.roots())
    }

    /// Replaces the pool's roots (JSON list of `{uri, name?}`); connected servers are told.
    #[napi]
    pub fn set_roots<'e>(&self, env: &'e Env, roots: String) -> crate::Result<PromiseRaw<'e, ()>> {
        let pool = self.pool();
        promise(env, async move {
            let roots = answers::roots(parse("roots", &roots)?)
                .map_err(|e| error("invalid_argument", format!("invalid roots: {e}")))?;
            pool.set_roots(roots).await;
            Ok(())
        })
    }

    /// Gives one server its own roots; `null` JSON goes back to the pool's.
    #[napi]
    pub fn set_server_roots<'e>(
        &self,
        env: &'e Env,
        server: String,
        roots: String,
    ) -> crate::Result<PromiseRaw<'e, ()>> {
        let pool = self.pool();
        promise(env, async move {
            let roots = match parse::<Value>("roots", &roots)? {
                Value::Null => None,
                list => Some(
                    answers::roots(list)
                        .map_err(|e| error("invalid_argument", format!("invalid roots: {e}")))?,
                ),
            };
            pool.set_server_roots(&server, roots)
                .await
                .map_err(core_error)
        })
    }

    /// Adds a recipe (markdown with YAML front matter); also offers `widget_display` and
    /// `canvas` as host tools.
    #[napi]
    pub fn register_recipe(&self, markdown: String) -> crate::Result<String> {
        to_json(
            &self
                .shared
                .pool
                .register_recipe(&markdown)
                .map_err(core_error)?,
        )
    }

    #[napi]
    pub fn list_recipes(&self) -> crate::Result<String> {
        to_json(&self.shared.pool.recipes().list())
    }

    /// A recipe as JSON, or `null`.
    #[napi]
    pub fn get_recipe(&self, name: String) -> crate::Result<String> {
        to_json(&self.shared.pool.recipes().get(&name))
    }

    #[napi]
    pub fn search_recipes(&self, query: String, limit: Option<i64>) -> crate::Result<String> {
        let found = self
            .shared
            .pool
            .search_recipes(&query, limit.map(crate::count));
        to_json(&found.map_err(core_error)?)
    }

    /// The canvas as its JSON document (`{version, widgets}`).
    #[napi]
    pub fn canvas(&self) -> crate::Result<String> {
        to_json(&self.shared.pool.canvas().to_json())
    }

    /// Sends every change of the canvas, as JSON (`{change, widget?, id?}`), to `callback`
    /// until `offCanvas(id)` or the pool closes. Returns the subscription's id.
    #[napi(ts_args_type = "callback: (json: string) => void")]
    pub fn on_canvas(&self, callback: JsonCallback) -> crate::Result<i64> {
        let mut listeners = self.shared.canvas_listeners.lock().unwrap();
        let Some(listeners) = listeners.as_mut() else {
            return Err(error("shutting_down", "the pool is closed"));
        };
        let id = self.shared.pool.canvas().subscribe(move |change| {
            if let Ok(json) = serde_json::to_string(change) {
                callback.call(json, ThreadsafeFunctionCallMode::NonBlocking);
            }
        });
        listeners.insert(id);
        // Ids count up from 1: far below 2^53, exact as a JS number.
        Ok(id as i64)
    }

    /// Ends a canvas subscription; whether it was active.
    #[napi]
    pub fn off_canvas(&self, id: i64) -> bool {
        let Ok(id) = u64::try_from(id) else {
            return false;
        };
        let mut listeners = self.shared.canvas_listeners.lock().unwrap();
        let ours = listeners.as_mut().is_some_and(|set| set.remove(&id));
        ours && self.shared.pool.canvas().unsubscribe(id)
    }
}
