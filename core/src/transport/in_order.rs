//! A layer over any transport that hands progress notifications to their call's callback as
//! they are read, so a callback has seen every update sent before the call's reply.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use crate::pool::client_side::ServerShared;

/// `T` with progress routed in the order the server sent it.
pub(crate) struct InOrder<T> {
    inner: T,
    shared: Arc<ServerShared>,
}

impl<T> InOrder<T> {
    pub(crate) fn new(inner: T, shared: &Arc<ServerShared>) -> Self {
        shared.connection_opened();
        InOrder {
            inner,
            shared: shared.clone(),
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for InOrder<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(n) = &message
            && let ServerNotification::ProgressNotification(p) = &n.notification
        {
            self.shared.progress_arrived(&p.params);
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
