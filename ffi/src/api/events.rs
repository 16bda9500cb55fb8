//! Event subscriptions: one task per subscription forwards pool events to a C callback.

use std::collections::HashMap;
use std::ffi::{CString, c_char, c_void};
use std::sync::{Arc, Mutex, Weak};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::calls::{PoolEntry, UserData, lock, next_id, pool_entry};
use crate::error::{FfiError, guard, opt_str_arg};
use crate::mcpmux_status::{self, *};
use crate::rt::{block_on, call_out, on_runtime_thread, rt};
use crate::{mcpmux_event_fn, mcpmux_free_fn, mcpmux_pool, mcpmux_subscription_id};

/// A running subscription.
pub(crate) struct Subscription {
    id: u64,
    pool: Weak<PoolEntry>,
    stop: CancellationToken,
    /// Set when the pool closes: deliver what is queued before stopping.
    flush: std::sync::atomic::AtomicBool,
    task: Mutex<Option<JoinHandle<()>>>,
}

/// Every live subscription by id, so unsubscribing needs only the id.
static SUBSCRIPTIONS: Mutex<Option<HashMap<u64, Arc<Subscription>>>> = Mutex::new(None);

impl Subscription {
    /// Stops the subscription and waits until its finalizer has run.
    pub async fn end(&self, flush: bool) {
        self.flush.store(flush, std::sync::atomic::Ordering::SeqCst);
        self.stop.cancel();
        lock(&SUBSCRIPTIONS).as_mut().map(|m| m.remove(&self.id));
        let task = lock(&self.task).take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

/// Calls the C callback with one event.
fn deliver(
    callback: unsafe extern "C" fn(*mut c_void, *const c_char, usize),
    user: UserData,
    event: &mcpmux_core::Event,
) {
    let Ok(json) = serde_json::to_string(event) else {
        return;
    };
    let c = CString::new(json).unwrap_or_default();
    // SAFETY: the caller's function pointer and user data, as registered.
    call_out(|| unsafe { callback(user.0, c.as_ptr(), c.as_bytes().len()) });
}

/// Subscribes to the pool's events. `callback` receives each event as JSON on a library
/// thread, one at a time and in order. `event_type` keeps only events of that type (for
/// example "tool:called" or "connection:state"); NULL keeps all. `free_user_data` (may be
/// NULL) is called once with `user_data` after the last callback: after
/// mcpmux_events_unsubscribe() or mcpmux_pool_close(). When this function fails, neither
/// is ever called and `user_data` stays the caller's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_events_subscribe(
    pool: mcpmux_pool,
    event_type: *const c_char,
    callback: mcpmux_event_fn,
    user_data: *mut c_void,
    free_user_data: mcpmux_free_fn,
    out_subscription_id: *mut mcpmux_subscription_id,
) -> mcpmux_status {
    guard(|| {
        let entry = pool_entry(pool)?;
        let filter = unsafe { opt_str_arg(event_type, "event_type") }?.map(str::to_owned);
        let callback =
            callback.ok_or_else(|| FfiError::new(MCPMUX_ERR_NULL_ARGUMENT, "callback is NULL"))?;
        let out = crate::error::out_arg(out_subscription_id, "out_subscription_id")?;
        let id = next_id();
        let user = UserData(user_data);
        let stop = CancellationToken::new();
        let sub = Arc::new(Subscription {
            id,
            pool: Arc::downgrade(&entry),
            stop: stop.clone(),
            flush: std::sync::atomic::AtomicBool::new(false),
            task: Mutex::new(None),
        });
        // Subscribed here, before returning, so that no event of a later call is missed.
        let mut rx = entry.pool.events();
        let wants = move |e: &mcpmux_core::Event| filter.as_deref().is_none_or(|f| e.name() == f);
        let weak = Arc::downgrade(&sub);
        let task = rt().spawn(async move {
            let user = user;
            loop {
                tokio::select! {
                    biased;
                    _ = stop.cancelled() => break,
                    event = rx.recv() => match event {
                        Some(e) if wants(&e) => deliver(callback, user, &e),
                        Some(_) => {}
                        None => break,
                    },
                }
            }
            if weak
                .upgrade()
                .is_some_and(|s| s.flush.load(std::sync::atomic::Ordering::SeqCst))
            {
                while let Some(e) = rx.try_recv() {
                    if wants(&e) {
                        deliver(callback, user, &e);
                    }
                }
            }
            if let Some(free) = free_user_data {
                // SAFETY: the caller's finalizer for its own user data, called once.
                call_out(|| unsafe { free(user.0) });
            }
        });
        *lock(&sub.task) = Some(task);
        lock(&SUBSCRIPTIONS)
            .get_or_insert_with(HashMap::new)
            .insert(id, sub.clone());
        lock(&entry.subscriptions).insert(id, sub.clone());
        // A close that began meanwhile may have ended the subscriptions before this one was
        // listed: then end it here, as the close would have (its finalizer runs).
        if entry.closing.load(std::sync::atomic::Ordering::SeqCst)
            && lock(&entry.subscriptions).remove(&id).is_some()
        {
            rt().spawn(async move { sub.end(true).await });
        }
        *out = id;
        Ok(())
    })
}

/// Ends a subscription. From a host thread it returns after the last callback and the
/// finalizer have run; from inside a callback it returns at once and they follow.
/// MCPMUX_ERR_NOT_FOUND when the subscription already ended (or never existed).
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_events_unsubscribe(subscription: mcpmux_subscription_id) -> mcpmux_status {
    guard(|| {
        let sub = lock(&SUBSCRIPTIONS)
            .as_mut()
            .and_then(|m| m.remove(&subscription))
            .ok_or_else(|| {
                FfiError::new(
                    MCPMUX_ERR_NOT_FOUND,
                    format!("subscription {subscription} is not active"),
                )
            })?;
        if let Some(entry) = sub.pool.upgrade() {
            lock(&entry.subscriptions).remove(&subscription);
        }
        if on_runtime_thread() {
            sub.stop.cancel();
            rt().spawn(async move { sub.end(false).await });
        } else {
            block_on(async move { sub.end(false).await });
        }
        Ok::<(), FfiError>(())
    })
}
