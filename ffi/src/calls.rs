//! Open pools, requests in flight, cancellation and the drain on close.

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::FutureExt;
use mcpmux_core::Pool;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::api::events::Subscription;
use crate::error::{FfiError, FfiResult, into_c_string, panic_error, set_last_error};
use crate::handles::{Table, Tag};
use crate::mcpmux_status::*;
use crate::rt::{block_on, call_out, on_runtime_thread, rt};
use crate::{mcpmux_completion_fn, mcpmux_pool};

/// The work of one request: its JSON result.
pub(crate) type Work = Pin<Box<dyn Future<Output = FfiResult<String>> + Send>>;

/// An open pool and what the C side started on it.
pub(crate) struct PoolEntry {
    pub pool: Pool,
    pub closing: AtomicBool,
    /// Requests (and blocking calls) not yet finished, callbacks included.
    in_flight: watch::Sender<usize>,
    /// Cancellation of each request in flight, by request id.
    requests: Mutex<HashMap<u64, CancellationToken>>,
    /// Event subscriptions, ended when the pool closes.
    pub subscriptions: Mutex<HashMap<u64, Arc<Subscription>>>,
}

pub(crate) static POOLS: Table<PoolEntry> = Table::new(Tag::Pool, "pool");

/// Where `mcpmux_cancel` finds a request by id alone.
static REQUESTS: Mutex<Option<HashMap<u64, CancellationToken>>> = Mutex::new(None);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub(crate) fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Locks a mutex even if a panic poisoned it: every critical section here leaves its map
/// consistent, so the data is still good.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn registry() -> MutexGuard<'static, Option<HashMap<u64, CancellationToken>>> {
    lock(&REQUESTS)
}

impl PoolEntry {
    pub fn new(pool: Pool) -> Arc<Self> {
        Arc::new(PoolEntry {
            pool,
            closing: AtomicBool::new(false),
            in_flight: watch::channel(0).0,
            requests: Mutex::new(HashMap::new()),
            subscriptions: Mutex::new(HashMap::new()),
        })
    }

    pub fn check_open(&self) -> FfiResult<()> {
        if self.closing.load(Ordering::SeqCst) {
            return Err(FfiError::new(
                MCPMUX_ERR_SHUTTING_DOWN,
                "the pool is shutting down",
            ));
        }
        Ok(())
    }
}

/// The open pool behind a handle.
pub(crate) fn pool_entry(pool: mcpmux_pool) -> FfiResult<Arc<PoolEntry>> {
    let entry = POOLS.get(pool)?;
    entry.check_open()?;
    Ok(entry)
}

/// Starts `work` on the runtime as request `id`, and calls `done` with its outcome exactly
/// once. `timeout` bounds the whole request. The request counts as in flight until `done`
/// has returned, so a close that returns has no callback left running. `soft` (when given)
/// is a token the work watches itself and ends gracefully on (an agent run answers its
/// result so far): mcpmux_cancel() fires it instead of abandoning the work. Closing the pool
/// still abandons it.
pub(crate) fn start_with(
    entry: &Arc<PoolEntry>,
    work: Work,
    timeout: Option<Duration>,
    soft: Option<CancellationToken>,
    done: impl FnOnce(FfiResult<String>) + Send + 'static,
) -> FfiResult<u64> {
    // Counted before the check: a close that starts now either sees this request in
    // flight and waits for it, or this check sees the close; never neither.
    entry.in_flight.send_modify(|n| *n += 1);
    if let Err(e) = entry.check_open() {
        entry.in_flight.send_modify(|n| *n -= 1);
        return Err(e);
    }
    let id = next_id();
    let token = CancellationToken::new();
    lock(&entry.requests).insert(id, token.clone());
    registry()
        .get_or_insert_with(HashMap::new)
        .insert(id, soft.unwrap_or_else(|| token.clone()));
    let entry = entry.clone();
    rt().spawn(async move {
        let work = AssertUnwindSafe(work).catch_unwind();
        let bounded = async {
            match timeout {
                None => work.await,
                Some(d) => match tokio::time::timeout(d, work).await {
                    Ok(r) => r,
                    Err(_) => Ok(Err(FfiError::new(
                        MCPMUX_ERR_TIMEOUT,
                        format!("timed out after {} ms", d.as_millis()),
                    ))),
                },
            }
        };
        let outcome = tokio::select! {
            biased;
            _ = token.cancelled() => Err(if entry.closing.load(Ordering::SeqCst) {
                FfiError::new(MCPMUX_ERR_SHUTTING_DOWN, "the pool was closed before the request finished")
            } else {
                FfiError::new(MCPMUX_ERR_CANCELLED, "cancelled")
            }),
            r = bounded => r.unwrap_or_else(|p| Err(panic_error(p))),
        };
        // Unregistered before the callback: cancelling a request from its own completion
        // callback is then "not found", like any finished request.
        if let Some(map) = registry().as_mut() {
            map.remove(&id);
        }
        lock(&entry.requests).remove(&id);
        let _ = std::panic::catch_unwind(AssertUnwindSafe(|| done(outcome)));
        entry.in_flight.send_modify(|n| *n -= 1);
    });
    Ok(id)
}

