//! Host tools, recipes, providers, agents and conversations: handles over core's objects,
//! and C callbacks adapted to core's handler types. No behaviour of its own.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use mcpmux_core::HostTool;
use mcpmux_core::agent::{
    Agent, AgentOptions, ApproveFn, HostChat, HostChatFn, HostProvider, Provider, ProviderConfig,
    RunOptions, RunParams, TokenFn, create_provider, sampling_handler,
};
use mcpmux_core::{CallOptions, Conversation};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::api::work;
use crate::calls::{
    Gate, PoolEntry, UserData, Work, pool_entry, run_async, run_async_with, run_blocking_into,
    run_blocking_with, timeout_of,
};
use crate::error::{
    FfiError, FfiResult, c_string, guard, into_c_string, json_arg, opt_str_arg, out_arg, str_arg,
    to_json,
};
use crate::handles::{Table, Tag};
use crate::host::{CHandler, Pending, ask, required_handler};
use crate::mcpmux_status::{self, *};
use crate::rt::call_out;
use crate::{
    mcpmux_agent, mcpmux_completion_fn, mcpmux_conversation, mcpmux_free_fn, mcpmux_host_cancel_fn,
    mcpmux_host_request_fn, mcpmux_pool, mcpmux_provider, mcpmux_request_id, mcpmux_token_fn,
};

/// Writes `json` into an optional output pointer (NULL: the caller does not want it).
fn opt_out(out: *mut *mut c_char, json: impl FnOnce() -> FfiResult<String>) -> FfiResult<()> {
    // SAFETY: optional output pointer (header conventions).
    if let Some(out) = unsafe { out.as_mut() } {
        *out = into_c_string(json()?);
    }
    Ok(())
}

/// Clears an optional output pointer first, so it is NULL on failure.
fn clear(out: *mut *mut c_char) {
    // SAFETY: optional output pointer (header conventions).
    if let Some(out) = unsafe { out.as_mut() } {
        *out = std::ptr::null_mut();
    }
}

// ---------------------------------------------------------------------------------------
// Host tools
// ---------------------------------------------------------------------------------------

/// Registers (or replaces) a tool of the host application, listed with the servers' tools
/// under server "local" and called through mcpmux_tools_call() with its `name` as tool id,
/// and by agents and conversations. `name`: 1 to 64 characters of `[A-Za-z0-9_-]`, not
/// starting with `mcp__`; `input_schema_json`: a JSON Schema object with `"type":
/// "object"`; `description` may be NULL.
///
/// Each call's arguments are checked against the schema first (a bad call answers an
/// isError result with the errors and the schema, without calling `handler`). Then
/// `handler(user_data, request, arguments_json, len)` runs on a library thread and must
/// answer `request` exactly once, inside the handler or later from any thread, with
/// mcpmux_host_request_respond() (the result JSON) or mcpmux_host_request_refuse() (an
/// isError result with the reason). `on_cancel` (may be NULL) learns that a call is no
/// longer awaited (it was cancelled or timed out, or the pool closed).
/// `free_user_data` (may be NULL) runs once, after the last callback: when the tool is
/// replaced or unregistered, or the pool closed, and no call of it is waiting. When this
/// function fails, none of them is ever called and `user_data` stays the caller's.
/// `out_json` (may be NULL) receives the tool as mcpmux_tools_list() lists it.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments, reason = "a C signature")]
pub unsafe extern "C" fn mcpmux_tools_register(
    pool: mcpmux_pool,
    name: *const c_char,
    description: *const c_char,
    input_schema_json: *const c_char,
    handler: mcpmux_host_request_fn,
    on_cancel: mcpmux_host_cancel_fn,
    user_data: *mut c_void,
    free_user_data: mcpmux_free_fn,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        clear(out_json);
        let entry = pool_entry(pool)?;
        let name = unsafe { str_arg(name, "name") }?.to_owned();
        let description = unsafe { opt_str_arg(description, "description") }?
            .unwrap_or_default()
            .to_owned();
        let schema: Value = json_arg(
            unsafe { str_arg(input_schema_json, "input_schema_json") }?,
            "input_schema_json",
        )?;
        let f = required_handler(handler, "handler")?;
        let h = CHandler::new(f, on_cancel, user_data, free_user_data, None);
        let tool_handler = h.clone();
        let tool = HostTool {
            name,
            description,
            input_schema: schema,
            handler: Arc::new(move |arguments: Value| {
                let answer = ask(tool_handler.clone(), arguments.to_string(), Pending::Tool);
                Box::pin(async move {
                    answer
                        .await
                        .unwrap_or_else(|| Err("the host did not answer".into()))
                })
            }),
        };
        match entry.pool.register_tool(tool) {
            Ok(info) => {
                drop(h);
                opt_out(out_json, || to_json(&info))
            }
            Err(e) => {
                h.disarm();
                Err(e.into())
            }
        }
    })
}

