//! The size limit on one message from a server, shared by a connection and its transport.
//!
//! A transport that meets a message over the limit drops it and ends the session, since the
//! request it answers would otherwise wait forever. It notes what it saw here first, so that
//! every caller the end cuts off is told that the message was too large, and which option to
//! raise, rather than that the transport closed.

use std::sync::OnceLock;

use crate::error::Error;

/// The largest message a connection accepts, and the first message it refused.
#[derive(Debug)]
pub(crate) struct MessageLimit {
    max: usize,
    /// Set once: the size of the refused message, when the transport saw all of it.
    exceeded: OnceLock<Option<u64>>,
}

impl MessageLimit {
    pub fn new(max: usize) -> MessageLimit {
        MessageLimit {
            max,
            exceeded: OnceLock::new(),
        }
    }

    pub fn max(&self) -> usize {
        self.max
    }

    /// Notes a message over the limit (its size if known); the first one counts.
    pub fn exceeded(&self, size: Option<u64>) {
        let _ = self.exceeded.set(size);
    }

    pub fn is_exceeded(&self) -> bool {
        self.exceeded.get().is_some()
    }

    /// The error for callers whose request failed on this connection, once it refused a
    /// message.
    pub fn error(&self, server: &str) -> Option<Error> {
        let size = *self.exceeded.get()?;
        Some(Error::MessageTooLarge {
            server: server.to_string(),
            size,
            limit: self.max as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn the_first_refused_message_is_the_one_reported() {
        let limit = MessageLimit::new(1024);
        assert!(limit.error("s").is_none());
        limit.exceeded(Some(5000));
        limit.exceeded(None);
        let e = limit.error("s").unwrap();
        assert_eq!(e.kind(), ErrorKind::MessageTooLarge);
        assert!(e.to_string().contains("5000 bytes"), "{e}");
    }
}
