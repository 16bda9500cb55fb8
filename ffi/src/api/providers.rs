//! Model providers: made from a config, or answered by the host.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use mcpmux_core::agent::{
    HostChat, HostChatFn, HostProvider, Provider, ProviderConfig, create_provider,
};

use crate::bodies::{answer_json, free_handle, new_handle};
use crate::error::{json_arg, opt_str_arg, str_arg};
use crate::handles::{Table, Tag};
use crate::host::{CHandler, Pending, ask, required_handler};
use crate::mcpmux_status::{self};
use crate::{mcpmux_free_fn, mcpmux_host_cancel_fn, mcpmux_host_request_fn, mcpmux_provider};

pub(crate) struct ProviderEntry {
    pub(crate) provider: Arc<dyn Provider>,
}

pub(crate) static PROVIDERS: Table<ProviderEntry> = Table::new(Tag::Provider, "provider");

/// Makes a provider from a JSON config: `{"type": "openai", "model": "...", "baseUrl":
/// "...", "apiKey": "...", "headers": {...}}` (any OpenAI-compatible Chat Completions API),
/// `{"type": "remote", "proxyUrl": "...", "model": "..."}` (a key-adding proxy),
/// `{"type": "anthropic", "model": ..., "baseUrl"?, "apiKey"?}` or `{"type": "ollama",
/// "model": ..., "baseUrl"?}`. Nothing is contacted yet. Free it with
/// mcpmux_provider_free() (agents keep their own reference).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_provider_create(
    config_json: *const c_char,
    out_provider: *mut mcpmux_provider,
) -> mcpmux_status {
    new_handle(out_provider, "out_provider", &PROVIDERS, || {
        let config: ProviderConfig = json_arg(
            unsafe { str_arg(config_json, "config_json") }?,
            "config_json",
        )?;
        Ok(ProviderEntry {
            provider: create_provider(config)?,
        })
    })
}

/// Makes a provider the host implements. For each model request of an agent run,
/// `chat(user_data, request, request_json, len)` receives on a library thread
/// `{"model": ..., "messages": [{"role": "user" | "assistant", "content": [blocks]}],
/// "tools": [{"name": ..., "description": ..., "inputSchema": {...}}], "system": ...,
/// "maxTokens": ..., "temperature": ...}` (blocks: `{"type": "text", "text": ...}`,
/// `{"type": "tool_use", "id", "name", "input"}`, `{"type": "tool_result", "toolUseId",
/// "content", "isError"}`, `{"type": "image", ...}`), and answers `request` once, inside
/// the callback or later from any thread, with mcpmux_host_request_respond() (the response,
/// see there) or mcpmux_host_request_refuse() (the run fails with MCPMUX_ERR_CONNECTION).
/// Before answering it may stream text with mcpmux_host_request_token(). `on_cancel` (may
/// be NULL) learns that the run was cancelled and the request is no longer awaited;
/// mcpmux_host_request_waiting() tells the same by polling. `name` (NULL: "host") names
/// the provider in messages; `model` (NULL: "") is what requests carry, changed by
/// mcpmux_agent_set_model(). `free_user_data` (may be NULL) runs once, when the provider
/// handle and every agent using it are freed and no request is waiting. When this function
/// fails, none of the callbacks is ever called.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_provider_new_host(
    name: *const c_char,
    model: *const c_char,
    chat: mcpmux_host_request_fn,
    on_cancel: mcpmux_host_cancel_fn,
    user_data: *mut c_void,
    free_user_data: mcpmux_free_fn,
    out_provider: *mut mcpmux_provider,
) -> mcpmux_status {
    new_handle(out_provider, "out_provider", &PROVIDERS, || {
        let name = unsafe { opt_str_arg(name, "name") }?
            .unwrap_or("host")
            .to_owned();
        let model = unsafe { opt_str_arg(model, "model") }?
            .unwrap_or("")
            .to_owned();
        let f = required_handler(chat, "chat")?;
        let h = CHandler::new(f, on_cancel, user_data, free_user_data, None);
        let provider_name = name.clone();
        let chat: HostChatFn = Arc::new(move |call: HostChat| {
            let json = match serde_json::to_string(&call.request) {
                Ok(j) => j,
                Err(e) => {
                    let message = format!("cannot serialize the request: {e}");
                    return Box::pin(async move { Err(message) });
                }
            };
            let provider = provider_name.clone();
            let on_token = call.on_token;
            let answer = ask(h.clone(), json, move |tx| Pending::Chat {
                tx,
                on_token,
                provider,
            });
            Box::pin(async move {
                answer
                    .await
                    .unwrap_or_else(|| Err("the host did not answer".into()))
            })
        });
        let provider = Arc::new(HostProvider::new(name, model, chat));
        Ok(ProviderEntry { provider })
    })
}

/// `{"name": ..., "model": ...}` of a provider.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_provider_info(
    provider: mcpmux_provider,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    answer_json(out_json, || {
        let p = PROVIDERS.get(provider)?;
        Ok(serde_json::json!({"name": p.provider.name(), "model": p.provider.model()}))
    })
}

/// Frees a provider handle (agents made with it keep working). A second free is
/// MCPMUX_ERR_INVALID_HANDLE; 0 is ignored.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_provider_free(provider: mcpmux_provider) -> mcpmux_status {
    free_handle(&PROVIDERS, provider)
}