/// Removes a host tool registered with mcpmux_tools_register() (or one of the recipe
/// tools); calls of it already running still get their answer. MCPMUX_ERR_NOT_FOUND when
/// there is no host tool of that name.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_tools_unregister(
    pool: mcpmux_pool,
    name: *const c_char,
) -> mcpmux_status {
    guard(|| {
        let entry = pool_entry(pool)?;
        let name = unsafe { str_arg(name, "name") }?;
        if entry.pool.unregister_tool(name) {
            Ok(())
        } else {
            Err(FfiError::new(
                MCPMUX_ERR_NOT_FOUND,
                format!("there is no host tool '{name}'"),
            ))
        }
    })
}

// ---------------------------------------------------------------------------------------
// Recipes and the canvas
// ---------------------------------------------------------------------------------------

/// Adds (or replaces) a recipe: markdown with YAML front matter (`widget` or `name`,
/// `description`, `schema`: a JSON Schema of the widget's parameters) and instructions
/// after it. The first recipe also registers the host tools `widget_display` and `canvas`.
/// `out_json` (may be NULL) receives `{"name": ..., "description": ..., "schema": {...},
/// "body": "..."}`. A malformed recipe is MCPMUX_ERR_INVALID_ARGUMENT.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_recipes_register(
    pool: mcpmux_pool,
    markdown: *const c_char,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        clear(out_json);
        let entry = pool_entry(pool)?;
        let markdown = unsafe { str_arg(markdown, "markdown") }?;
        let recipe = entry.pool.register_recipe(markdown)?;
        opt_out(out_json, || to_json(&recipe))
    })
}

/// Every recipe: `[{"name": ..., "description": ...}]`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_recipes_list(
    pool: mcpmux_pool,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        let entry = pool_entry(pool)?;
        *out = into_c_string(to_json(&entry.pool.recipes().list())?);
        Ok(())
    })
}

/// One recipe by name, like mcpmux_recipes_register() answers it. MCPMUX_ERR_NOT_FOUND
/// when there is none.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_recipes_get(
    pool: mcpmux_pool,
    name: *const c_char,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        let name = unsafe { str_arg(name, "name") }?;
        let entry = pool_entry(pool)?;
        let recipe = entry.pool.recipes().get(name).ok_or_else(|| {
            FfiError::new(MCPMUX_ERR_NOT_FOUND, format!("there is no recipe '{name}'"))
        })?;
        *out = into_c_string(to_json(&recipe)?);
        Ok(())
    })
}

/// Recipes ranked for `query` (name, description, parameter names), best first, at most
/// `limit` (0: not given, which is 10): a JSON array of `{"name": ..., "description": ..., "score": ...}`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_recipes_search(
    pool: mcpmux_pool,
    query: *const c_char,
    limit: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        let query = unsafe { str_arg(query, "query") }?;
        let entry = pool_entry(pool)?;
        // C has no optional integers: 0 is "not given", and core says what that means.
        let limit = (limit != 0).then_some(limit as usize);
        *out = into_c_string(to_json(&entry.pool.search_recipes(query, limit)?)?);
        Ok(())
    })
}

