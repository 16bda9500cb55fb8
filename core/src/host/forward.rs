//! A host that answers servers' requests by asking other clients: what `mcpmux serve`
//! installs on the pool it serves. Each request of an upstream (a sample, a form, its roots)
//! goes to the served client whose call it belongs to, and that client's answer, or its
//! JSON-RPC error, goes back as it was; a request the forwarder cannot place is refused with
//! an error of its own. Unlike a host's handlers (whose `Err` is a user's refusal), it speaks
//! JSON-RPC errors, and it is told which call a request came on where the transport says.
#![allow(
    deprecated,
    reason = "roots and sampling are deprecated by SEP-2577 but servers still use them"
)]

use rmcp::ErrorData;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, Root,
};

use super::HostRequest;

/// Answers a server's requests of its client on behalf of clients further up. `call` is the
/// number of the call the request came on, when the transport tells (see the pool's
/// `call_mark`): the number its caller gave that call.
#[async_trait::async_trait]
pub(crate) trait Forwarder: Send + Sync {
    async fn sampling(
        &self,
        request: HostRequest<CreateMessageRequestParams>,
        call: Option<u64>,
    ) -> Result<CreateMessageResult, ErrorData>;

    async fn elicitation(
        &self,
        request: HostRequest<ElicitRequestParams>,
        call: Option<u64>,
    ) -> Result<ElicitResult, ErrorData>;

    /// The roots to answer with; `Ok(None)` when no client is asked (the pool's own answer).
    async fn roots(
        &self,
        request: HostRequest<()>,
        call: Option<u64>,
    ) -> Result<Option<Vec<Root>>, ErrorData>;
}
