//! Event subscriptions: pulled by `recv()` (for `async for`), or pushed to a callback on the
//! event loop's thread (for `pool.on`).

use std::sync::Arc;

use mcpmux::EventReceiver;
use pyo3::prelude::*;
use tokio_util::sync::CancellationToken;

use crate::errors::invalid;
use crate::runtime::{attach, awaitable, runtime};

/// The next event, or `None` once `closed` fired and the events sent before it are drained.
async fn next(rx: &mut EventReceiver, closed: &CancellationToken) -> Option<mcpmux::Event> {
    tokio::select! {
        biased;
        e = rx.recv() => e,
        _ = closed.cancelled() => rx.try_recv(),
    }
}

/// A pull subscription to a pool's events.
#[pyclass(frozen, module = "mcpmux._native")]
pub struct NativeEvents {
    rx: Arc<tokio::sync::Mutex<EventReceiver>>,
    closed: CancellationToken,
}

impl NativeEvents {
    pub fn new(rx: EventReceiver, closed: CancellationToken) -> Self {
        NativeEvents {
            rx: Arc::new(tokio::sync::Mutex::new(rx)),
            closed,
        }
    }
}

#[pymethods]
impl NativeEvents {
    /// Awaits the next event as JSON, or `None` when the pool is closed.
    fn recv<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let rx = self.rx.clone();
        let closed = self.closed.clone();
        awaitable(py, async move {
            let mut rx = rx.lock().await;
            match next(&mut rx, &closed).await {
                None => Ok(None),
                Some(e) => serde_json::to_string(&e)
                    .map(Some)
                    .map_err(|e| invalid(format!("cannot encode event: {e}"))),
            }
        })
    }

    /// Ends this subscription: a pending and every later `recv()` gives `None`.
    fn close(&self) {
        self.closed.cancel();
    }
}

/// A push subscription; `cancel()` stops it.
#[pyclass(frozen, module = "mcpmux._native")]
pub struct NativeSubscription {
    stop: CancellationToken,
}

impl NativeSubscription {
    pub fn start(
        mut rx: EventReceiver,
        closed: CancellationToken,
        event_loop: Py<PyAny>,
        callback: Py<PyAny>,
    ) -> Self {
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        runtime().spawn(async move {
            loop {
                let event = tokio::select! {
                    _ = stopped.cancelled() => break,
                    e = next(&mut rx, &closed) => e,
                };
                let Some(event) = event else { break };
                let Ok(json) = serde_json::to_string(&event) else {
                    continue;
                };
                let delivered = attach(|py| {
                    event_loop
                        .call_method1(py, "call_soon_threadsafe", (callback.clone_ref(py), json))
                        .is_ok()
                });
                // The loop is closed: nobody can receive events any more.
                if delivered != Some(true) {
                    break;
                }
            }
            attach(|_py| {
                drop(callback);
                drop(event_loop);
            });
        });
        NativeSubscription { stop }
    }
}

#[pymethods]
impl NativeSubscription {
    /// Stops delivering events.
    fn cancel(&self) {
        self.stop.cancel();
    }
}
