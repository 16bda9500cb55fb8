//! Requests sent in one turn of an event loop, written to each stdio server as one write.
//!
//! A Node host with many calls in flight settles a batch of them in one turn of its loop, and
//! each caller sends its next request in that same turn. One `write` per request costs the
//! loop's thread a system call each and wakes the server once per line. On a thread that
//! batches (a binding's event loop that calls [`end_of_turn`] before it waits for I/O again,
//! or the runtime of [`current_thread_runtime`], as `mcpmux serve --stdio` runs on),
//! the first request of a turn still goes out at once, so a lone call waits for nothing; the
//! others of that turn wait in their session's buffer until the turn ends, and go out together.
//! So that the server is not left idle while the loop settles a whole batch, no more than
//! [`HELD_MAX`] requests wait for one server: the request that fills the buffer sends it.
//! A write that must not wait (a cancellation, a request from another thread) sends what is
//! buffered before it, so nothing is reordered behind it.

use std::cell::RefCell;
use std::sync::Arc;

use super::direct::Direct;

/// How many requests to one server wait for the end of a turn at most. Node settling 32
/// calls in flight against a quick local server (100,000 calls, 3 runs each, calls/s):
/// unbatched 136k-164k; at most 4 held 171k-181k, 8 held 175k-183k, 16 held 172k-185k; the
/// whole turn held (32) 105k-111k: the server then idles while the loop settles the batch,
/// and the loop while the server answers it.
pub(crate) const HELD_MAX: usize = 8;

thread_local! {
    /// Set on a thread whose event loop batches its writes.
    static BATCH: RefCell<Option<Batch>> = const { RefCell::new(None) };
}

/// What this thread's loop has written in its current turn.
struct Batch {
    /// A request went out at once this turn: the others wait for its end.
    sent: bool,
    /// The sessions that hold requests for the end of the turn.
    held: Vec<Arc<Direct>>,
    /// Told when a turn first holds a request: makes sure the turn ends.
    on_hold: Box<dyn Fn()>,
}

/// Makes this thread batch the requests it writes to stdio servers. Its event loop must call
/// [`end_of_turn`] at the end of every turn (before it waits for I/O), from now on; `on_hold`
/// is called when a turn first holds a request, for a loop that may run code outside its
/// turns (Electron runs JS from Chromium's tasks) to start one, or the request would wait
/// until something else wakes the loop.
pub fn batch_writes_on_this_thread(on_hold: impl Fn() + 'static) {
    BATCH.with_borrow_mut(|b| {
        b.get_or_insert_with(|| Batch {
            sent: false,
            held: Vec::new(),
            on_hold: Box::new(on_hold),
        });
    });
}

/// The loop's turn ends: writes what its requests left waiting. Inside the tokio runtime's
/// context (a write the pipe cannot take at once finishes on the runtime).
pub fn end_of_turn() {
    let held = BATCH.with_borrow_mut(|b| match b {
        Some(batch) => {
            batch.sent = false;
            std::mem::take(&mut batch.held)
        }
        None => Vec::new(),
    });
    for direct in held {
        direct.write_held();
    }
}

/// A current-thread tokio runtime that batches the writes of the thread that runs it: the
/// caller's, which then drives it with `block_on`. A turn ends each time the runtime runs out
/// of ready tasks (before it parks). A runtime that never runs out of tasks still polls for
/// I/O every few dozen of them, and a turn that holds a request ends then at the latest (a
/// task deferred to that poll), so a held request never waits for the runtime to go idle.
pub fn current_thread_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .on_thread_park(end_of_turn)
        .build()?;
    batch_writes_on_this_thread(end_turn_after_ready_tasks);
    Ok(runtime)
}

/// Ends the turn once the tasks ready now have run: `yield_now` defers its task until the
/// runtime next polls for I/O.
fn end_turn_after_ready_tasks() {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async {
            tokio::task::yield_now().await;
            end_of_turn();
        });
    }
}

/// This thread's loop stops (its environment goes away): writes what waits, and batches no
/// more. Inside the tokio runtime's context.
pub fn stop_batching_on_this_thread() {
    end_of_turn();
    BATCH.with_borrow_mut(|b| *b = None);
}

/// Whether a request to `direct` from this thread waits for the end of the loop's turn (the
/// caller then holds it in `direct`'s buffer); `false` writes it now.
pub(crate) fn hold(direct: &Arc<Direct>) -> bool {
    BATCH.with_borrow_mut(|b| {
        let Some(batch) = b else { return false };
        if !batch.sent {
            batch.sent = true;
            return false;
        }
        if batch.held.is_empty() {
            (batch.on_hold)();
        }
        if !batch.held.iter().any(|d| Arc::ptr_eq(d, direct)) {
            batch.held.push(direct.clone());
        }
        true
    })
}
