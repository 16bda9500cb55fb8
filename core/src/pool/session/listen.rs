//! How a connection hears of changes on the server: list changes (tools, prompts, resources)
//! and updates of the resources the host subscribed to.
//!
//! Servers before 2026-07-28 send them as plain notifications (`ClientSide` routes them) and
//! take `resources/subscribe`; a connection re-sends the host's subscriptions when it opens.
//! 2026-07-28 servers send them only on a `subscriptions/listen` stream, which the client opens
//! with a filter of what it wants: each such connection keeps one stream, opened before the
//! connection is handed out (so the first tool list cannot miss a change), with the list
//! changes the server's capabilities offer and the host's subscriptions. A subscription change
//! opens a stream with the new filter before it ends the old one, so nothing falls between
//! them. A stream cannot resume: one that ends while the connection lives is opened again, and
//! whatever it may have missed until the new one is acknowledged is reported as changed (the tool
//! list is fetched again).

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ServerCapabilities, ServerNotification, SubscriptionFilter};
use rmcp::service::{ServiceError, Subscription};
use rmcp::{Peer, RoleClient};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::pool::options::backoff;
use crate::pool::session::client_side::ServerShared;

/// How long opening a connection waits for its stream's acknowledgement before it goes on
/// without one (the stream keeps trying).
const FIRST_ACK: Duration = Duration::from_secs(5);

/// The `subscriptions/listen` stream of one 2026-07-28 connection, run by its own task until
/// the connection ends.
pub(crate) struct Listener {
    /// Bumped to ask for a stream with the current filter.
    wanted: watch::Sender<u64>,
    /// What the newest stream was acknowledged with, and for which request.
    acked: watch::Receiver<Ack>,
    /// Ends the stream (cancelled with the connection, or by [`Listener::stop`]).
    stop: CancellationToken,
    task: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

/// The outcome of opening a stream for request number `request`.
#[derive(Clone, Debug, Default)]
struct Ack {
    request: u64,
    /// The filter the server accepted; `None` when nothing was asked for or it failed.
    accepted: Option<SubscriptionFilter>,
    /// Why the stream could not be opened.
    error: Option<String>,
}

/// Why [`Listener::refilter`] could not confirm the new filter.
pub(crate) enum RefilterError {
    /// The server refused the stream, or the connection ended first.
    Failed(String),
    /// No acknowledgement in time.
    Timeout,
}

impl Listener {
    /// Starts the stream of a new connection and waits (a few seconds at most) for its first
    /// acknowledgement.
    pub async fn start(
        peer: Peer<RoleClient>,
        shared: Arc<ServerShared>,
        ended: CancellationToken,
    ) -> Listener {
        let (wanted, wanted_rx) = watch::channel(1);
        let (acked_tx, mut acked) = watch::channel(Ack::default());
        let capabilities = peer
            .peer_info()
            .map(|i| i.capabilities.clone())
            .unwrap_or_default();
        let stop = ended.child_token();
        let stream = Stream {
            peer,
            capabilities,
            shared,
            ended: stop.clone(),
            acked: acked_tx,
        };
        let task = tokio::spawn(stream.run(wanted_rx));
        let _ = tokio::time::timeout(FIRST_ACK, acked.wait_for(|a| a.request >= 1)).await;
        Listener {
            wanted,
            acked,
            stop,
            task: std::sync::Mutex::new(Some(task)),
        }
    }

    /// Cancels the stream, telling the server, before the connection closes: a server may
    /// otherwise wait for its listen handler before it exits.
    pub async fn stop(&self, grace: Duration) {
        self.stop.cancel();
        let task = self.task.lock().unwrap().take();
        if let Some(task) = task {
            let _ = tokio::time::timeout(grace, task).await;
        }
    }