/// The pool's canvas (the widgets shown with `widget_display`) as JSON.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_canvas_get(
    pool: mcpmux_pool,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        let entry = pool_entry(pool)?;
        *out = into_c_string(to_json(&entry.pool.canvas().to_json())?);
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// Providers
// ---------------------------------------------------------------------------------------

pub(crate) struct ProviderEntry {
    provider: Arc<dyn Provider>,
}

static PROVIDERS: Table<ProviderEntry> = Table::new(Tag::Provider, "provider");

fn provider_handle(provider: Arc<dyn Provider>, out: &mut mcpmux_provider) {
    *out = PROVIDERS.insert(Arc::new(ProviderEntry { provider }));
}

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
    guard(|| {
        let out = out_arg(out_provider, "out_provider")?;
        *out = 0;
        let config: ProviderConfig = json_arg(
            unsafe { str_arg(config_json, "config_json") }?,
            "config_json",
        )?;
        provider_handle(create_provider(config)?, out);
        Ok(())
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
    guard(|| {
        let out = out_arg(out_provider, "out_provider")?;
        *out = 0;
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
        provider_handle(Arc::new(HostProvider::new(name, model, chat)), out);
        Ok(())
    })
}

/// `{"name": ..., "model": ...}` of a provider.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_provider_info(
    provider: mcpmux_provider,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        let p = PROVIDERS.get(provider)?;
        *out = into_c_string(
            serde_json::json!({"name": p.provider.name(), "model": p.provider.model()}).to_string(),
        );
        Ok(())
    })
}

/// Frees a provider handle (agents made with it keep working). A second free is
/// MCPMUX_ERR_INVALID_HANDLE; 0 is ignored.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_provider_free(provider: mcpmux_provider) -> mcpmux_status {
    if provider == 0 {
        return MCPMUX_OK;
    }
    guard(|| PROVIDERS.remove(provider).map(drop))
}

// ---------------------------------------------------------------------------------------
// Agents
// ---------------------------------------------------------------------------------------

pub(crate) struct AgentEntry {
    agent: Arc<Agent>,
    pool: Arc<PoolEntry>,
}

static AGENTS: Table<AgentEntry> = Table::new(Tag::Agent, "agent");

/// Makes an agent over an open pool's servers and host tools and a provider.
/// `options_json` (NULL for the defaults): `{"maxIterations": 10, "instructions": "...",
/// "maxTokens": n, "temperature": t, "keepRecentTurns": 2, "compressOverChars": 2000,
/// "previewChars": 200, "contextBudgetTokens": 100000}` (every field optional, unknown
/// fields rejected). The agent keeps its own reference to the provider. Free it with
/// mcpmux_agent_free(); closing the pool ends its runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_agent_new(
    pool: mcpmux_pool,
    provider: mcpmux_provider,
    options_json: *const c_char,
    out_agent: *mut mcpmux_agent,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_agent, "out_agent")?;
        *out = 0;
        let entry = pool_entry(pool)?;
        let provider = PROVIDERS.get(provider)?.provider.clone();
        let options: AgentOptions = match unsafe { opt_str_arg(options_json, "options_json") }? {
            Some(text) => json_arg(text, "options_json")?,
            None => AgentOptions::default(),
        };
        let agent = Agent::new(entry.pool.clone(), provider, options);
        *out = AGENTS.insert(Arc::new(AgentEntry {
            agent: Arc::new(agent),
            pool: entry,
        }));
        Ok(())
    })
}

/// Frees an agent handle; runs in progress finish. A second free is
/// MCPMUX_ERR_INVALID_HANDLE; 0 is ignored.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_agent_free(agent: mcpmux_agent) -> mcpmux_status {
    if agent == 0 {
        return MCPMUX_OK;
    }
    guard(|| AGENTS.remove(agent).map(drop))
}