/// Cancels a request by id; `NOT_FOUND` when it finished already or never existed.
pub(crate) fn cancel(id: u64) -> FfiResult<()> {
    let token = registry().as_mut().and_then(|m| m.get(&id).cloned());
    match token {
        Some(t) => {
            t.cancel();
            Ok(())
        }
        None => Err(FfiError::new(
            MCPMUX_ERR_NOT_FOUND,
            format!("request {id} is not running (finished, or never started)"),
        )),
    }
}

/// Runs `work` as a request and waits for it: the blocking variant of every call.
pub(crate) fn run_blocking(
    entry: &Arc<PoolEntry>,
    work: Work,
    timeout: Option<Duration>,
) -> FfiResult<String> {
    run_blocking_with(entry, work, timeout, None)
}

/// [`run_blocking`] with a soft cancellation token (see [`start_with`]).
pub(crate) fn run_blocking_with(
    entry: &Arc<PoolEntry>,
    work: Work,
    timeout: Option<Duration>,
    soft: Option<CancellationToken>,
) -> FfiResult<String> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    start_with(entry, work, timeout, soft, move |r| {
        let _ = tx.send(r);
    })?;
    let received = if on_runtime_thread() {
        tokio::task::block_in_place(|| rx.recv())
    } else {
        rx.recv()
    };
    received.unwrap_or_else(|_| {
        Err(FfiError::new(
            MCPMUX_ERR_PANIC,
            "request ended without an answer",
        ))
    })
}

/// Like [`run_blocking`], writing the JSON into `*out` (NULL on failure).
pub(crate) fn run_blocking_into(
    entry: &Arc<PoolEntry>,
    work: Work,
    timeout: Option<Duration>,
    out: &mut *mut c_char,
) -> FfiResult<()> {
    *out = std::ptr::null_mut();
    let json = run_blocking(entry, work, timeout)?;
    *out = into_c_string(json);
    Ok(())
}

/// A `user_data` pointer carried to another thread; the C caller vouches for that.
#[derive(Clone, Copy)]
pub(crate) struct UserData(pub *mut c_void);
// SAFETY: the header tells callers that callbacks get user_data on library threads.
unsafe impl Send for UserData {}
unsafe impl Sync for UserData {}

/// Starts `work` and reports to a C completion callback.
pub(crate) fn run_async(
    entry: &Arc<PoolEntry>,
    work: Work,
    timeout: Option<Duration>,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut u64,
    gate: Option<Arc<Gate>>,
) -> FfiResult<()> {
    run_async_with(
        entry,
        work,
        timeout,
        callback,
        user_data,
        out_request_id,
        gate,
        None,
    )
}