    /// Opens a stream with the current filter (after the host's subscriptions changed) and
    /// waits for its acknowledgement: the filter the server accepted.
    pub async fn refilter(
        &self,
        timeout: Duration,
    ) -> Result<Option<SubscriptionFilter>, RefilterError> {
        let mut request = 0;
        self.wanted.send_modify(|n| {
            *n += 1;
            request = *n;
        });
        let mut acked = self.acked.clone();
        let waited = tokio::time::timeout(timeout, acked.wait_for(|a| a.request >= request)).await;
        match waited {
            Err(_) => Err(RefilterError::Timeout),
            Ok(Err(_)) => Err(RefilterError::Failed(
                "the connection ended before the server acknowledged it".into(),
            )),
            Ok(Ok(ack)) => match &ack.error {
                Some(e) => Err(RefilterError::Failed(e.clone())),
                None => Ok(ack.accepted.clone()),
            },
        }
    }
}

/// What a connection's stream task holds.
struct Stream {
    peer: Peer<RoleClient>,
    capabilities: ServerCapabilities,
    shared: Arc<ServerShared>,
    /// Cancelled when the connection ends or the stream is stopped.
    ended: CancellationToken,
    acked: watch::Sender<Ack>,
}

/// What ended a stream's wait for its next notification.
enum Next {
    Notification(ServerNotification),
    /// The host's subscriptions changed: open a stream with the new filter.
    Refilter,
    /// The stream ended (or failed) while the connection lives: open it again.
    Reopen(String),
    /// The connection ended.
    Done,
}

impl Stream {
    async fn run(self, mut wanted: watch::Receiver<u64>) {
        let mut current: Option<Subscription> = None;
        // Streams that ended one after another without a notification in between.
        let mut failures = 0u32;
        // Whether the stream before this one ended unasked: what changed until the new one is
        // acknowledged went unheard.
        let mut reopening = false;
        loop {
            let request = *wanted.borrow_and_update();
            let opened = self.open().await;
            if std::mem::take(&mut reopening) {
                self.missed();
            }
            let ack = match &opened {
                Ok(sub) => Ack {
                    request,
                    accepted: sub.as_ref().map(|s| s.acknowledged().clone()),
                    error: None,
                },
                Err(e) => Ack {
                    request,
                    accepted: None,
                    error: Some(e.to_string()),
                },
            };
            match opened {
                Ok(new) => {
                    // The new stream is acknowledged: only now end the old one.
                    if let Some(mut old) = current.take() {
                        let _ = old.cancel().await;
                    }
                    current = new;
                }
                Err(e) if !self.connection_lives() => {
                    tracing::debug!(error = %e, "listen stream not opened: the connection ended");
                    self.acked.send_replace(ack);
                    return;
                }
                Err(e) => {
                    self.log("warning", format!("subscriptions/listen failed: {e}"));
                }
            }
            self.acked.send_replace(ack);
            // A server that refused the stream is asked again only for a new filter; the
            // stream before, if any, goes on meanwhile.
            loop {
                match self.next(&mut current, &mut wanted).await {
                    Next::Notification(n) => {
                        failures = 0;
                        self.dispatch(n);
                    }
                    Next::Refilter => break,
                    Next::Done => {
                        if let Some(mut sub) = current.take() {
                            let _ = sub.cancel().await;
                        }
                        return;
                    }
                    Next::Reopen(why) => {
                        current = None;
                        self.log("notice", format!("listen stream ended ({why}); reopening"));
                        // At once the first time; a server that keeps ending it is waited for.
                        if failures > 0 {
                            tokio::select! {
                                _ = self.ended.cancelled() => return,
                                _ = tokio::time::sleep(backoff(failures - 1)) => {}
                            }
                        }
                        failures = failures.saturating_add(1);
                        reopening = true;
                        break;
                    }
                }
            }
        }
    }

    /// A stream with the filter wanted now, acknowledged; `None` when there is nothing to ask
    /// for (a server with no list changes to offer and no subscriptions).
    async fn open(&self) -> Result<Option<Subscription>, ServiceError> {
        let filter = wanted_filter(&self.capabilities, self.shared.subscribed());
        if filter == SubscriptionFilter::default() {
            return Ok(None);
        }
        tokio::select! {
            opened = self.peer.listen(filter) => opened.map(Some),
            _ = self.ended.cancelled() => Err(ServiceError::TransportClosed),
        }
    }

