//! Requests an upstream server makes of its client while a served client's call is in flight
//! (`sampling/createMessage`, `elicitation/create`, `roots/list`), forwarded to that client:
//! the user who asked for the tool is the one asked. The upstream connection is shared by every client, so
//! the request is matched to a caller: the task that made the call when the pool answers
//! within it (a 2026-07-28 server's `input_required` rounds), else the client whose call on
//! that server started first and is still running. A client that did not declare the
//! capability, or no client waiting on that server, gets the request refused with why; for
//! roots the pool's own roots answer instead (what the server saw before it was served).
#![allow(
    deprecated,
    reason = "sampling is deprecated by SEP-2577 but servers still use it"
)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{ClientResult, ElicitRequest, ServerRequest};
use rmcp::{Peer, RoleServer};

use crate::host::{ElicitationHandler, HostRequest, RootsHandler, SamplingHandler};
use crate::pool::Pool;

/// A client's handle, shared by the parts of its call that may reach it: a copy of a `Peer`
/// raises some ten reference counts, and is dropped again, on every call.
pub type Caller = Arc<Peer<RoleServer>>;

tokio::task_local! {
    /// The client whose call this task is making.
    static CALLER: Caller;
}

/// Calls in flight on one upstream: (call number, the client), oldest first, so in order of
/// number.
type Queue = Vec<(u64, Caller)>;

/// The served clients with a call in flight, by the upstream server's id. A server's queue
/// stays when it empties (a few bytes for each server ever called): made and dropped with
/// each call, it cost two allocations a call.
#[derive(Default)]
pub struct Callers {
    waiting: Mutex<crate::fast_map::FastMap<Arc<str>, Queue>>,
    next: AtomicU64,
}

/// A call in flight: leaves [`Callers`] when dropped.
pub struct Waiting {
    callers: Arc<Callers>,
    server_id: Arc<str>,
    id: u64,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut waiting = self.callers.waiting.lock().unwrap();
        if let Some(list) = waiting.get_mut(&self.server_id)
            && let Ok(at) = list.binary_search_by_key(&self.id, |(id, _)| *id)
        {
            list.remove(at);
        }
    }
}

impl Callers {
    /// Notes that `peer` is calling a tool of `server_id` until the guard drops.
    pub fn enter(self: &Arc<Self>, server_id: Arc<str>, peer: Caller) -> Waiting {
        let mut waiting = self.waiting.lock().unwrap();
        // Numbered under the lock, so that each queue stays in order of number.
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        waiting
            .entry(server_id.clone())
            .or_default()
            .push((id, peer));
        drop(waiting);
        Waiting {
            callers: self.clone(),
            server_id,
            id,
        }
    }

    /// The client a request of `server_id` goes to.
    fn caller(&self, server_id: &str) -> Option<Caller> {
        CALLER.try_with(Caller::clone).ok().or_else(|| {
            let waiting = self.waiting.lock().unwrap();
            waiting.get(server_id)?.first().map(|(_, p)| p.clone())
        })
    }

    /// Runs `call` as `peer`'s, so that what the pool asks within it goes to `peer`.
    pub fn as_caller<F: Future>(peer: Caller, call: F) -> impl Future<Output = F::Output> {
        CALLER.scope(peer, call)
    }
}

/// Why a request cannot be forwarded, or `None` when `peer` may be asked for `what`.
fn refusal(peer: &Peer<RoleServer>, what: &str) -> Option<String> {
    let declared = peer.peer_info().is_some_and(|info| {
        let caps = &info.capabilities;
        match what {
            "sampling" => caps.sampling.is_some(),
            "roots" => caps.roots.is_some(),
            _ => caps.elicitation.is_some(),
        }
    });
    (!declared).then(|| format!("the client that made the call does not offer {what}"))
}

fn nobody(request: &str, server: &str) -> String {
    format!("no client is waiting on server '{server}' to answer its {request}")
}

/// Sets `pool`'s sampling and elicitation handlers to forward to the calling client.
pub fn forward(pool: &Pool, callers: &Arc<Callers>) {
    let sampling: SamplingHandler = {
        let callers = callers.clone();
        Arc::new(move |request: HostRequest<_>| {
            let peer = callers.caller(&request.server_id);
            Box::pin(async move {
                let peer = peer.ok_or_else(|| nobody("sampling request", &request.server_name))?;
                if let Some(why) = refusal(&peer, "sampling") {
                    return Err(why);
                }
                peer.create_message(request.params)
                    .await
                    .map_err(|e| format!("the client refused: {e}"))
            })
        })
    };
    let elicitation: ElicitationHandler = {
        let callers = callers.clone();
        Arc::new(move |request: HostRequest<_>| {
            let peer = callers.caller(&request.server_id);
            Box::pin(async move {
                let peer = peer.ok_or_else(|| nobody("elicitation", &request.server_name))?;
                if let Some(why) = refusal(&peer, "elicitation") {
                    return Err(why);
                }
                let asked = ServerRequest::ElicitRequest(ElicitRequest::new(request.params));
                match peer.send_request(asked).await {
                    Ok(ClientResult::ElicitResult(answer)) => Ok(answer),
                    Ok(_) => Err("the client answered something else than an elicitation".into()),
                    Err(e) => Err(format!("the client refused: {e}")),
                }
            })
        })
    };
    let roots: RootsHandler = {
        let callers = callers.clone();
        // The pool releases its handlers when it closes, so this handle is no cycle past that.
        let pool = pool.clone();
        Arc::new(move |request: HostRequest<()>| {
            let peer = callers
                .caller(&request.server_id)
                .filter(|peer| refusal(peer, "roots").is_none());
            let own = pool.roots_of(&request.server_id);
            Box::pin(async move {
                let Some(peer) = peer else {
                    return Ok(own);
                };
                peer.list_roots()
                    .await
                    .map(|answer| answer.roots)
                    .map_err(|e| format!("the client refused: {e}"))
            })
        })
    };
    pool.set_sampling_handler(Some(sampling));
    pool.set_elicitation_handler(Some(elicitation));
    pool.set_roots_handler(Some(roots));
}
