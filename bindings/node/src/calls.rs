//! The hot path of `pool.callTool()`: one promise made on the JS thread, the call's future
//! polled on the JS thread, and wake-ups handed to the JS thread in batches through one
//! threadsafe function per pool.
//!
//! napi's own `spawn_future` creates a threadsafe function (a libuv async handle) for every
//! promise, spawns two tasks and wakes the JS thread once per completion. Here each pool owns a
//! single [`Port`]. A call's future is polled first inside `callTool` (its request is written
//! before `callTool` returns, or held for the end of the turn, below); when something wakes it
//! (its reply arrived, a timer fired), the call is pushed onto the port's queue, and the JS
//! thread, woken only when the queue was empty, polls every queued call in one callback and
//! settles those that finished. No task is
//! spawned per call and the runtime thread only reads replies: on a small machine the runtime
//! thread, the JS thread and the server compete for the same cores, and this costs the least
//! CPU per call. The futures are polled inside the runtime's context and never block (core
//! moves blocking work to tokio's blocking pool).
//!
//! A call that writes to a stdio server has the loop watch that server's stdout too
//! (`stdout_watch`): its replies are then read on the JS thread, and the runtime thread is not
//! woken for them at all. The calls such a read wakes are polled and settled right after it
//! ([`reading_replies`]), on the same turn of the loop: no threadsafe function is called for
//! them, which would write to the loop's wake-up descriptor and take another turn to read it.
//!
//! The first request of a turn of the loop is written at once; the others the calls of that
//! turn write go to each server together when it ends (`write_batch`).
//!
//! The port is weak (it does not keep Node alive) while no call is in flight and strong while
//! one is, so an awaited call keeps the process running as before.

use std::cell::RefCell;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use mcpmux::event_loop::noting_readers;
use napi::bindgen_prelude::{FunctionRef, Unknown};
use napi::{Env, sys};

/// How a call ends: the JSON text of the value to resolve with (parsed by `JSON.parse` on the
/// JS thread), or an addon error (with its code) to reject with.
pub(crate) enum Outcome {
    Json(String),
    Err(crate::errors::Error),
}

/// A call's work, from its arguments to its outcome.
pub(crate) type CallFuture = Pin<Box<dyn Future<Output = Outcome> + Send>>;

/// A `napi_deferred`; only ever used on the JS thread that made it.
struct Deferred(sys::napi_deferred);

// SAFETY: the pointer is only carried through the queue; it is dereferenced (resolved or
// rejected) by `settle`, which runs on the JS thread of the environment that made it.
unsafe impl Send for Deferred {}

/// What the JS thread has to do for a call.
enum Item {
    /// Something woke the call: poll it.
    Poll(Arc<Call>),
    /// The call was dropped unfinished (nothing can wake it any more): reject its promise.
    Reject(Deferred),
}

struct State {
    tsfn: sys::napi_threadsafe_function,
    /// Node finalized the threadsafe function (environment teardown): it must not be touched.
    closed: bool,
    /// The port's owner released the threadsafe function.
    released: bool,
    /// A wake-up of the JS thread is pending: pushing more needs no other.
    scheduled: bool,
    queue: Vec<Item>,
}

struct PortShared {
    state: Mutex<State>,
    /// Calls whose promise is not settled yet; only changed on the JS thread. The threadsafe
    /// function is referenced (keeps Node alive) exactly while this is not zero.
    in_flight: AtomicUsize,
    /// `(message) => Error`: turns an addon error into the error class JS throws.
    make_error: FunctionRef<Unknown<'static>, Unknown<'static>>,
    /// `JSON.parse`, for `Outcome::Json`: V8 builds the result's objects from its text in one
    /// call, where setting each property through Node-API looks up each key again.
    parse_json: FunctionRef<Unknown<'static>, Unknown<'static>>,
    /// The environment the port serves (its JS thread's).
    env: sys::napi_env,
    /// For the callback scope of settling calls outside the threadsafe function
    /// (`reading_replies`); destroyed with the threadsafe function.
    async_context: sys::napi_async_context,
}

