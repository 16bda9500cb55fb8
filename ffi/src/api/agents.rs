//! Agents over a pool and a provider: runs, approvals, sampling.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use mcpmux_core::agent::{Agent, AgentOptions, ApproveFn, RunOptions, RunParams, TokenFn};
use tokio_util::sync::CancellationToken;

use crate::api::providers::PROVIDERS;
use crate::bodies::{answer_json, free_handle, new_handle, work};
use crate::calls::{
    Gate, PoolEntry, UserData, Work, pool_entry, run_async_with, run_blocking_with, timeout_of,
};
use crate::error::{
    FfiResult, c_string, guard, into_c_string, json_arg, opt_str_arg, out_arg, str_arg,
};
use crate::handles::{Table, Tag};
use crate::host::{CHandler, Pending, ask};
use crate::mcpmux_status::{self};
use crate::rt::call_out;
use crate::{
    mcpmux_agent, mcpmux_completion_fn, mcpmux_free_fn, mcpmux_host_request_fn, mcpmux_pool,
    mcpmux_provider, mcpmux_request_id, mcpmux_token_fn,
};

pub(crate) struct AgentEntry {
    agent: Arc<Agent>,
    pool: Arc<PoolEntry>,
}

static AGENTS: Table<AgentEntry> = Table::new(Tag::Agent, "agent");

/// Makes an agent over an open pool's servers and host tools and a provider.
/// `options_json` (NULL for the defaults): `{"maxIterations": 10, "instructions": "...",
/// "maxTokens": n, "temperature": t, "keepRecentTurns": 2, "compressOverChars": 2000,
/// "previewChars": 200, "contextBudgetTokens": 100000, "serverInstructionsChars": 2000,
/// "approvalPolicy": "trusted", "askDestructive": true, "toolTimeoutMs": n, "toolMaxTotalMs":
/// n}` (each server's `instructions` go
/// into the system prompt, cut to that many characters; `approvalPolicy` says which tools the
/// run's approval callback is asked about: "trusted" asks for untrusted servers' tools,
/// tools in `disabledAutoApproveTools` and tools that say they destroy unless
/// `askDestructive` is false, "read_only" lets only trusted servers' read-only tools run
/// unasked, "always" asks for every tool; `toolTimeoutMs` is how long a tool call may go
/// without progress, `toolMaxTotalMs` the most it may take in all; every field optional,
/// unknown fields rejected). The agent keeps its own reference to the
/// provider. Free it with mcpmux_agent_free(); closing the pool ends its runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_agent_new(
    pool: mcpmux_pool,
    provider: mcpmux_provider,
    options_json: *const c_char,
    out_agent: *mut mcpmux_agent,
) -> mcpmux_status {
    new_handle(out_agent, "out_agent", &AGENTS, || {
        let entry = pool_entry(pool)?;
        let provider = PROVIDERS.get(provider)?.provider.clone();
        let options: AgentOptions = match unsafe { opt_str_arg(options_json, "options_json") }? {
            Some(text) => json_arg(text, "options_json")?,
            None => AgentOptions::default(),
        };
        let agent = Agent::new(entry.pool.clone(), provider, options);
        Ok(AgentEntry {
            agent: Arc::new(agent),
            pool: entry,
        })
    })
}

/// Frees an agent handle; runs in progress finish. A second free is
/// MCPMUX_ERR_INVALID_HANDLE; 0 is ignored.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_agent_free(agent: mcpmux_agent) -> mcpmux_status {
    free_handle(&AGENTS, agent)
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
    answer_json(out_json, || {
        let a = AGENTS.get(agent)?;
        let p = a.agent.provider();
        Ok(serde_json::json!({
            "provider": p.name(),
            "model": p.model(),
            "systemPrompt": a.agent.system_prompt(),
        }))
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
/// is asked before a tool the agent's approval policy names runs (by default: a tool of an
/// untrusted server, one listed in the server's disabledAutoApproveTools, or one that says
/// it destroys): it receives `{"toolId": ..., "serverName": ..., "serverId": ...,
/// "arguments": {...}, "title": ..., "description": ..., "annotations": {...}, "trusted":
/// true, "reason": "destructive"}` (a tool of a trusted server that changed since it was
/// trusted has "reason": "changed_since_trusted" or "new_since_trusted", and a "change"
/// saying what is not as the user saw it); the answer is given with
/// mcpmux_host_request_respond(request,
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
        a.agent.handle_sampling(approve);
        Ok(())
    })
}