    async fn next(
        &self,
        current: &mut Option<Subscription>,
        wanted: &mut watch::Receiver<u64>,
    ) -> Next {
        let notification = async {
            match current.as_mut() {
                Some(sub) => sub.next().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = self.ended.cancelled() => Next::Done,
            changed = wanted.changed() => {
                if changed.is_err() { Next::Done } else { Next::Refilter }
            }
            next = notification => match next {
                Ok(Some(n)) => Next::Notification(n),
                _ if !self.connection_lives() => Next::Done,
                Ok(None) => Next::Reopen(match current.as_ref().and_then(Subscription::end) {
                    Some(end) => format!("{end:?}"),
                    None => "closed".into(),
                }),
                Err(e) => Next::Reopen(e.to_string()),
            },
        }
    }

    fn connection_lives(&self) -> bool {
        !self.ended.is_cancelled() && !self.peer.is_transport_closed()
    }

    /// Routes one notification of the stream, as `ClientSide` does for older servers.
    fn dispatch(&self, notification: ServerNotification) {
        match notification {
            ServerNotification::ToolListChangedNotification(_) => self.shared.list_changed(),
            ServerNotification::PromptListChangedNotification(_) => self.shared.prompts_changed(),
            ServerNotification::ResourceListChangedNotification(_) => {
                self.shared.resources_changed()
            }
            ServerNotification::ResourceUpdatedNotification(n) => {
                self.shared.resource_updated(n.params.uri)
            }
            other => tracing::debug!(?other, "listen stream: notification ignored"),
        }
    }

    /// After a stream had to be opened again: what it listened for may have changed unseen.
    fn missed(&self) {
        let offered = wanted_filter(&self.capabilities, Vec::new());
        if offered.tools_list_changed == Some(true) {
            self.shared.list_changed();
        }
        if offered.prompts_list_changed == Some(true) {
            self.shared.prompts_changed();
        }
        if offered.resources_list_changed == Some(true) {
            self.shared.resources_changed();
        }
    }

    fn log(&self, level: &str, message: String) {
        self.shared.transport_log(level, message);
    }
}

/// Subscribes a new connection to a server before 2026-07-28 to the host's resources again,
/// all at once; one the server refuses now is said in a log event.
#[allow(
    deprecated,
    reason = "resources/subscribe is how servers before 2026-07-28 do it"
)]
pub(crate) async fn resubscribe(peer: &Peer<RoleClient>, shared: &ServerShared) {
    let again = shared.subscribed().into_iter().map(|uri| async move {
        let params = rmcp::model::SubscribeRequestParams::new(uri.clone());
        if let Err(e) = peer.subscribe(params).await {
            shared.transport_log(
                "warning",
                format!("could not subscribe to {uri} again after reconnecting: {e}"),
            );
        }
    });
    futures::future::join_all(again).await;
}

/// Every list change the server's capabilities offer, and the subscriptions it can take.
pub(crate) fn wanted_filter(
    capabilities: &ServerCapabilities,
    subscribed: Vec<String>,
) -> SubscriptionFilter {
    let mut all = SubscriptionFilter::builder()
        .tools_list_changed()
        .prompts_list_changed()
        .resources_list_changed();
    if !subscribed.is_empty() {
        all = all.resource_subscriptions(subscribed);
    }
    all.build().supported_by(capabilities)
}

/// Whether a server can take resource subscriptions at all (`resources.subscribe`).
pub(crate) fn can_subscribe(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_some_and(|i| offers_subscriptions(&i.capabilities))
}

fn offers_subscriptions(capabilities: &ServerCapabilities) -> bool {
    capabilities
        .resources
        .as_ref()
        .is_some_and(|r| r.subscribe == Some(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capabilities(json: serde_json::Value) -> ServerCapabilities {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn the_filter_asks_for_what_the_server_offers() {
        let caps = capabilities(serde_json::json!({
            "tools": {"listChanged": true},
            "prompts": {},
            "resources": {"listChanged": true, "subscribe": true}
        }));
        let filter = wanted_filter(&caps, vec!["a://1".into()]);
        assert_eq!(filter.tools_list_changed, Some(true));
        assert_eq!(filter.prompts_list_changed, None);
        assert_eq!(filter.resources_list_changed, Some(true));
        assert_eq!(filter.resource_subscriptions, Some(vec!["a://1".into()]));
        assert!(offers_subscriptions(&caps));
    }

    #[test]
    fn a_server_offering_nothing_gets_no_stream() {
        let caps = capabilities(serde_json::json!({"tools": {}, "resources": {}}));
        assert_eq!(
            wanted_filter(&caps, vec!["a://1".into()]),
            SubscriptionFilter::default()
        );
        assert!(!offers_subscriptions(&caps));
    }
}