/// Switches the agent's model (its provider's, so every agent sharing the provider) for
/// later requests.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_agent_set_model(
    agent: mcpmux_agent,
    model: *const c_char,
) -> mcpmux_status {
    guard(|| {
        let model = unsafe { str_arg(model, "model") }?;
        AGENTS.get(agent)?.agent.set_model(model);
        Ok(())
    })
}

/// `{"provider": ..., "model": ..., "systemPrompt": ...}` of an agent (the system prompt
/// as the next run would send it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_agent_info(
    agent: mcpmux_agent,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        let a = AGENTS.get(agent)?;
        let p = a.agent.provider();
        *out = into_c_string(
            serde_json::json!({
                "provider": p.name(),
                "model": p.model(),
                "systemPrompt": a.agent.system_prompt(),
            })
            .to_string(),
        );
        Ok(())
    })
}

/// An approval callback as core's ApproveFn: no answer is a denial.
fn approve_fn(h: Arc<CHandler>) -> ApproveFn {
    Arc::new(move |req| {
        let json = serde_json::to_string(&req).unwrap_or_default();
        let answer = ask(h.clone(), json, Pending::Approval);
        Box::pin(async move { answer.await.unwrap_or(mcpmux_core::agent::Approval::Deny) })
    })
}

/// What a run needs, checked before it starts.
struct RunSetup {
    entry: Arc<AgentEntry>,
    prompt: String,
    params: RunParams,
    cancel: CancellationToken,
    gate: Arc<Gate>,
}

unsafe fn run_setup(
    agent: mcpmux_agent,
    prompt: *const c_char,
    params_json: *const c_char,
) -> FfiResult<RunSetup> {
    let entry = AGENTS.get(agent)?;
    let prompt = unsafe { str_arg(prompt, "prompt") }?.to_owned();
    let params: RunParams = match unsafe { opt_str_arg(params_json, "params_json") }? {
        Some(text) => json_arg(text, "params_json")?,
        None => RunParams::default(),
    };
    entry.pool.check_open()?;
    Ok(RunSetup {
        entry,
        prompt,
        params,
        cancel: CancellationToken::new(),
        gate: Arc::new(Gate::default()),
    })
}

fn run_work(
    setup: &RunSetup,
    on_token: mcpmux_token_fn,
    on_approve: mcpmux_host_request_fn,
    user_data: *mut c_void,
) -> Work {
    let user = UserData(user_data);
    let on_token = on_token.map(|f| {
        let gate = setup.gate.clone();
        Arc::new(move |text: &str| {
            let user = user;
            let c = c_string(text);
            // SAFETY: the caller's token callback with the run's user data.
            gate.run(|| call_out(|| unsafe { f(user.0, c.as_ptr(), c.as_bytes().len()) }));
        }) as TokenFn
    });
    let approve = on_approve.map(|f| {
        approve_fn(CHandler::new(
            f,
            None,
            user_data,
            None,
            Some(setup.gate.clone()),
        ))
    });
    let options = RunOptions {
        params: setup.params.clone(),
        on_token,
        approve,
        cancel: Some(setup.cancel.clone()),
    };
    let agent = setup.entry.agent.clone();
    let prompt = setup.prompt.clone();
    work(async move { agent.run(&prompt, options).await })
}