/// [`run_async`] with a soft cancellation token (see [`start_with`]).
#[allow(
    clippy::too_many_arguments,
    reason = "the C call's arguments, passed through"
)]
pub(crate) fn run_async_with(
    entry: &Arc<PoolEntry>,
    work: Work,
    timeout: Option<Duration>,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut u64,
    gate: Option<Arc<Gate>>,
    soft: Option<CancellationToken>,
) -> FfiResult<()> {
    let Some(callback) = callback else {
        return Err(FfiError::new(MCPMUX_ERR_NULL_ARGUMENT, "callback is NULL"));
    };
    let user_data = UserData(user_data);
    let id = start_with(entry, work, timeout, soft, move |outcome| {
        let user_data = user_data;
        if let Some(gate) = gate {
            gate.close();
        }
        let (status, json) = match outcome {
            Ok(json) => (MCPMUX_OK, json),
            Err(e) => {
                set_last_error(&e);
                (e.status, e.to_json())
            }
        };
        let c = std::ffi::CString::new(json).unwrap_or_default();
        let len = c.as_bytes().len();
        // SAFETY: a C function pointer given for exactly this call.
        call_out(|| unsafe { callback(user_data.0, status, c.as_ptr(), len) });
    })?;
    // SAFETY: optional output pointer (header conventions).
    if let Some(out) = unsafe { out_request_id.as_mut() } {
        *out = id;
    }
    Ok(())
}

/// Keeps a request's other callbacks (progress) from running once its completion callback
/// is due: after the completion, the caller may free what they use.
#[derive(Default)]
pub(crate) struct Gate {
    closed: Mutex<bool>,
}

impl Gate {
    /// Runs `f` unless the gate is closed; holds the gate meanwhile, so closing waits.
    pub fn run(&self, f: impl FnOnce()) {
        let closed = lock(&self.closed);
        if !*closed {
            f();
        }
    }

    pub fn close(&self) {
        *lock(&self.closed) = true;
    }
}

/// `timeout_ms` of the C API: 0 means no limit of the call's own.
pub(crate) fn timeout_of(timeout_ms: u32) -> Option<Duration> {
    (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms as u64))
}

/// Closes a pool whose handle is already gone: waits up to the drain deadline for requests
/// in flight, cancels what is left (it ends with `SHUTTING_DOWN`), closes the core pool
/// (connections, child processes), then ends the event subscriptions (finalizers run).
async fn close_entry(entry: Arc<PoolEntry>, drain: Duration) {
    entry.closing.store(true, Ordering::SeqCst);
    let mut idle = entry.in_flight.subscribe();
    let _ = tokio::time::timeout(drain, idle.wait_for(|n| *n == 0)).await;
    let tokens: Vec<_> = lock(&entry.requests).values().cloned().collect();
    for t in tokens {
        t.cancel();
    }
    let _ = idle.wait_for(|n| *n == 0).await;
    // Core's close also releases every host callback: the C finalizers run once no call of
    // them is left.
    entry.pool.close().await;
    let subs: Vec<_> = lock(&entry.subscriptions).drain().map(|(_, s)| s).collect();
    for sub in subs {
        sub.end(true).await;
    }
}

/// `mcpmux_pool_close`: blocking from a host thread; in the background from a callback,
/// where waiting for the other callbacks (or for this one) could never finish.
pub(crate) fn close_pool(pool: mcpmux_pool, drain_timeout_ms: i64) -> FfiResult<()> {
    let entry = POOLS.remove(pool)?;
    entry.closing.store(true, Ordering::SeqCst);
    let drain = if drain_timeout_ms < 0 {
        Duration::from_millis(entry.pool.options().shutdown_timeout_ms)
    } else {
        Duration::from_millis(drain_timeout_ms as u64)
    };
    if on_runtime_thread() {
        rt().spawn(close_entry(entry, drain));
    } else {
        block_on(close_entry(entry, drain));
    }
    Ok(())
}
