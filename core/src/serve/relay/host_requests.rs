//! Requests an upstream server makes of its client while a served client's call is in flight
//! (`sampling/createMessage`, `elicitation/create`, `roots/list`), forwarded to that client:
//! the user who asked for the tool is the one asked. The upstream connection is shared by
//! every client, so the request is placed with a call, by what tells best:
//! - the task that made the call, when the pool answers within it (a 2026-07-28 server's
//!   `input_required` rounds);
//! - the call's own stream, on Streamable HTTP (the transport hands back the number the
//!   call was given here, see `transport::related_call`);
//! - else, on a connection that cannot tell (stdio, legacy HTTP+SSE, WebSocket), the one
//!   client with calls in flight on that server. When several clients (sessions, users or
//!   profiles) have, nothing says whose the request is, and it is refused rather than put to
//!   a client that did not ask for it: a server that asks its client things during calls is
//!   served `--per-client`, so that each client has a connection of its own.
//!
//! A client that did not declare the capability, or no client waiting on that server, gets
//! the request refused with why; for roots the pool's own roots answer instead (what the
//! server saw before it was served). The client's answer, or its error, goes back as it was.
#![allow(
    deprecated,
    reason = "sampling is deprecated by SEP-2577 but servers still use it"
)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientResult, CreateMessageRequestParams, CreateMessageResult, ElicitRequest,
    ElicitRequestParams, ElicitResult, Root, ServerRequest,
};
use rmcp::service::ServiceError;
use rmcp::{ErrorData, Peer, RoleServer};

use crate::host::HostRequest;
use crate::host::forward::Forwarder;
use crate::pool::Pool;

/// A client's handle, shared by the parts of its call that may reach it: a copy of a `Peer`
/// raises some ten reference counts, and is dropped again, on every call.
pub type Caller = Arc<Peer<RoleServer>>;

tokio::task_local! {
    /// The client whose call this task is making.
    static CALLER: Caller;
}

/// Who a client is, for telling clients apart: its session (none for a 2026-07-28 client),
/// the user its access token names, and the profile it is served; hashed.
pub type ClientKey = u64;

/// A call in flight on one upstream: its number, its client, the client's handle.
type Entry = (u64, ClientKey, Caller);

/// The served clients with a call in flight, by the upstream server's id, oldest first (so
/// in order of number). A server's queue stays when it empties (a few bytes for each server
/// ever called): made and dropped with each call, it cost two allocations a call.
#[derive(Default)]
pub struct Callers {
    waiting: Mutex<crate::fast_map::FastMap<Arc<str>, Vec<Entry>>>,
    next: AtomicU64,
}

/// A call in flight: leaves [`Callers`] when dropped.
pub struct Waiting {
    callers: Arc<Callers>,
    server_id: Arc<str>,
    id: u64,
}

impl Waiting {
    /// The call's number, as the transport hands it back on the call's own requests.
    pub fn number(&self) -> u64 {
        self.id
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut waiting = self.callers.waiting.lock().unwrap();
        if let Some(list) = waiting.get_mut(&self.server_id)
            && let Ok(at) = list.binary_search_by_key(&self.id, |(id, _, _)| *id)
        {
            list.remove(at);
        }
    }
}

/// Why a server's request has no client to go to.
#[derive(Debug, PartialEq, Eq)]
enum Unplaced {
    /// No client has a call in flight on that server.
    Nobody,
    /// This many clients have, and nothing tells whose the request is.
    Several(usize),
}

impl Callers {
    /// Notes that `peer`, the client `key`, is calling a tool of `server_id` until the guard
    /// drops.
    pub fn enter(self: &Arc<Self>, server_id: Arc<str>, key: ClientKey, peer: Caller) -> Waiting {
        let mut waiting = self.waiting.lock().unwrap();
        // Numbered under the lock, so that each queue stays in order of number; from 1, so
        // that 0 is no call's.
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        waiting
            .entry(server_id.clone())
            .or_default()
            .push((id, key, peer));
        drop(waiting);
        Waiting {
            callers: self.clone(),
            server_id,
            id,
        }
    }

    /// The client a request of `server_id` goes to; `call` is the number of the call it came
    /// on, when the transport tells.
    fn caller(&self, server_id: &str, call: Option<u64>) -> Result<Caller, Unplaced> {
        if let Ok(caller) = CALLER.try_with(Caller::clone) {
            return Ok(caller);
        }
        let waiting = self.waiting.lock().unwrap();
        let queue = waiting.get(server_id).map_or(&[][..], Vec::as_slice);
        let calls: Vec<(u64, ClientKey)> = queue.iter().map(|(id, key, _)| (*id, *key)).collect();
        place(&calls, call).map(|at| queue[at].2.clone())
    }

    /// Runs `call` as `peer`'s, so that what the pool asks within it goes to `peer`.
    pub fn as_caller<F: Future>(peer: Caller, call: F) -> impl Future<Output = F::Output> {
        CALLER.scope(peer, call)
    }
}

