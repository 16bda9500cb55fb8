//! The agent and conversations: core's `mcpmux::agent::Agent` over a provider made from a
//! config or implemented in JS, and `Conversation` with its discovery tools.

use std::sync::Arc;
use std::time::Duration;

use mcpmux::agent::{
    Agent, AgentOptions, ApproveFn, HostChat, HostProvider, Provider, ProviderConfig, RunOptions,
    RunParams, TokenFn, create_provider,
};
use mcpmux::{CallOptions, Conversation};
use napi::Env;
use napi::bindgen_prelude::PromiseRaw;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;
use serde_json::{Value, json};

use crate::bridge::JsFn;
use crate::{
    CallGuard, JsonCallback, NativePool, Shared, core_error, error, parse, promise, to_json,
};

/// Streams text to a JS function (weak, non-blocking: a slow listener never stalls a run).
fn token_fn(callback: JsonCallback) -> TokenFn {
    Arc::new(move |text: &str| {
        callback.call(text.to_string(), ThreadsafeFunctionCallMode::NonBlocking);
    })
}

fn approve_fn(js: JsFn) -> ApproveFn {
    Arc::new(move |request| {
        let js = js.clone();
        Box::pin(async move {
            let payload = serde_json::to_value(&request).unwrap_or(Value::Null);
            // Core denies what failed or cannot be read; `lib/bridge.js` warns about both.
            mcpmux::host::answers::approval_or_deny(js.ask(payload, None).await)
        })
    })
}

/// An agent; see `Agent` in `index.d.ts`.
#[napi]
pub struct NativeAgent {
    agent: std::mem::ManuallyDrop<Arc<Agent>>,
    shared: std::mem::ManuallyDrop<Arc<Shared>>,
    runtime: tokio::runtime::Handle,
}

impl Drop for NativeAgent {
    fn drop(&mut self) {
        // Like `NativePool`: the agent holds a pool handle, dropped inside the runtime.
        let _entered = self.runtime.enter();
        // SAFETY: neither field is used again.
        unsafe {
            std::mem::ManuallyDrop::drop(&mut self.agent);
            std::mem::ManuallyDrop::drop(&mut self.shared);
        }
    }
}

/// A conversation; see `Conversation` in `index.d.ts`.
#[napi]
pub struct NativeConversation {
    conversation: std::mem::ManuallyDrop<Arc<Conversation>>,
    shared: std::mem::ManuallyDrop<Arc<Shared>>,
    runtime: tokio::runtime::Handle,
}

impl Drop for NativeConversation {
    fn drop(&mut self) {
        let _entered = self.runtime.enter();
        // SAFETY: neither field is used again.
        unsafe {
            std::mem::ManuallyDrop::drop(&mut self.conversation);
            std::mem::ManuallyDrop::drop(&mut self.shared);
        }
    }
}

#[napi]
impl NativePool {
    /// Makes an agent. The provider is either `providerConfig` (core's `ProviderConfig` JSON)
    /// or `chat`, a JS provider answering `{model, messages, tools, system, ...}` requests
    /// with a `Response`, named `name` and using `model`.
    #[napi(
        ts_args_type = "providerConfig: string | null, chat: ((json: string) => void) | null, name: string, model: string, options: string"
    )]
    pub fn create_agent(
        &self,
        provider_config: Option<String>,
        chat: Option<JsonCallback>,
        name: String,
        model: String,
        options: String,
    ) -> crate::Result<NativeAgent> {
        let options: AgentOptions = parse("agent options", &options)?;
        let _entered = self.runtime.enter();
        let provider: Arc<dyn Provider> = match (provider_config, chat) {
            (Some(config), _) => {
                let config: ProviderConfig = parse("provider config", &config)?;
                create_provider(config).map_err(core_error)?
            }
            (None, Some(chat)) => {
                let js = self.js_fn(chat);
                Arc::new(HostProvider::new(
                    name,
                    model,
                    Arc::new(move |call: HostChat| {
                        let js = js.clone();
                        Box::pin(async move {
                            let request = serde_json::to_value(&call.request)
                                .map_err(|e| format!("cannot encode the chat request: {e}"))?;
                            // The JS side learns whether to stream from `stream`; cancellation
                            // drops this future, which aborts the JS call's signal.
                            let payload =
                                json!({"request": request, "stream": call.on_token.is_some()});
                            js.ask(payload, call.on_token).await
                        })
                    }),
                ))
            }
            (None, None) => {
                return Err(error(
                    "invalid_argument",
                    "an agent needs a provider config or a chat function",
                ));
            }
        };
        let agent = Agent::new(self.pool(), provider, options);
        Ok(NativeAgent {
            agent: std::mem::ManuallyDrop::new(Arc::new(agent)),
            shared: std::mem::ManuallyDrop::new(self.shared()),
            runtime: self.runtime.clone(),
        })
    }

    /// A conversation over the servers `servers` (core's `ServerFilter` JSON) lets through.
    #[napi]
    pub fn conversation(&self, servers: String) -> crate::Result<NativeConversation> {
        // Core does not re-export `ServerFilter`; it is read as the `servers` of `RunParams`.
        let params: RunParams = parse("servers", &format!("{{\"servers\": {servers}}}"))?;
        let conversation = self.shared.pool.conversation_with(params.servers);
        Ok(NativeConversation {
            conversation: std::mem::ManuallyDrop::new(Arc::new(conversation)),
            shared: std::mem::ManuallyDrop::new(self.shared()),
            runtime: self.runtime.clone(),
        })
    }
}

