//! The hot path of `pool.callTool()`: one promise made on the JS thread, one task on the
//! runtime, and completions handed back to the JS thread in batches through one threadsafe
//! function per pool.
//!
//! napi's own `spawn_future` creates a threadsafe function (a libuv async handle) for every
//! promise, spawns two tasks and wakes the JS thread once per completion. Here each pool owns a
//! single [`Port`]: a finished call pushes its result onto the port's queue and wakes the JS
//! thread only when the queue was empty, and the JS thread then settles every queued promise in
//! one callback. The port is weak (it does not keep Node alive) while no call is in flight and
//! strong while one is, so an awaited call keeps the process running as before.

use std::future::Future;
use std::pin::Pin;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Wake, Waker};

use napi::bindgen_prelude::{FunctionRef, Unknown};
use napi::{Env, sys};

/// A finished call: a value to resolve with (converted to JS on the JS thread), or an addon
/// error (`mcpmux:<code>:<message>`) to reject with.
///
/// Converting core's result straight into JS objects (napi's serde serializer) measured about
/// 1.8× the in-flight throughput of serializing it to JSON on the runtime and `JSON.parse`-ing
/// it on the JS thread: the runtime thread, not the JS thread, is the busier one.
pub(crate) enum Outcome {
    Value(Box<dyn ValueFn>),
    Err(napi::Error),
}

/// A value that becomes a JS value on the JS thread.
pub(crate) trait ValueFn: Send {
    fn make(self: Box<Self>, env: &Env) -> napi::Result<sys::napi_value>;
}

impl<T: serde::Serialize + Send> ValueFn for T {
    fn make(self: Box<Self>, env: &Env) -> napi::Result<sys::napi_value> {
        use napi::JsValue;
        Ok(env.to_js_value(&*self)?.raw())
    }
}

/// A `napi_deferred`; only ever used on the JS thread that made it.
struct Deferred(sys::napi_deferred);

// SAFETY: the pointer is only carried through the queue; it is dereferenced (resolved or
// rejected) by `settle_batch`, which runs on the JS thread of the environment that made it.
unsafe impl Send for Deferred {}

struct Done {
    deferred: Deferred,
    outcome: Outcome,
}

struct State {
    tsfn: sys::napi_threadsafe_function,
    /// Node finalized the threadsafe function (environment teardown): it must not be touched.
    closed: bool,
    /// The port's owner released the threadsafe function.
    released: bool,
    /// A wake-up of the JS thread is pending: pushing more needs no other.
    scheduled: bool,
    queue: Vec<Done>,
}

struct PortShared {
    state: Mutex<State>,
    /// Calls whose promise is not settled yet; only changed on the JS thread. The threadsafe
    /// function is referenced (keeps Node alive) exactly while this is not zero.
    in_flight: AtomicUsize,
    /// `(message) => Error`: turns an addon error into the error class JS throws.
    make_error: FunctionRef<String, Unknown<'static>>,
}

// SAFETY: the raw threadsafe function is behind the mutex and only used through Node-API
// functions documented as callable from any thread (call, release); `FunctionRef` releases its
// reference on the JS thread whatever thread drops it.
unsafe impl Send for PortShared {}
unsafe impl Sync for PortShared {}

/// The completion queue of one pool; cloned into every call in flight.
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
    /// A port on the JS thread of `env`; `make_error(message)` builds rejection values.
    pub(crate) fn new(
        env: &Env,
        make_error: FunctionRef<String, Unknown<'static>>,
    ) -> napi::Result<Port> {
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
        });
        let raw_env = env.raw();
        let mut name = ptr::null_mut();
        let label = "mcpmux.callTool";
        let context = Arc::into_raw(shared.clone()) as *mut std::ffi::c_void;
        let mut tsfn = ptr::null_mut();
        // SAFETY: plain Node-API calls on the JS thread; `context` is an owned `Arc` that
        // `finalize` takes back.
        unsafe {
            check(sys::napi_create_string_utf8(
                raw_env,
                label.as_ptr().cast(),
                label.len() as isize,
                &mut name,
            ))?;
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

    /// A new promise for a call starting now; on the JS thread.
    pub(crate) fn begin(&self, env: &Env) -> napi::Result<(Pending, sys::napi_value)> {
        let shared = &self.0.0;
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
        if shared.in_flight.fetch_add(1, Ordering::Relaxed) == 0 {
            let state = shared.state.lock().unwrap();
            if !state.closed {
                // SAFETY: JS thread, not finalized.
                unsafe { sys::napi_ref_threadsafe_function(env.raw(), state.tsfn) };
            }
        }
        Ok((
            Pending {
                port: self.clone(),
                deferred: Some(Deferred(deferred)),
            },
            promise,
        ))
    }
}

/// A promise to settle: settled with [`Pending::settle`], or rejected as cancelled when
/// dropped unsettled (the runtime shutting down dropped its task).
pub(crate) struct Pending {
    port: Port,
    deferred: Option<Deferred>,
}

