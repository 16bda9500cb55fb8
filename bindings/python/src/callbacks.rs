//! Calling Python from the core's tokio threads: host tools, host request handlers, Python
//! providers, approval and token callbacks.
//!
//! Every Python function the core calls is an `async def` adapter written by the Python
//! package: it takes JSON text (plus, for providers, a token sink) and returns JSON text. It
//! runs as a task of the event loop that registered it (`asyncio.run_coroutine_threadsafe`),
//! so user code always runs on that loop's thread. Attaching to Python happens on a blocking
//! thread, never on a runtime worker: a loop busy in a slow synchronous callback must not
//! stall the servers' I/O. Dropping the Rust future (a cancelled call or run) cancels the
//! Python task.

use std::future::Future;
use std::sync::{Arc, Mutex};

use mcpmux::agent::TokenFn;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use tokio::sync::{mpsc, oneshot};

use crate::runtime::{attach, runtime};

type Outcome = Result<String, String>;

/// Gets the outcome of the `concurrent.futures.Future` of one Python call.
#[pyclass(frozen, module = "mcpmux._native")]
struct NativeReply {
    tx: Mutex<Option<oneshot::Sender<Outcome>>>,
}

#[pymethods]
impl NativeReply {
    fn __call__(&self, future: &Bound<'_, PyAny>) {
        let outcome = match future.call_method0("result") {
            Ok(value) => value.extract::<String>().map_err(|_| {
                let kind = value
                    .get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default();
                format!("the Python callback's adapter returned {kind}, not JSON text")
            }),
            Err(e) => Err(describe(future.py(), &e)),
        };
        if let Some(tx) = self.tx.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = tx.send(outcome);
        }
    }
}

/// `TypeName: message` of a Python exception (`cancelled` for a cancelled task).
fn describe(py: Python<'_>, e: &PyErr) -> String {
    let cancelled = py
        .import("asyncio")
        .and_then(|m| m.getattr("CancelledError"))
        .map(|c| e.get_type(py).is_subclass(&c).unwrap_or(false))
        .unwrap_or(false);
    if cancelled {
        return "the Python callback was cancelled".into();
    }
    e.to_string()
}

/// Cancels the Python task when the Rust side stops waiting for it.
struct CancelOnDrop(Option<Py<PyAny>>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(future) = self.0.take() {
            runtime().spawn_blocking(move || {
                attach(|py| {
                    let _ = future.call_method0(py, "cancel");
                    drop(future);
                });
            });
        }
    }
}

/// The start of a Python task, not finished yet.
struct PendingStart(Option<tokio::task::JoinHandle<Result<Py<PyAny>, String>>>);

impl Drop for PendingStart {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            runtime().spawn(async move {
                if let Ok(Ok(future)) = handle.await {
                    drop(CancelOnDrop(Some(future)));
                }
            });
        }
    }
}

/// A Python `async def adapter(...) -> str` bound to the event loop it runs on.
pub struct PyCallback {
    event_loop: Py<PyAny>,
    func: Py<PyAny>,
}

impl PyCallback {
    pub fn new(event_loop: Py<PyAny>, func: Py<PyAny>) -> Arc<Self> {
        Arc::new(PyCallback { event_loop, func })
    }

    /// Calls the adapter with the arguments `args` builds and waits for its JSON text.
    pub fn call<A>(self: &Arc<Self>, args: A) -> impl Future<Output = Outcome> + Send + 'static
    where
        A: for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>> + Send + 'static,
    {
        let this = self.clone();
        async move {
            let (tx, rx) = oneshot::channel();
            let handle = runtime().spawn_blocking(move || {
                attach(|py| this.start(py, args, tx))
                    .unwrap_or_else(|| Err("the Python interpreter is shutting down".into()))
            });
            // Dropped while the task is still being started (the caller cancelled early):
            // the start goes on regardless, so cancel the task as soon as it exists.
            let mut pending = PendingStart(Some(handle));
            let joined = match pending.0.as_mut() {
                Some(handle) => handle.await,
                None => unreachable!("set just above"),
            };
            pending.0 = None;
            let started =
                joined.unwrap_or_else(|e| Err(format!("the Python callback could not start: {e}")));
            let mut cancel = CancelOnDrop(Some(started?));
            let outcome = rx
                .await
                .unwrap_or_else(|_| Err("the Python callback never answered".into()));
            // Done: nothing to cancel (the reference is released when Python next runs).
            drop(cancel.0.take());
            outcome
        }
    }

