//! The time limits of a session's direct requests, kept by one task rather than a timer each.
//!
//! A tokio timer per request is registered in the runtime's timer wheel as the request is
//! sent and taken out as its reply comes, each under the wheel's lock, and with timers in the
//! wheel every park of a worker thread works through it: on a fast local server that was a
//! twentieth of a call's own work. Here a request notes its limit beside its entry, and one
//! task per session wakes at the earliest limit (or when a request with an earlier one comes),
//! tells the requests past theirs, and sleeps until the next. A session whose requests all
//! share one limit wakes it once per limit, whatever the rate of calls.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use tokio::sync::Notify;

/// When the keeper of a session's limits looks next, and how to wake it sooner.
pub(crate) struct Deadlines {
    epoch: Instant,
    keeper: Arc<Keeper>,
}

/// What a session and the task that keeps its limits share.
pub(crate) struct Keeper {
    /// The keeper's next look, in nanoseconds from the epoch; `u64::MAX` when it has none
    /// (no request waits, or no keeper runs).
    next: AtomicU64,
    wake: Notify,
    running: AtomicBool,
}

impl Deadlines {
    pub(crate) fn new() -> Deadlines {
        Deadlines {
            epoch: Instant::now(),
            keeper: Arc::new(Keeper {
                next: AtomicU64::new(u64::MAX),
                wake: Notify::new(),
                running: AtomicBool::new(false),
            }),
        }
    }

    /// Notes a request's limit `at`: whether the keeper must be woken (`wake`) to look
    /// sooner than it means to. Called under the lock the keeper looks under, so that either
    /// the keeper's look sees the request or the request sees the keeper's next look.
    pub(crate) fn sooner(&self, at: Instant) -> bool {
        let at = self.nanos(at);
        let sooner = at < self.keeper.next.load(Ordering::Acquire);
        if sooner {
            self.keeper.next.store(at, Ordering::Release);
        }
        sooner
    }

    /// The keeper's next look (none: no request waits), noted under the same lock.
    pub(crate) fn looks_next(&self, at: Option<Instant>) {
        let at = at.map_or(u64::MAX, |at| self.nanos(at));
        self.keeper.next.store(at, Ordering::Release);
    }

    /// Wakes the keeper, first starting it with `start` (which runs `keep` with what it is
    /// given; false if it could not) when none runs: on the first request that needs it, or
    /// after the runtime it ran on shut down.
    pub(crate) fn wake(&self, start: impl FnOnce(Arc<Keeper>) -> bool) {
        if !self.keeper.running.swap(true, Ordering::AcqRel) && !start(self.keeper.clone()) {
            // Nobody looks: the next request tries again.
            self.keeper.stopped();
        }
        self.keeper.wake.notify_one();
    }

    fn nanos(&self, at: Instant) -> u64 {
        let nanos = at.saturating_duration_since(self.epoch).as_nanos();
        u64::try_from(nanos).unwrap_or(u64::MAX - 1)
    }
}

impl Keeper {
    /// No keeper runs: the next request with a limit starts one.
    fn stopped(&self) {
        self.running.store(false, Ordering::Release);
        self.next.store(u64::MAX, Ordering::Release);
    }
}

impl Drop for Deadlines {
    /// The session is gone: its keeper wakes to find so, and ends.
    fn drop(&mut self) {
        self.keeper.wake.notify_one();
    }
}

/// Marks the keeper stopped when its task ends or is dropped (its runtime shut down).
struct Running(Arc<Keeper>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.stopped();
    }
}

/// The keeper: `look` tells the requests past their limits and gives the earliest limit left
/// (`Some(None)`: none waits), or `None` once the session is gone.
///
/// The guard that marks the keeper stopped is taken as the future is made, not when it is
/// first polled: a runtime that shuts down before it ran the spawned keeper drops it unpolled,
/// and a guard made inside it would never exist, leaving the keeper marked running with no one
/// keeping the limits (seen with a call on a short-lived runtime on a loaded machine).
pub(crate) fn keep(
    keeper: Arc<Keeper>,
    look: impl FnMut() -> Option<Option<Instant>>,
) -> impl Future<Output = ()> {
    keeping(Running(keeper), look)
}

async fn keeping(keeper: Running, mut look: impl FnMut() -> Option<Option<Instant>>) {
    loop {
        // Enabled before looking, so that a request noted during the look wakes it.
        let woken = keeper.0.wake.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        let Some(next) = look() else { return };
        match next {
            Some(at) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(at.into()) => {}
                    _ = &mut woken => {}
                }
            }
            None => woken.await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keeper_its_runtime_never_ran_lets_the_next_request_start_another() {
        let deadlines = Deadlines::new();
        let mut started = 0;
        // Spawned on a runtime that shuts down before it polls the keeper.
        deadlines.wake(|keeper| {
            started += 1;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            drop(runtime.spawn(keep(keeper, || Some(None))));
            drop(runtime);
            true
        });
        // The next request finds no keeper running and starts one.
        deadlines.wake(|_| {
            started += 1;
            true
        });
        assert_eq!(started, 2);
    }
}
