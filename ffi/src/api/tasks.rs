//! Tool calls followed in the background: core's `TaskRun` behind a handle. The host starts a
//! call, reads or waits for the status of the task its server runs it as, cancels it, and
//! takes its result; every language follows a call with this same object.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use mcpmux_core::{CallOptions, CallSettings, TaskRun};

use crate::bodies::{answer_json, free_handle, new_handle, work};
use crate::calls::{PoolEntry, Work, pool_entry, run_async, run_blocking_into, timeout_of};
use crate::error::{guard, json_arg, opt_json_arg, opt_str_arg, out_arg, str_arg};
use crate::handles::{Table, Tag};
use crate::rt::rt;
use crate::{mcpmux_completion_fn, mcpmux_pool, mcpmux_request_id, mcpmux_status, mcpmux_task_run};

pub(crate) struct RunEntry {
    run: Arc<TaskRun>,
    pool: Arc<PoolEntry>,
}

static RUNS: Table<RunEntry> = Table::new(Tag::TaskRun, "task run");

/// Starts a call of tool `tool_id` in the background, as mcpmux_tools_call() makes it (the
/// same `arguments_json`, `options_json` and `timeout_ms`), and gives a handle to follow it:
/// for tools that run long (a server's tasks), where the host shows the status as it changes
/// and lets the user cancel. Free it with mcpmux_task_free() (the call goes on until it ends
/// or is cancelled).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_task_start(
    pool: mcpmux_pool,
    tool_id: *const c_char,
    arguments_json: *const c_char,
    options_json: *const c_char,
    timeout_ms: u32,
    out_run: *mut mcpmux_task_run,
) -> mcpmux_status {
    new_handle(out_run, "out_run", &RUNS, || {
        let entry = pool_entry(pool)?;
        let tool_id = unsafe { str_arg(tool_id, "tool_id") }?;
        let arguments: serde_json::Value =
            match unsafe { opt_str_arg(arguments_json, "arguments_json") }? {
                Some(text) => json_arg(text, "arguments_json")?,
                None => serde_json::Value::Null,
            };
        let settings: CallSettings = unsafe { opt_json_arg(options_json, "options_json") }?;
        let mut options = CallOptions {
            timeout: timeout_of(timeout_ms),
            ..CallOptions::default()
        };
        settings.apply(&mut options);
        let _ctx = rt().enter();
        let run = entry.pool.start_task(tool_id, arguments, options);
        Ok(RunEntry {
            run: Arc::new(run),
            pool: entry,
        })
    })
}

/// Frees a task run's handle; the call goes on until it ends (mcpmux_task_cancel() stops
/// it). A second free is MCPMUX_ERR_INVALID_HANDLE; 0 is ignored.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_task_free(run: mcpmux_task_run) -> mcpmux_status {
    free_handle(&RUNS, run)
}

/// The last status of the call's task, `{"taskId": ..., "status": "working" |
/// "input_required" | "completed" | "failed" | "cancelled", "statusMessage"?: ...}`, or `null`
/// while the server has announced none (and for a call answered at once). Does not wait.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_task_status(
    run: mcpmux_task_run,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    answer_json(out_json, || Ok(RUNS.get(run)?.run.status()))
}

fn changed_work(r: &Arc<RunEntry>) -> Work {
    let run = r.run.clone();
    work(async move { Ok::<_, mcpmux_core::Error>(run.changed().await) })
}

/// Waits for the next status not told yet (as mcpmux_task_status() gives it), or `null` once
/// the call has ended and its last status was told. `timeout_ms`: 0 waits as long as it takes;
/// past it, MCPMUX_ERR_TIMEOUT (the call goes on).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_task_changed(
    run: mcpmux_task_run,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    wait_blocking(run, timeout_ms, out_json, changed_work)
}

/// Asynchronous mcpmux_task_changed().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_task_changed_async(
    run: mcpmux_task_run,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    wait_async(
        run,
        timeout_ms,
        callback,
        user_data,
        out_request_id,
        changed_work,
    )
}

/// Cancels the call, and the task at the server: its result is then MCPMUX_ERR_CANCELLED.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_task_cancel(run: mcpmux_task_run) -> mcpmux_status {
    guard(|| {
        RUNS.get(run)?.run.cancel();
        Ok(())
    })
}

/// A wait on a run (`make` makes it from the run), answered into `*out_json`.
fn wait_blocking(
    run: mcpmux_task_run,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
    make: fn(&Arc<RunEntry>) -> Work,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_json, "out_json")?;
        let r = RUNS.get(run)?;
        run_blocking_into(&r.pool, make(&r), timeout_of(timeout_ms), out)
    })
}

/// A wait on a run (`make` makes it from the run), answered to the callback.
fn wait_async(
    run: mcpmux_task_run,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
    make: fn(&Arc<RunEntry>) -> Work,
) -> mcpmux_status {
    guard(|| {
        let r = RUNS.get(run)?;
        let work = make(&r);
        let timeout = timeout_of(timeout_ms);
        run_async(
            &r.pool,
            work,
            timeout,
            callback,
            user_data,
            out_request_id,
            None,
        )
    })
}

fn result_work(r: &Arc<RunEntry>) -> Work {
    let run = r.run.clone();
    work(async move { run.result().await })
}

/// Waits for the call's result, as mcpmux_tools_call() answers it. Given once: a second ask is
/// MCPMUX_ERR_INVALID_ARGUMENT. `timeout_ms`: 0 waits as long as it takes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_task_result(
    run: mcpmux_task_run,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    wait_blocking(run, timeout_ms, out_json, result_work)
}

/// Asynchronous mcpmux_task_result().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_task_result_async(
    run: mcpmux_task_run,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    wait_async(
        run,
        timeout_ms,
        callback,
        user_data,
        out_request_id,
        result_work,
    )
}
