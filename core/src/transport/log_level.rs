//! A layer over any transport that asks for the server's log messages in every 2026-07-28
//! request: such a server sends `notifications/message` only about a request whose `_meta`
//! carries `io.modelcontextprotocol/logLevel` (servers before it take `logging/setLevel` once;
//! see `pool::connection`).

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{GetMeta, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use crate::pool::client_side::ServerShared;

/// `T` with the host's log level in each request of a 2026-07-28 session.
pub(crate) struct LogLevelStamp<T> {
    inner: T,
    shared: Arc<ServerShared>,
}

impl<T> LogLevelStamp<T> {
    pub(crate) fn new(inner: T, shared: &Arc<ServerShared>) -> Self {
        LogLevelStamp {
            inner,
            shared: shared.clone(),
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for LogLevelStamp<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(r) = &mut item
            && let Some(level) = self.shared.log_level()
        {
            let meta = r.request.get_meta_mut();
            // Only 2026-07-28 requests carry the protocol version in `_meta` (rmcp puts it
            // there); a server before it would not know the key.
            if meta.protocol_version().is_some() {
                meta.set_log_level(level.to_mcp());
            }
        }
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.inner.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