impl Pending {
    pub(crate) fn settle(mut self, outcome: Outcome) {
        if let Some(deferred) = self.deferred.take() {
            self.port.push(Done { deferred, outcome });
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(deferred) = self.deferred.take() {
            self.port.push(Done {
                deferred,
                outcome: Outcome::Err(crate::error("cancelled", "the call was dropped")),
            });
        }
    }
}

impl Port {
    fn push(&self, done: Done) {
        let mut state = self.0.0.state.lock().unwrap();
        if state.closed {
            // The environment is gone, and its promises with it.
            return;
        }
        state.queue.push(done);
        if !state.scheduled {
            state.scheduled = true;
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
    _env: sys::napi_env,
    data: *mut std::ffi::c_void,
    _hint: *mut std::ffi::c_void,
) {
    // SAFETY: `data` is the `Arc` leaked in `Port::new`, taken back once, here.
    let shared = unsafe { Arc::from_raw(data as *const PortShared) };
    let mut state = shared.state.lock().unwrap();
    state.closed = true;
    // Promises of a finished environment can no longer be settled.
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
    let batch = {
        let mut state = shared.state.lock().unwrap();
        state.scheduled = false;
        std::mem::take(&mut state.queue)
    };
    let env = Env::from_raw(env);
    let count = batch.len();
    settle_batch(&env, shared, batch);
    if count > 0 && shared.in_flight.fetch_sub(count, Ordering::Relaxed) == count {
        let state = shared.state.lock().unwrap();
        if !state.closed {
            // SAFETY: JS thread, not finalized.
            unsafe { sys::napi_unref_threadsafe_function(env.raw(), state.tsfn) };
        }
    }
}

fn settle_batch(env: &Env, shared: &PortShared, batch: Vec<Done>) {
    let raw = env.raw();
    for done in batch {
        let mut scope = ptr::null_mut();
        // SAFETY: JS thread; every value made for this item lives in its own handle scope.
        unsafe { sys::napi_open_handle_scope(raw, &mut scope) };
        let value = match done.outcome {
            Outcome::Value(f) => f.make(env).map_err(|e| error_value(env, shared, e)),
            Outcome::Err(e) => Err(error_value(env, shared, e)),
        };
        // SAFETY: the deferred was made on this thread and is settled once, here.
        unsafe {
            match value {
                Ok(v) => sys::napi_resolve_deferred(raw, done.deferred.0, v),
                Err(e) => sys::napi_reject_deferred(raw, done.deferred.0, e),
            };
            sys::napi_close_handle_scope(raw, scope);
        }
    }
}

fn error_value(env: &Env, shared: &PortShared, e: napi::Error) -> sys::napi_value {
    use napi::JsValue;
    let message = e.reason.clone();
    let made = shared
        .make_error
        .borrow_back(env)
        .and_then(|f| f.call(message));
    match made {
        Ok(v) => v.raw(),
        Err(_) => {
            // SAFETY: JS thread; the fallback is a plain Error with the addon's message.
            unsafe {
                let mut exception = ptr::null_mut();
                sys::napi_get_and_clear_last_exception(env.raw(), &mut exception);
                let mut msg = ptr::null_mut();
                sys::napi_create_string_utf8(
                    env.raw(),
                    e.reason.as_ptr().cast(),
                    e.reason.len() as isize,
                    &mut msg,
                );
                let mut error = ptr::null_mut();
                sys::napi_create_error(env.raw(), ptr::null_mut(), msg, &mut error);
                error
            }
        }
    }
}

/// Runs `fut` on `runtime`, its first poll here (the JS thread, inside the runtime's context):
/// a request can then be on its way without waiting for the runtime thread to wake up, and the
/// task is handed to the runtime only when something wakes it (saving a spawn and a wake-up
/// when the call needs nothing from the runtime to start).
pub(crate) fn run<F>(runtime: &tokio::runtime::Handle, fut: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    let _entered = runtime.enter();
    let mut fut: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(fut);
    let lazy = Arc::new(Lazy {
        state: Mutex::new(LazyState {
            fut: None,
            woken: false,
        }),
        runtime: runtime.clone(),
    });
    let waker = Waker::from(lazy.clone());
    if fut
        .as_mut()
        .poll(&mut Context::from_waker(&waker))
        .is_ready()
    {
        return;
    }
    let mut state = lazy.state.lock().unwrap();
    if state.woken {
        drop(state);
        runtime.spawn(fut);
    } else {
        state.fut = Some(fut);
    }
}

struct Lazy {
    state: Mutex<LazyState>,
    runtime: tokio::runtime::Handle,
}

struct LazyState {
    fut: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    woken: bool,
}

impl Wake for Lazy {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let fut = {
            let mut state = self.state.lock().unwrap();
            if state.woken {
                return;
            }
            state.woken = true;
            state.fut.take()
        };
        if let Some(fut) = fut {
            self.runtime.spawn(fut);
        }
    }
}
