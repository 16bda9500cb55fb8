//! The connections of the HTTP front, and what keeps a few clients from taking all of them:
//! a deadline for a request's headers (which is also how long a kept-alive connection may
//! sit idle: hyper starts the same timer when it waits for the next request), a cap on open
//! connections and one on each peer address's. A connection past a cap is still read, and
//! answered `503` with `Retry-After` (`/healthz` and `/readyz` as usual, so a supervisor does
//! not restart a gateway that is only busy), then closed.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a client has to send a request's line and headers, and how long a kept-alive
/// connection may wait for its next request. A slow client's headers (a "slowloris") are cut
/// off after this; a client that was only idle opens a new connection, as clients do.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Connections served at once unless [`crate::serve::HttpOptions`] says otherwise: far more than
/// clients keep open (a browser opens six per host), far fewer than a process's descriptors.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// Connections served at once from one peer address unless told otherwise. On loopback
/// every client has the same address, so this is also the cap for local clients together.
pub const DEFAULT_MAX_CONNECTIONS_PER_PEER: usize = 256;

/// The count of open connections, in all and by peer address.
pub(crate) struct Limits {
    max: usize,
    max_per_peer: usize,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    total: usize,
    by_peer: HashMap<IpAddr, usize>,
}

/// An admitted connection's place, given back when it closes.
pub(crate) struct Admitted {
    limits: Arc<Limits>,
    peer: IpAddr,
}

impl Limits {
    pub(crate) fn new(max: usize, max_per_peer: usize) -> Arc<Limits> {
        Arc::new(Limits {
            max: max.max(1),
            max_per_peer: max_per_peer.max(1),
            open: Mutex::default(),
        })
    }

    /// A place for a connection from `peer`, or none when either cap is reached.
    pub(crate) fn admit(self: &Arc<Self>, peer: IpAddr) -> Option<Admitted> {
        let mut open = self.open.lock().unwrap();
        let of_peer = open.by_peer.get(&peer).copied().unwrap_or(0);
        if open.total >= self.max || of_peer >= self.max_per_peer {
            return None;
        }
        open.total += 1;
        open.by_peer.insert(peer, of_peer + 1);
        Some(Admitted {
            limits: self.clone(),
            peer,
        })
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = self.limits.open.lock().unwrap();
        open.total -= 1;
        if let Some(n) = open.by_peer.get_mut(&self.peer) {
            *n -= 1;
            if *n == 0 {
                open.by_peer.remove(&self.peer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_caps_hold_and_places_come_back() {
        let limits = Limits::new(3, 2);
        let (a, b) = (IpAddr::from([10, 0, 0, 1]), IpAddr::from([10, 0, 0, 2]));
        let first = limits.admit(a).unwrap();
        let _second = limits.admit(a).unwrap();
        assert!(limits.admit(a).is_none(), "a peer's cap");
        let _third = limits.admit(b).unwrap();
        assert!(limits.admit(b).is_none(), "the total cap");
        drop(first);
        assert!(limits.admit(a).is_some());
        assert_eq!(limits.open.lock().unwrap().by_peer.len(), 2);
    }
}