#[napi]
impl NativeAgent {
    /// Runs the agent. `id` comes from the pool's `beginCall` (cancelled by `cancelCall`);
    /// `params` is core's `RunParams` JSON.
    #[napi(
        ts_args_type = "id: number, prompt: string, params: string, onToken: ((text: string) => void) | null, approve: ((json: string) => void) | null"
    )]
    pub fn run<'e>(
        &self,
        env: &'e Env,
        id: u32,
        prompt: String,
        params: String,
        on_token: Option<JsonCallback>,
        approve: Option<JsonCallback>,
    ) -> crate::Result<PromiseRaw<'e, String>> {
        let agent = Arc::clone(&self.agent);
        let guard = CallGuard {
            shared: Arc::clone(&self.shared),
            id,
        };
        let approve = approve.map(|cb| approve_fn(guard.shared.js_fn(cb)));
        promise(env, async move {
            let params: RunParams = parse("run options", &params)?;
            let cancel = guard.shared.calls.lock().unwrap().get(&id).cloned();
            let options = RunOptions {
                params,
                on_token: on_token.map(token_fn),
                approve,
                cancel,
            };
            to_json(&agent.run(&prompt, options).await.map_err(core_error)?)
        })
    }

    #[napi]
    pub fn model(&self) -> String {
        self.agent.provider().model()
    }

    #[napi]
    pub fn provider_name(&self) -> String {
        self.agent.provider().name().to_string()
    }

    #[napi]
    pub fn set_model(&self, model: String) {
        self.agent.set_model(&model);
    }

    #[napi]
    pub fn system_prompt(&self) -> String {
        self.agent.system_prompt()
    }

    /// Routes the pool's sampling requests to this agent's provider, asking `approve` first
    /// when given.
    #[napi(ts_args_type = "approve: ((json: string) => void) | null")]
    pub fn handle_sampling(&self, approve: Option<JsonCallback>) {
        let approve = approve.map(|cb| approve_fn(self.shared.js_fn(cb)));
        self.agent.handle_sampling(approve);
    }
}

#[napi]
impl NativeConversation {
    /// The function definitions to offer a model now, as JSON.
    #[napi]
    pub fn tools(&self) -> crate::Result<String> {
        to_json(&self.conversation.tools())
    }

    /// Ids of the servers activated so far, as JSON.
    #[napi]
    pub fn activated(&self) -> crate::Result<String> {
        to_json(&self.conversation.activated())
    }

    /// Calls a function of the conversation; `id` from the pool's `beginCall`.
    #[napi(ts_args_type = "id: number, name: string, arguments: string, timeoutMs?: number | null")]
    pub fn call<'e>(
        &self,
        env: &'e Env,
        id: u32,
        name: String,
        arguments: String,
        timeout_ms: Option<f64>,
    ) -> crate::Result<PromiseRaw<'e, String>> {
        let conversation = Arc::clone(&self.conversation);
        let guard = CallGuard {
            shared: Arc::clone(&self.shared),
            id,
        };
        promise(env, async move {
            let arguments: Value = parse("arguments", &arguments)?;
            let cancel = guard.shared.calls.lock().unwrap().get(&id).cloned();
            let options = CallOptions {
                timeout: timeout_ms
                    .filter(|ms| ms.is_finite() && *ms > 0.0)
                    .map(|ms| Duration::from_secs_f64(ms / 1000.0)),
                cancel,
                ..Default::default()
            };
            let result = conversation.call(&name, arguments, options).await;
            to_json(&result.map_err(core_error)?)
        })
    }
}