/// Runs the agent on one user `prompt`: it asks the provider, runs the tools the model asks
/// for (discovery tools first; a server's tools once it is used), feeds results back, until
/// the model answers without tools or maxIterations is reached. `params_json` (may be NULL):
/// `{"history": [messages of an earlier result's transcript], "attachments": [{"server":
/// ..., "uri": ...}], "servers": {"enabled": [ids or names], "disabled": [...]}}`.
///
/// `callback` gets the result `{"text": ..., "transcript": [messages], "usage":
/// {"inputTokens": n, "outputTokens": n}, "stop": "finished" | "max_iterations" |
/// "cancelled", "iterations": n}`, or the error (e.g. a provider failure).
/// mcpmux_cancel(*out_request_id) stops the run gracefully: the provider request and tool
/// calls in flight are cancelled and `callback` gets MCPMUX_OK with `"stop": "cancelled"`
/// and the transcript so far.
///
/// `on_token` (may be NULL) receives streamed text of the model. `on_approve` (may be NULL)
/// is asked before a tool of an untrusted server (or one listed in the server's
/// disabledAutoApproveTools) runs: it receives `{"toolId": ..., "serverName": ...,
/// "arguments": {...}}` and the answer is given with mcpmux_host_request_respond(request,
/// "\"once\"" | "\"always\"" | "\"deny\"") or mcpmux_host_request_refuse() (deny); a
/// denial is told to the model. Without `on_approve` such tools are denied. Both get
/// `user_data` and are never called once `callback` is due.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments, reason = "a C signature")]
pub unsafe extern "C" fn mcpmux_agent_run(
    agent: mcpmux_agent,
    prompt: *const c_char,
    params_json: *const c_char,
    on_token: mcpmux_token_fn,
    on_approve: mcpmux_host_request_fn,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    guard(|| {
        let setup = unsafe { run_setup(agent, prompt, params_json) }?;
        let work = run_work(&setup, on_token, on_approve, user_data);
        run_async_with(
            &setup.entry.pool,
            work,
            None,
            callback,
            user_data,
            out_request_id,
            Some(setup.gate.clone()),
            Some(setup.cancel.clone()),
        )
    })
}

/// Blocking mcpmux_agent_run(): waits for the result and writes it to `*out_json`.
/// `timeout_ms` (0: none) bounds the whole run; when it passes, the run is abandoned and
/// the status is MCPMUX_ERR_TIMEOUT.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments, reason = "a C signature")]
pub unsafe extern "C" fn mcpmux_agent_run_wait(
    agent: mcpmux_agent,
    prompt: *const c_char,
    params_json: *const c_char,
    on_token: mcpmux_token_fn,
    on_approve: mcpmux_host_request_fn,
    user_data: *mut c_void,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        let setup = unsafe { run_setup(agent, prompt, params_json) }?;
        let work = run_work(&setup, on_token, on_approve, user_data);
        let result = run_blocking_with(
            &setup.entry.pool,
            work,
            timeout_of(timeout_ms),
            Some(setup.cancel.clone()),
        );
        setup.gate.close();
        *out = into_c_string(result?);
        Ok(())
    })
}

/// Answers the pool's sampling requests (`sampling/createMessage` from servers) with the
/// agent's provider, replacing any sampling handler. `on_approve` (may be NULL: no
/// question) is asked first with `{"toolId": "sampling/createMessage", "serverName": ...,
/// "arguments": {the request's params}}` and answered like mcpmux_agent_run()'s; a denial
/// refuses the server. `free_user_data` (may be NULL) runs once the handler is replaced or
/// the pool closed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_agent_handle_sampling(
    agent: mcpmux_agent,
    on_approve: mcpmux_host_request_fn,
    user_data: *mut c_void,
    free_user_data: mcpmux_free_fn,
) -> mcpmux_status {
    guard(|| {
        let a = AGENTS.get(agent)?;
        a.pool.check_open()?;
        let approve =
            on_approve.map(|f| approve_fn(CHandler::new(f, None, user_data, free_user_data, None)));
        a.pool
            .pool
            .set_sampling_handler(Some(sampling_handler(a.agent.provider().clone(), approve)));
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// Conversations
// ---------------------------------------------------------------------------------------

pub(crate) struct ConversationEntry {
    conversation: Arc<Conversation>,
    pool: Arc<PoolEntry>,
}

static CONVERSATIONS: Table<ConversationEntry> = Table::new(Tag::Conversation, "conversation");

/// Starts a conversation over an open pool: what an LLM of the host's own loop may call.
/// It offers discovery tools first (`search_tools`, and per server `{server}_mcp_list_tools`,
/// `_search_tools`, `_list_recipes`, `_search_recipes`, `_get_recipe`), answered locally;
/// calling a server's real tool activates all that server's tools. `filter_json` (NULL: all
/// servers): `{"enabled": [ids or names], "disabled": [...]}`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_conversation_new(
    pool: mcpmux_pool,
    filter_json: *const c_char,
    out_conversation: *mut mcpmux_conversation,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_conversation, "out_conversation")?;
        *out = 0;
        let entry = pool_entry(pool)?;
        // Core does not export the filter's type; its parameter names it here.
        let conversation = Arc::new(match unsafe { opt_str_arg(filter_json, "filter_json") }? {
            Some(text) => entry.pool.conversation_with(json_arg(text, "filter_json")?),
            None => entry.pool.conversation(),
        });
        *out = CONVERSATIONS.insert(Arc::new(ConversationEntry {
            conversation,
            pool: entry,
        }));
        Ok(())
    })
}

