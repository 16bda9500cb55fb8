//! Requests beyond the pool's verbs: argument completions (`completion/complete`, what a host's
//! prompt form autocompletes with), and any request or notification by method name, for an
//! extension's methods mcpmux has no verb for. Notifications a server sends that mcpmux does
//! not know arrive as `notification` events (see `client_side`).

use rmcp::model::{
    ClientNotification, ClientRequest, CompleteRequestParams, CompletionInfo, CustomNotification,
    CustomRequest, JsonObject, ServerResult,
};

use rmcp::service::{PeerRequestOptions, ServiceError};
use tracing::Instrument;

use crate::error::{Error, Result};
use crate::pool::Pool;
use crate::pool::call::calls::service_error;

impl Pool {
    /// Completion values for an argument of a prompt (`ref/prompt`) or of a resource template
    /// (`ref/resource`), given what was typed so far and the arguments already chosen
    /// (`context`). Fails with `protocol` when the server does not offer completions.
    pub async fn complete(
        &self,
        server: &str,
        mut params: CompleteRequestParams,
    ) -> Result<CompletionInfo> {
        let _flight = self.inner.begin()?;
        let slot = self.slot_for(&self.inner.slot(server)?)?;
        let span = tracing::info_span!("mcpmux.complete", server = %slot.name());
        async {
            crate::trace_context::stamp(&mut params.meta);
            let conn = slot.connection(&self.inner).await?;
            let offered = conn
                .peer
                .peer_info()
                .is_some_and(|i| i.capabilities.completions.is_some());
            if !offered {
                return Err(Error::Protocol {
                    server: slot.name(),
                    message: "completion/complete: the server does not offer completions \
                              (capability completions)"
                        .into(),
                });
            }
            let asked = conn.peer.complete(params);
            let method = "completion/complete";
            let answer = slot.answer(&self.inner, &conn, method, asked).await?;
            Ok(answer.completion)
        }
        .instrument(span)
        .await
    }

    /// Sends `method` with `params` to one server and answers its result as JSON: for a
    /// method mcpmux has no verb for (an extension's). The request goes on the server's
    /// connection like any other, with its timeout.
    pub async fn request(
        &self,
        server: &str,
        method: &str,
        mut params: Option<JsonObject>,
    ) -> Result<serde_json::Value> {
        let _flight = self.inner.begin()?;
        check_method(method)?;
        let slot = self.slot_for(&self.inner.slot(server)?)?;
        let span = tracing::info_span!("mcpmux.request", server = %slot.name(), %method);
        async {
            crate::trace_context::stamp_params(&mut params);
            let conn = slot.connection(&self.inner).await?;
            let request = CustomRequest::new(method, params.map(serde_json::Value::Object));
            // rmcp's own timeout, which tells the server the request is cancelled.
            let limit = slot.request_limit(&self.inner);
            let options = PeerRequestOptions::with_timeout(limit);
            let request = ClientRequest::CustomRequest(request);
            let sent = async {
                let handle = conn.peer.send_request_with_option(request, options).await?;
                handle.await_response().await
            };
            let answer = match sent.await {
                Ok(answer) => answer,
                Err(ServiceError::Timeout { .. }) => {
                    return Err(slot.no_answer(&self.inner, &conn, method, limit));
                }
                Err(e) => return Err(slot.request_failed(&self.inner, &conn, method, e).await),
            };
            conn.touch();
            Ok(match answer {
                ServerResult::CustomResult(r) => r.0,
                // rmcp reads a result into the first of its types it fits; as JSON it is the
                // same.
                other => serde_json::to_value(other).map_err(|e| Error::Protocol {
                    server: slot.name(),
                    message: format!("{method}: an unreadable result: {e}"),
                })?,
            })
        }
        .instrument(span)
        .await
    }

    /// Sends the notification `method` with `params` to one server.
    pub async fn notify(
        &self,
        server: &str,
        method: &str,
        params: Option<JsonObject>,
    ) -> Result<()> {
        let _flight = self.inner.begin()?;
        check_method(method)?;
        let slot = self.slot_for(&self.inner.slot(server)?)?;
        let conn = slot.connection(&self.inner).await?;
        let notification = CustomNotification::new(method, params.map(serde_json::Value::Object));
        conn.peer
            .send_notification(ClientNotification::CustomNotification(notification))
            .await
            .map_err(|e| service_error(&slot.name(), method, e))
    }
}

/// A method name a request or notification may carry.
fn check_method(method: &str) -> Result<()> {
    if method.trim().is_empty() {
        return Err(Error::invalid("the method name is empty"));
    }
    if method.chars().any(char::is_control) {
        return Err(Error::invalid(format!(
            "the method name {method:?} has control characters"
        )));
    }
    Ok(())
}
