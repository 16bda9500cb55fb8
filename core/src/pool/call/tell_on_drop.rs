//! What a call tells its server when its caller goes away first: dropping a call's future is
//! how a Rust caller cancels, and how every binding cancels. A drop cannot wait, so the message
//! goes out in the background.

use std::future::Future;

/// Sends its message in the background when dropped, unless the call ended first.
pub(in crate::pool) struct TellOnDrop<F: Future<Output = ()> + Send + 'static> {
    message: Option<F>,
}

impl<F: Future<Output = ()> + Send + 'static> TellOnDrop<F> {
    pub fn new(message: F) -> Self {
        TellOnDrop {
            message: Some(message),
        }
    }

    /// The call ended: there is nothing to tell.
    pub fn disarm(&mut self) {
        self.message = None;
    }

    /// What to tell changed (the call moved to a new connection); the old message is not sent.
    pub fn replace(&mut self, message: F) {
        self.message = Some(message);
    }
}

impl<F: Future<Output = ()> + Send + 'static> Drop for TellOnDrop<F> {
    fn drop(&mut self) {
        if let (Some(message), Ok(runtime)) =
            (self.message.take(), tokio::runtime::Handle::try_current())
        {
            runtime.spawn(message);
        }
    }
}