/// Frees a conversation handle; calls in progress finish. A second free is
/// MCPMUX_ERR_INVALID_HANDLE; 0 is ignored.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_conversation_free(conversation: mcpmux_conversation) -> mcpmux_status {
    if conversation == 0 {
        return MCPMUX_OK;
    }
    guard(|| CONVERSATIONS.remove(conversation).map(drop))
}

/// The function definitions to offer the LLM now:
/// `[{"name": ..., "description": ..., "inputSchema": {...}}]`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_conversation_tools(
    conversation: mcpmux_conversation,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        let c = CONVERSATIONS.get(conversation)?;
        *out = into_c_string(to_json(&c.conversation.tools())?);
        Ok(())
    })
}

/// Ids of the servers the conversation has activated so far (a JSON array).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_conversation_activated(
    conversation: mcpmux_conversation,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        let c = CONVERSATIONS.get(conversation)?;
        *out = into_c_string(to_json(&c.conversation.activated())?);
        Ok(())
    })
}

fn conversation_call_work(
    c: &Arc<ConversationEntry>,
    name: *const c_char,
    arguments_json: *const c_char,
    timeout_ms: u32,
) -> FfiResult<Work> {
    let name = unsafe { str_arg(name, "name") }?.to_owned();
    let arguments: Value = match unsafe { opt_str_arg(arguments_json, "arguments_json") }? {
        Some(text) => json_arg(text, "arguments_json")?,
        None => Value::Object(Default::default()),
    };
    let options = CallOptions {
        timeout: timeout_of(timeout_ms),
        ..CallOptions::default()
    };
    let c = c.clone();
    Ok(work(async move {
        c.conversation.call(&name, arguments, options).await
    }))
}

/// Calls a function the LLM asked for by `name` (a discovery tool, a host tool or a pool
/// tool id) with `arguments_json` (a JSON object, NULL for none): answers a CallToolResult
/// like mcpmux_tools_call(). `timeout_ms`: 0 for the pool's request timeout.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_conversation_call(
    conversation: mcpmux_conversation,
    name: *const c_char,
    arguments_json: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        *out = std::ptr::null_mut();
        let c = CONVERSATIONS.get(conversation)?;
        let work = conversation_call_work(&c, name, arguments_json, timeout_ms)?;
        run_blocking_into(&c.pool, work, None, out)
    })
}

/// Asynchronous mcpmux_conversation_call(); mcpmux_cancel() cancels it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_conversation_call_async(
    conversation: mcpmux_conversation,
    name: *const c_char,
    arguments_json: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    guard(|| {
        let c = CONVERSATIONS.get(conversation)?;
        let work = conversation_call_work(&c, name, arguments_json, timeout_ms)?;
        run_async(
            &c.pool,
            work,
            None,
            callback,
            user_data,
            out_request_id,
            None,
        )
    })
}