/// Which of the `calls` in flight on a server (number, client) a request of the server goes
/// to: the call it came on (`call`), else the one client's oldest call when all are one
/// client's.
fn place(calls: &[(u64, ClientKey)], call: Option<u64>) -> Result<usize, Unplaced> {
    if let Some(call) = call
        && let Some(at) = calls.iter().position(|(id, _)| *id == call)
    {
        return Ok(at);
    }
    let Some((_, first)) = calls.first() else {
        return Err(Unplaced::Nobody);
    };
    let mut clients: Vec<ClientKey> = calls.iter().map(|(_, key)| *key).collect();
    clients.sort_unstable();
    clients.dedup();
    match clients.as_slice() {
        [only] if only == first => Ok(0),
        several => Err(Unplaced::Several(several.len())),
    }
}

/// Why a request cannot be forwarded, or `None` when `peer` may be asked for `what`.
fn refusal(peer: &Peer<RoleServer>, what: &str) -> Option<ErrorData> {
    let declared = peer.peer_info().is_some_and(|info| {
        let caps = &info.capabilities;
        match what {
            "sampling" => caps.sampling.is_some(),
            "roots" => caps.roots.is_some(),
            _ => caps.elicitation.is_some(),
        }
    });
    // What the client would have answered, had it been asked.
    (!declared).then(|| {
        ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!("the client that made the call does not offer {what}"),
            None,
        )
    })
}

/// The refusal of a request that has no client to go to.
fn unplaced(why: Unplaced, request: &str, server: &str) -> ErrorData {
    let message = match why {
        Unplaced::Nobody => {
            format!("no client is waiting on server '{server}' to answer its {request}")
        }
        Unplaced::Several(n) => format!(
            "mcpmux cannot tell which of its {n} clients with calls on server '{server}' its \
             {request} is for, so it asks none of them; serve '{server}' --per-client to give \
             each client a connection of its own"
        ),
    };
    ErrorData::internal_error(message, None)
}

/// The client's error as it gave it; a failure to reach it as an internal error.
fn relayed(e: ServiceError) -> ErrorData {
    match e {
        ServiceError::McpError(error) => error,
        other => ErrorData::internal_error(format!("the client did not answer: {other}"), None),
    }
}

/// Sends each of a pool's servers' requests to the served client whose call it belongs to.
struct ToCallers {
    callers: Arc<Callers>,
    /// The pool's own roots, for a roots request no client answers. The pool drops its
    /// forwarder when it closes, so this handle is no cycle past that.
    pool: Pool,
}

#[async_trait::async_trait]
impl Forwarder for ToCallers {
    async fn sampling(
        &self,
        request: HostRequest<CreateMessageRequestParams>,
        call: Option<u64>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let peer = (self.callers.caller(&request.server_id, call))
            .map_err(|why| unplaced(why, "sampling request", &request.server_name))?;
        if let Some(refused) = refusal(&peer, "sampling") {
            return Err(refused);
        }
        peer.create_message(request.params).await.map_err(relayed)
    }

    async fn elicitation(
        &self,
        request: HostRequest<ElicitRequestParams>,
        call: Option<u64>,
    ) -> Result<ElicitResult, ErrorData> {
        let peer = (self.callers.caller(&request.server_id, call))
            .map_err(|why| unplaced(why, "elicitation", &request.server_name))?;
        if let Some(refused) = refusal(&peer, "elicitation") {
            return Err(refused);
        }
        let asked = ServerRequest::ElicitRequest(ElicitRequest::new(request.params));
        match peer.send_request(asked).await.map_err(relayed)? {
            ClientResult::ElicitResult(answer) => Ok(answer),
            _ => Err(ErrorData::internal_error(
                "the client answered something else than an elicitation",
                None,
            )),
        }
    }

    async fn roots(
        &self,
        request: HostRequest<()>,
        call: Option<u64>,
    ) -> Result<Option<Vec<Root>>, ErrorData> {
        let peer = self
            .callers
            .caller(&request.server_id, call)
            .ok()
            .filter(|peer| refusal(peer, "roots").is_none());
        let Some(peer) = peer else {
            return Ok(Some(self.pool.roots_of(&request.server_id)));
        };
        let answer = peer.list_roots().await.map_err(relayed)?;
        Ok(Some(answer.roots))
    }
}

/// Has `pool` forward its servers' requests to the calling clients.
pub fn forward(pool: &Pool, callers: &Arc<Callers>) {
    pool.set_forwarder(Some(Arc::new(ToCallers {
        callers: callers.clone(),
        pool: pool.clone(),
    })));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_goes_to_its_call_or_to_the_one_client_waiting() {
        assert_eq!(place(&[], None), Err(Unplaced::Nobody));
        assert_eq!(place(&[], Some(3)), Err(Unplaced::Nobody));
        // One client, two calls: its oldest.
        assert_eq!(place(&[(1, 7), (2, 7)], None), Ok(0));
        // Two clients: nothing tells, unless the call does.
        let two = [(1, 7), (2, 7), (3, 8)];
        assert_eq!(place(&two, None), Err(Unplaced::Several(2)));
        assert_eq!(place(&two, Some(3)), Ok(2));
        assert_eq!(place(&two, Some(2)), Ok(1));
        // A number no call has any more: as if none were given.
        assert_eq!(place(&two, Some(9)), Err(Unplaced::Several(2)));
        assert_eq!(place(&[(1, 7)], Some(9)), Ok(0));
    }
}