// SAFETY: the raw threadsafe function is behind the mutex and only used through Node-API
// functions documented as callable from any thread (call, release); `FunctionRef` releases its
// reference on the JS thread whatever thread drops it.
unsafe impl Send for PortShared {}
unsafe impl Sync for PortShared {}

/// The wake-up queue of one pool; cloned into every call in flight.
#[derive(Clone)]
pub(crate) struct Port(Arc<PortOwner>);

/// Releases the threadsafe function once nothing can push anymore.
struct PortOwner(Arc<PortShared>);

impl Drop for PortOwner {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().unwrap();
        if !state.closed && !state.released {
            state.released = true;
            // SAFETY: not finalized yet (checked under the lock the finalizer takes).
            unsafe {
                sys::napi_release_threadsafe_function(
                    state.tsfn,
                    sys::ThreadsafeFunctionReleaseMode::release,
                );
            }
        }
    }
}

impl Port {
    /// A port on the JS thread of `env`; `make_error(error)` builds rejection values and
    /// `parse_json` is `JSON.parse`.
    pub(crate) fn new(
        env: &Env,
        make_error: FunctionRef<Unknown<'static>, Unknown<'static>>,
        parse_json: FunctionRef<Unknown<'static>, Unknown<'static>>,
    ) -> napi::Result<Port> {
        let raw_env = env.raw();
        let mut name = ptr::null_mut();
        let label = "mcpmux.callTool";
        let mut resource = ptr::null_mut();
        let mut async_context = ptr::null_mut();
        // SAFETY: plain Node-API calls on the JS thread.
        unsafe {
            check(sys::napi_create_string_utf8(
                raw_env,
                label.as_ptr().cast(),
                label.len() as isize,
                &mut name,
            ))?;
            check(sys::napi_create_object(raw_env, &mut resource))?;
            check(sys::napi_async_init(
                raw_env,
                resource,
                name,
                &mut async_context,
            ))?;
        }
        let shared = Arc::new(PortShared {
            state: Mutex::new(State {
                tsfn: ptr::null_mut(),
                closed: false,
                released: false,
                scheduled: false,
                queue: Vec::new(),
            }),
            in_flight: AtomicUsize::new(0),
            make_error,
            parse_json,
            env: raw_env,
            async_context,
        });
        let context = Arc::into_raw(shared.clone()) as *mut std::ffi::c_void;
        let mut tsfn = ptr::null_mut();
        // SAFETY: plain Node-API calls on the JS thread; `context` is an owned `Arc` that
        // `finalize` takes back.
        unsafe {
            let status = sys::napi_create_threadsafe_function(
                raw_env,
                ptr::null_mut(),
                ptr::null_mut(),
                name,
                0,
                1,
                context,
                Some(finalize),
                context,
                Some(call_js),
                &mut tsfn,
            );
            if status != sys::Status::napi_ok {
                sys::napi_async_destroy(raw_env, async_context);
                drop(Arc::from_raw(context as *const PortShared));
                return Err(napi::Error::new(
                    napi::Status::GenericFailure,
                    "cannot create the call completion queue",
                ));
            }
            // Weak until a call is in flight.
            check(sys::napi_unref_threadsafe_function(raw_env, tsfn))?;
        }
        shared.state.lock().unwrap().tsfn = tsfn;
        Ok(Port(Arc::new(PortOwner(shared))))
    }

