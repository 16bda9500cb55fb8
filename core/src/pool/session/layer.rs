//! What the pool adds to every transport of a session, in both directions:
//! - progress notifications go to their call's callback as they are read, so a callback has
//!   seen every update sent before the call's reply (rmcp runs its notification handlers as
//!   spawned tasks, which can lose the race with the reply);
//! - log messages become `log` events as they are read, for the same reason (a served
//!   client hears a call's messages on the call's stream, which closes with the reply);
//! - every 2026-07-28 request asks for the server's log messages at the level the host set:
//!   such a server sends `notifications/message` only about a request whose `_meta` carries
//!   `io.modelcontextprotocol/logLevel` (older servers take `logging/setLevel` once; see
//!   `session::logs`).

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{GetMeta, JsonRpcMessage, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use crate::pool::session::client_side::ServerShared;

/// `T` with the pool's hooks on the messages of a session.
pub(super) struct SessionLayer<T> {
    inner: T,
    shared: Arc<ServerShared>,
}

impl<T> SessionLayer<T> {
    pub(super) fn new(inner: T, shared: &Arc<ServerShared>) -> Self {
        shared.connection_opened();
        SessionLayer {
            inner,
            shared: shared.clone(),
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for SessionLayer<T> {
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

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = self.inner.receive().await?;
            if let JsonRpcMessage::Notification(n) = &message {
                match &n.notification {
                    ServerNotification::ProgressNotification(p) => {
                        self.shared.progress_arrived(&p.params)
                    }
                    #[allow(deprecated, reason = "older servers still send log messages")]
                    ServerNotification::LoggingMessageNotification(m) => {
                        // Said here and nowhere else: rmcp's handler would say it again.
                        self.shared.log_arrived(&m.params);
                        continue;
                    }
                    _ => {}
                }
            }
            return Some(message);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
