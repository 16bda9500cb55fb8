//! The pool's other verbs that a server may answer in rounds: reading and subscribing to a
//! resource, getting a prompt, and the rounds loop they share. `tools/call` keeps a loop of its
//! own (`send.rs`): its direct path answers input rounds without rmcp's request types, and a
//! call may also become a task.

use std::sync::Arc;

use rmcp::model::{
    GetPromptRequestParams, GetPromptResult, ReadResourceRequestParams, ReadResourceResult,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::ServiceError;
use tracing::Instrument;

use crate::error::{Error, Result};
use crate::pool::Pool;
use crate::pool::call::calls::{CallRound, InputRound, done};
use crate::pool::call::input_rounds::{InputRounds, Retry, Round};
use crate::pool::call::input_rounds::{answer_input, unexpected};
use crate::pool::server::slot::Slot;
use crate::pool::session::connection::Connection;
use crate::pool::session::listen::RefilterError;

impl Pool {
    /// Reads one resource of one server.
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<ReadResourceResult> {
        done(self.read_resource_rounds(server, uri, None).await?)
    }

    /// One round of `read_resource` whose server's questions come back (see
    /// [`Pool::call_tool_round`]).
    pub async fn read_resource_round(
        &self,
        server: &str,
        uri: &str,
        round: InputRound,
    ) -> Result<CallRound<ReadResourceResult>> {
        self.read_resource_rounds(server, uri, Some(round)).await
    }

    pub(super) async fn read_resource_rounds(
        &self,
        server: &str,
        uri: &str,
        round: Option<InputRound>,
    ) -> Result<CallRound<ReadResourceResult>> {
        let _flight = self.inner.begin()?;
        let slot = self.slot_for(&self.inner.slot(server)?)?;
        let conn = slot.connection(&self.inner).await?;
        let mut params = ReadResourceRequestParams::new(uri);
        let span = tracing::info_span!("mcpmux.read_resource", server = %slot.name(), %uri);
        let peer = &conn.peer;
        async {
            crate::trace_context::stamp(&mut params.meta);
            self.in_rounds(
                &slot,
                &conn,
                "resources/read",
                params,
                round,
                |p| async move { peer.read_resource_once(p).await.map(Round::from) },
            )
            .await
        }
        .instrument(span)
        .await
    }

    /// Subscribes to changes of a resource; they arrive as `resource:updated` events. The
    /// subscription lasts until [`Pool::unsubscribe_resource`], over reconnects: on a
    /// 2026-07-28 server through the connection's `subscriptions/listen` stream, on older
    /// ones with `resources/subscribe`.
    pub async fn subscribe_resource(&self, server: &str, uri: &str) -> Result<()> {
        self.set_subscribed(server, uri, true).await
    }

    /// Ends a subscription made with [`Pool::subscribe_resource`].
    pub async fn unsubscribe_resource(&self, server: &str, uri: &str) -> Result<()> {
        self.set_subscribed(server, uri, false).await
    }

    #[allow(
        deprecated,
        reason = "resources/subscribe is how servers before 2026-07-28 do it"
    )]
    pub(super) async fn set_subscribed(
        &self,
        server: &str,
        uri: &str,
        subscribe: bool,
    ) -> Result<()> {
        let _flight = self.inner.begin()?;
        let slot = self.inner.slot(server)?;
        let conn = slot.connection(&self.inner).await?;
        let name = slot.name();
        let Some(listener) = &conn.listener else {
            // Before 2026-07-28: the server keeps the subscription; the set is what a new
            // connection subscribes to again.
            if subscribe {
                let sent = conn.peer.subscribe(SubscribeRequestParams::new(uri));
                slot.answer(&self.inner, &conn, "resources/subscribe", sent)
                    .await?;
            } else {
                let sent = conn.peer.unsubscribe(UnsubscribeRequestParams::new(uri));
                slot.answer(&self.inner, &conn, "resources/unsubscribe", sent)
                    .await?;
            }
            slot.shared.set_subscribed(uri, subscribe);
            return Ok(());
        };
        let refused = |why: String| Error::Protocol {
            server: name.clone(),
            message: format!("could not subscribe to {uri}: {why}"),
        };
        if subscribe && !crate::pool::session::listen::can_subscribe(&conn.peer) {
            return Err(refused(
                "the server does not offer resource subscriptions (capability resources.subscribe)"
                    .into(),
            ));
        }
        if !slot.shared.set_subscribed(uri, subscribe) {
            return Ok(());
        }
        let timeout = self.inner.opts.request_timeout();
        let accepted = match listener.refilter(timeout).await {
            Ok(accepted) => accepted,
            Err(e) => {
                slot.shared.set_subscribed(uri, !subscribe);
                return Err(match e {
                    RefilterError::Failed(why) => refused(why),
                    RefilterError::Timeout => Error::Timeout {
                        what: format!("subscriptions/listen to server '{name}'"),
                        after: timeout,
                    },
                });
            }
        };
        let listed = accepted
            .and_then(|f| f.resource_subscriptions)
            .is_some_and(|uris| uris.iter().any(|u| u == uri));
        if subscribe && !listed {
            slot.shared.set_subscribed(uri, false);
            return Err(refused(
                "the server's subscriptions/listen acknowledgement left it out".into(),
            ));
        }
        Ok(())
    }

    /// Gets one prompt of one server, filled with `arguments`.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<GetPromptResult> {
        done(
            self.get_prompt_rounds(server, name, arguments, None)
                .await?,
        )
    }

    /// One round of `get_prompt` whose server's questions come back (see
    /// [`Pool::call_tool_round`]).
    pub async fn get_prompt_round(
        &self,
        server: &str,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        round: InputRound,
    ) -> Result<CallRound<GetPromptResult>> {
        self.get_prompt_rounds(server, name, arguments, Some(round))
            .await
    }

    pub(super) async fn get_prompt_rounds(
        &self,
        server: &str,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        round: Option<InputRound>,
    ) -> Result<CallRound<GetPromptResult>> {
        let _flight = self.inner.begin()?;
        let slot = self.slot_for(&self.inner.slot(server)?)?;
        let conn = slot.connection(&self.inner).await?;
        let mut params = GetPromptRequestParams::new(name);
        if let Some(args) = arguments {
            params = params.with_arguments(args);
        }
        let span = tracing::info_span!("mcpmux.get_prompt", server = %slot.name(), prompt = %name);
        let peer = &conn.peer;
        async {
            crate::trace_context::stamp(&mut params.meta);
            self.in_rounds(&slot, &conn, "prompts/get", params, round, |p| async move {
                peer.get_prompt_once(p).await.map(Round::from)
            })
            .await
        }
        .instrument(span)
        .await
    }

    /// Sends a request with `send` until the server answers it with a result, answering the
    /// `input_required` rounds of a 2026-07-28 server in between; with `round`, sends it once
    /// with the caller's answers and returns what the server asks.
    pub(super) async fn in_rounds<P, R, F, Fut>(
        &self,
        slot: &Arc<Slot>,
        conn: &Arc<Connection>,
        method: &str,
        mut params: P,
        round: Option<InputRound>,
        send: F,
    ) -> Result<CallRound<R>>
    where
        P: Retry + Clone,
        F: Fn(P) -> Fut,
        Fut: Future<Output = std::result::Result<Round<R>, ServiceError>>,
    {
        let returns_input = round.is_some();
        if let Some(round) = round {
            params.retry_with(round.responses, round.state);
        }
        let mut rounds = InputRounds::new(self.inner.opts.max_input_rounds);
        loop {
            let sent = send(params.clone());
            let round = slot.answer(&self.inner, conn, method, sent).await?;
            let asked = match round {
                Round::Done(result) => return Ok(CallRound::Done(result)),
                Round::Input(asked) if returns_input => return Ok(CallRound::InputRequired(asked)),
                Round::Input(asked) => asked,
                Round::Unexpected => return Err(unexpected(slot, method)),
            };
            answer_input(slot, &mut rounds, asked, &mut params, method).await?;
        }
    }
}