    /// Starts a call on the JS thread: makes its promise and polls `fut` a first time (its
    /// request is then written, or held for the end of the turn, without waiting for the
    /// runtime thread to wake up).
    pub(crate) fn start(&self, env: &Env, fut: CallFuture) -> napi::Result<sys::napi_value> {
        let shared = &self.0.0;
        crate::write_batch::install(env);
        let mut deferred = ptr::null_mut();
        let mut promise = ptr::null_mut();
        // SAFETY: on the JS thread of the port's environment.
        unsafe {
            check(sys::napi_create_promise(
                env.raw(),
                &mut deferred,
                &mut promise,
            ))?;
        }
        let call = Arc::new(Call {
            port: self.clone(),
            queued: AtomicBool::new(false),
            slot: Mutex::new(CallSlot {
                fut: Some(fut),
                deferred: Some(Deferred(deferred)),
            }),
        });
        // Counted before the first poll: a wake-up during it may already queue the call, and
        // the callback that settles it decrements.
        if shared.in_flight.fetch_add(1, Ordering::Relaxed) == 0 {
            let state = shared.state.lock().unwrap();
            if !state.closed {
                // SAFETY: JS thread, not finalized.
                unsafe { sys::napi_ref_threadsafe_function(env.raw(), state.tsfn) };
            }
        }
        if call.run(env, shared) {
            shared.settled(env, 1);
        }
        Ok(promise)
    }

    fn push(&self, item: Item) {
        let mut state = self.0.0.state.lock().unwrap();
        if state.closed {
            // The environment is gone, and its promises with it. The item is dropped outside
            // the lock (dropping a call may push).
            drop(state);
            drop(item);
            return;
        }
        state.queue.push(item);
        if !state.scheduled {
            state.scheduled = true;
            if settled_after_reading(&self.0.0) {
                return;
            }
            // SAFETY: not finalized (checked under the lock), and the owner has not released it
            // while this `Port` (which keeps the owner) exists.
            unsafe {
                sys::napi_call_threadsafe_function(
                    state.tsfn,
                    ptr::null_mut(),
                    sys::ThreadsafeFunctionCallMode::nonblocking,
                );
            }
        }
    }
}

impl PortShared {
    /// `count` promises were settled: the port goes weak when none is left in flight.
    fn settled(&self, env: &Env, count: usize) {
        if count > 0 && self.in_flight.fetch_sub(count, Ordering::Relaxed) == count {
            let state = self.state.lock().unwrap();
            if !state.closed {
                // SAFETY: JS thread, not finalized.
                unsafe { sys::napi_unref_threadsafe_function(env.raw(), state.tsfn) };
            }
        }
    }
}

/// One call in flight: its future until it finishes, and its promise until settled.
struct Call {
    port: Port,
    /// On the port's queue already: another wake-up needs no second entry.
    queued: AtomicBool,
    slot: Mutex<CallSlot>,
}

struct CallSlot {
    fut: Option<CallFuture>,
    deferred: Option<Deferred>,
}

impl Wake for Call {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if !self.queued.swap(true, Ordering::AcqRel) {
            self.port.push(Item::Poll(self.clone()));
        }
    }
}

impl Call {
    /// Polls the call on the JS thread, inside the runtime's context; settles its promise when
    /// it finished. Returns whether it settled.
    fn run(self: &Arc<Self>, env: &Env, shared: &PortShared) -> bool {
        // Cleared first: a wake-up during the poll queues the call again.
        self.queued.store(false, Ordering::Release);
        let mut slot = self.slot.lock().unwrap();
        let Some(mut fut) = slot.fut.take() else {
            return false;
        };
        let _entered = crate::runtime().enter();
        let waker = Waker::from(self.clone());
        // The stdio servers a poll writes to are noted, for this loop to watch their replies.
        let watcher_id = Arc::as_ptr(&self.port.0) as u64;
        let (polled, noted) = noting_readers(watcher_id, || {
            std::panic::catch_unwind(AssertUnwindSafe(|| {
                fut.as_mut().poll(&mut Context::from_waker(&waker))
            }))
        });
        for reader in noted {
            crate::stdout_watch::watch(env, reader, watcher_id);
        }
        let outcome = match polled {
            Ok(Poll::Pending) => {
                slot.fut = Some(fut);
                return false;
            }
            Ok(Poll::Ready(outcome)) => outcome,
            Err(panic) => Outcome::Err(crate::error("internal", panic_message(&panic))),
        };
        let deferred = slot.deferred.take();
        drop(slot);
        // The finished future may own connections: dropped in the runtime's context (entered).
        drop(fut);
        match deferred {
            Some(deferred) => {
                settle(env, shared, deferred, outcome);
                true
            }
            None => false,
        }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        let slot = self.slot.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(fut) = slot.fut.take() {
            let _entered = crate::runtime().enter();
            drop(fut);
        }
        if let Some(deferred) = slot.deferred.take() {
            self.port.push(Item::Reject(deferred));
        }
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown error".into());
    format!("the call panicked: {what}")
}

fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::new(
            napi::Status::GenericFailure,
            format!("Node-API call failed ({status})"),
        ))
    }
}