    fn start<A>(
        &self,
        py: Python<'_>,
        args: A,
        tx: oneshot::Sender<Outcome>,
    ) -> Result<Py<PyAny>, String>
    where
        A: for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>>,
    {
        let args = args(py).map_err(|e| describe(py, &e))?;
        let coro = self
            .func
            .bind(py)
            .call1(args)
            .map_err(|e| describe(py, &e))?;
        let asyncio = py.import("asyncio").map_err(|e| describe(py, &e))?;
        let future = match asyncio.call_method1(
            "run_coroutine_threadsafe",
            (&coro, self.event_loop.bind(py)),
        ) {
            Ok(f) => f,
            Err(e) => {
                // Never awaited: close it so Python does not warn about it.
                let _ = coro.call_method0("close");
                return Err(format!(
                    "the event loop of this Python callback cannot run it ({}); register it \
                     again from a running loop",
                    describe(py, &e)
                ));
            }
        };
        let reply = NativeReply {
            tx: Mutex::new(Some(tx)),
        };
        future
            .call_method1("add_done_callback", (reply,))
            .map_err(|e| describe(py, &e))?;
        Ok(future.unbind())
    }
}

/// Arguments `(text,)`.
pub fn one(text: String) -> impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
    move |py| PyTuple::new(py, [text])
}

enum Token {
    Text(String),
    Flush(oneshot::Sender<()>),
}

/// Streams text to a Python callback on its event loop, in order.
pub struct TokenStream {
    tx: mpsc::UnboundedSender<Token>,
}

impl TokenStream {
    /// Starts delivering to `callback(text)` on `event_loop`'s thread.
    pub fn start(event_loop: Py<PyAny>, callback: Py<PyAny>) -> TokenStream {
        let (tx, mut rx) = mpsc::unbounded_channel::<Token>();
        let target = Arc::new((event_loop, callback));
        runtime().spawn(async move {
            while let Some(first) = rx.recv().await {
                let mut batch = vec![first];
                while let Ok(more) = rx.try_recv() {
                    batch.push(more);
                }
                let target = target.clone();
                let _ = runtime()
                    .spawn_blocking(move || {
                        let mut flushes = Vec::new();
                        attach(|py| {
                            let (event_loop, callback) = &*target;
                            for token in batch {
                                match token {
                                    Token::Text(text) => {
                                        // A closed loop: nobody listens any more.
                                        let _ = event_loop.call_method1(
                                            py,
                                            "call_soon_threadsafe",
                                            (callback.clone_ref(py), text),
                                        );
                                    }
                                    Token::Flush(done) => flushes.push(done),
                                }
                            }
                        });
                        for done in flushes {
                            let _ = done.send(());
                        }
                    })
                    .await;
            }
            runtime().spawn_blocking(move || attach(move |_py| drop(target)));
        });
        TokenStream { tx }
    }

    /// The core's token callback.
    pub fn token_fn(&self) -> TokenFn {
        let tx = self.tx.clone();
        Arc::new(move |text: &str| {
            let _ = tx.send(Token::Text(text.to_string()));
        })
    }

    /// Waits until every token sent so far is scheduled on the loop (before the result).
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Token::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

/// The `on_token` a Python provider gets: streams text into the run.
#[pyclass(frozen, module = "mcpmux._native")]
pub struct NativeTokenSink {
    f: Option<TokenFn>,
}

impl NativeTokenSink {
    pub fn new(f: Option<TokenFn>) -> Self {
        NativeTokenSink { f }
    }
}

#[pymethods]
impl NativeTokenSink {
    /// Streams a piece of the answer's text.
    fn __call__(&self, text: &str) {
        if let Some(f) = &self.f {
            f(text);
        }
    }
}
