//! The future every callback of the host's (a handler, a token store, a host tool) returns.
//! Below every layer, because auth, tools and host all take such callbacks.

use std::future::Future;
use std::pin::Pin;

/// A boxed future, as host handlers return.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