unsafe extern "C" fn finalize(
    env: sys::napi_env,
    data: *mut std::ffi::c_void,
    _hint: *mut std::ffi::c_void,
) {
    // SAFETY: `data` is the `Arc` leaked in `Port::new`, taken back once, here.
    let shared = unsafe { Arc::from_raw(data as *const PortShared) };
    let mut state = shared.state.lock().unwrap();
    state.closed = true;
    if !env.is_null() {
        // SAFETY: the JS thread, once; nothing opens a scope with it after `closed`.
        unsafe { sys::napi_async_destroy(env, shared.async_context) };
    }
    // Promises of a finished environment can no longer be settled; dropping the calls here
    // would push onto this queue again.
    std::mem::forget(std::mem::take(&mut state.queue));
}

unsafe extern "C" fn call_js(
    env: sys::napi_env,
    _js_callback: sys::napi_value,
    context: *mut std::ffi::c_void,
    _data: *mut std::ffi::c_void,
) {
    if env.is_null() {
        // The environment is tearing down: nothing can be settled.
        return;
    }
    // SAFETY: `context` is the `Arc` of `Port::new`, alive until `finalize`, which runs after
    // the last call of this function.
    let shared = unsafe { &*(context as *const PortShared) };
    run_queue(&Env::from_raw(env), shared);
}

thread_local! {
    /// While this JS thread reads a stdio server's replies (`reading_replies`): its
    /// environment, and the ports whose calls the read woke, to settle once it is done.
    static READING: RefCell<Option<(sys::napi_env, Vec<Arc<PortShared>>)>> =
        const { RefCell::new(None) };
}

/// Runs `read` (the JS thread of `env` reading a stdio server's replies), then polls and
/// settles the calls of `env` it woke, on this turn of the loop, inside a callback scope (so
/// their promises' reactions run when it closes, as after any callback from Node). Other
/// environments' calls, and wake-ups from anywhere else, go through the threadsafe function.
pub(crate) fn reading_replies<T>(env: sys::napi_env, read: impl FnOnce() -> T) -> T {
    READING.with(|r| *r.borrow_mut() = Some((env, Vec::new())));
    let out = read();
    let woken = READING.with(|r| r.borrow_mut().take());
    for shared in woken.map(|(_, ports)| ports).unwrap_or_default() {
        settle_now(env, &shared);
    }
    out
}

/// Whether `shared`'s calls, just queued, are settled by the read this thread is doing
/// (`reading_replies`) rather than by a wake-up through the threadsafe function.
fn settled_after_reading(shared: &Arc<PortShared>) -> bool {
    READING.with(|r| match &mut *r.borrow_mut() {
        Some((env, ports)) if *env == shared.env => {
            ports.push(shared.clone());
            true
        }
        _ => false,
    })
}

