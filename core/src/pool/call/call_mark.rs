//! The number a caller gives a call, so that what the server asks during it can be placed:
//! on Streamable HTTP the request comes on the call's own stream, and the transport hands the
//! number back on it (see `transport::related_call`), which the host's forwarder is given.

tokio::task_local! {
    static CALL: u64;
}

#[cfg(feature = "serve")]
/// Runs `call` (a future that calls a tool) under `number`.
pub(crate) fn marked<F: std::future::Future>(
    number: u64,
    call: F,
) -> impl std::future::Future<Output = F::Output> {
    CALL.scope(number, call)
}

/// The number of the call this task is making, if its caller gave one.
pub(crate) fn current() -> Option<u64> {
    CALL.try_with(|n| *n).ok()
}