/// Polls and settles `shared`'s queued calls from outside any JS callback (libuv's), as
/// Node-API asks: in a handle scope and a callback scope.
fn settle_now(raw: sys::napi_env, shared: &PortShared) {
    if shared.state.lock().unwrap().closed {
        return;
    }
    let mut handles = ptr::null_mut();
    let mut resource = ptr::null_mut();
    let mut scope = ptr::null_mut();
    // SAFETY: on the JS thread of `raw`, with no script on the stack (a libuv callback); the
    // async context lives until `finalize`, which has not run (`closed` is false).
    unsafe {
        sys::napi_open_handle_scope(raw, &mut handles);
        sys::napi_create_object(raw, &mut resource);
        let opened = sys::napi_open_callback_scope(raw, resource, shared.async_context, &mut scope)
            == sys::Status::napi_ok;
        run_queue(&Env::from_raw(raw), shared);
        if opened {
            sys::napi_close_callback_scope(raw, scope);
        }
        sys::napi_close_handle_scope(raw, handles);
    }
}

/// Polls the port's queued calls and settles those that finished; on the JS thread.
fn run_queue(env: &Env, shared: &PortShared) {
    let batch = {
        let mut state = shared.state.lock().unwrap();
        state.scheduled = false;
        std::mem::take(&mut state.queue)
    };
    let mut count = 0;
    for item in batch {
        match item {
            Item::Poll(call) => {
                if call.run(env, shared) {
                    count += 1;
                }
            }
            Item::Reject(deferred) => {
                let e = crate::error("cancelled", "the call was dropped");
                settle(env, shared, deferred, Outcome::Err(e));
                count += 1;
            }
        }
    }
    shared.settled(env, count);
}

/// Resolves or rejects a call's promise; on the JS thread.
fn settle(env: &Env, shared: &PortShared, deferred: Deferred, outcome: Outcome) {
    let raw = env.raw();
    let mut scope = ptr::null_mut();
    // SAFETY: JS thread; every value made for this call lives in its own handle scope.
    unsafe { sys::napi_open_handle_scope(raw, &mut scope) };
    let value = match outcome {
        Outcome::Json(text) => {
            parsed(env, shared, &text).map_err(|e| error_value(env, shared, &crate::internal(e)))
        }
        Outcome::Err(e) => Err(error_value(env, shared, &e)),
    };
    // SAFETY: the deferred was made on this thread and is settled once, here.
    unsafe {
        match value {
            Ok(v) => sys::napi_resolve_deferred(raw, deferred.0, v),
            Err(e) => sys::napi_reject_deferred(raw, deferred.0, e),
        };
        sys::napi_close_handle_scope(raw, scope);
    }
}

/// `JSON.parse(text)`; on the JS thread, inside the call's handle scope.
fn parsed(env: &Env, shared: &PortShared, text: &str) -> napi::Result<sys::napi_value> {
    use napi::JsValue;
    let mut string = ptr::null_mut();
    // SAFETY: JS thread; the string lives in the call's handle scope.
    unsafe {
        check(sys::napi_create_string_utf8(
            env.raw(),
            text.as_ptr().cast(),
            text.len() as isize,
            &mut string,
        ))?;
    }
    // SAFETY: a string value made just above, on this thread.
    let arg = unsafe { Unknown::from_raw_unchecked(env.raw(), string) };
    Ok(shared.parse_json.borrow_back(env)?.call(arg)?.raw())
}

/// The error a call's promise rejects with: the addon's error (with its `code`) as
/// `makeError` turns it into the package's error class; the plain error if that throws.
fn error_value(env: &Env, shared: &PortShared, e: &crate::errors::Error) -> sys::napi_value {
    use napi::JsValue;
    let plain = crate::errors::js_error(env, e);
    // SAFETY: a value made on this thread, in the call's handle scope.
    let arg = unsafe { Unknown::from_raw_unchecked(env.raw(), plain) };
    let made = shared.make_error.borrow_back(env).and_then(|f| f.call(arg));
    match made {
        Ok(v) => v.raw(),
        Err(_) => {
            // SAFETY: JS thread; the exception makeError threw is dropped for the plain error.
            unsafe {
                let mut exception = ptr::null_mut();
                sys::napi_get_and_clear_last_exception(env.raw(), &mut exception);
            }
            plain
        }
    }
}
