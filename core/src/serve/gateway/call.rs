//! A client's call through the gateway: the pool's call options for it (cancellation,
//! progress relayed in order), its input rounds, its log messages, what it is refused, and
//! its line in the audit log.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::{
    Gateway, ServedTool,
    client::{client_capabilities, client_name, is_modern, owner, principal, renders_views},
    completed, text_of, to_error_data,
};
use crate::error::Error;
use crate::pool::call::call_mark;
use crate::pool::{CallOptions, CallRound, Progress};
use crate::serve::relay::host_requests::{Caller, Callers, Waiting};
use crate::serve::relay::input_rounds::ClientRound;
use crate::serve::relay::logging::{ClientLevel, ServerFilter};
use crate::serve::view::exposure::{
    CALL_TOOL, CallArgs, DESCRIBE_TOOLS, DescribeArgs, Exposure, SEARCH_TOOLS, SearchArgs,
    arguments,
};

impl Gateway {
    /// A call of one of the search surface's tools.
    pub(super) async fn call_meta(
        &self,
        tool: &str,
        args: Option<serde_json::Map<String, serde_json::Value>>,
        context: &RequestContext<RoleServer>,
        round: Option<ClientRound>,
    ) -> Result<CallToolResponse, ErrorData> {
        match tool {
            SEARCH_TOOLS => {
                let SearchArgs { query, limit } = arguments(tool, args)?;
                self.search(&query, limit).await.map(Into::into)
            }
            DESCRIBE_TOOLS => {
                let DescribeArgs { names } = arguments(tool, args)?;
                self.describe(&names).await.map(Into::into)
            }
            _ => {
                let CallArgs { name, arguments: a } = arguments(tool, args)?;
                // The search surface is the model's: served names of tools for the model only
                // (a view's own tools are not on it, by either name).
                if !self
                    .pool_tool(&name, false)
                    .await?
                    .is_some_and(|t| t.for_model)
                {
                    return Err(self.refuse(context, &name, false));
                }
                Box::pin(self.call_round(&name, a, context, round)).await
            }
        }
    }

    /// A call of the served tool `name`. With `round` (a 2026-07-28 client's call), an
    /// upstream's `input_required` goes back to the client, and `round` brings its answers;
    /// without, the pool answers it (asking a legacy client through its session).
    pub(super) async fn call_round(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
        context: &RequestContext<RoleServer>,
        round: Option<ClientRound>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.exposure() != Exposure::Direct
            && [SEARCH_TOOLS, DESCRIBE_TOOLS, CALL_TOOL].contains(&name)
        {
            return self.call_meta(name, arguments, context, round).await;
        }
        // Asked on every call, and again on a retry or an error: read once.
        let views = renders_views(context);
        let own_name;
        let name = match self.view_tool(name, views).await? {
            Some(served) => {
                own_name = served;
                own_name.as_str()
            }
            None => name,
        };
        let mut arguments = arguments;
        let mut fresh = false;
        loop {
            let Some(tool) = self
                .pool_tool(name, fresh)
                .await?
                .filter(|t| t.for_model || views)
            else {
                return Err(self.refuse(context, name, views));
            };
            let caller = Arc::new(context.peer.clone());
            let (mut options, relay) = call_options(context, &caller);
            options.tasks = crate::serve::relay::tasks::mode(context, self.profile().pass_through);
            let waiting = (self.pool.tool_server_id(&tool.id)).map(|server| {
                self.callers
                    .enter(server, self.client_key(context), caller.clone())
            });
            // Only the audit log reads the time a call took.
            let started = self.options.audit.is_some().then(std::time::Instant::now);
            let logs = self.call_logs(context, &tool).await;
            let pool = self.pool_for(context);
            let mut input = round.as_ref().map(|r| r.input.clone());
            // Lent: a tool the pool no longer knows leaves them for the call once more below.
            let call = pool.call_tool_lent(&tool.id, &mut arguments, &mut options, &mut input);
            // Numbered, so that what the upstream asks on the call's own stream comes back
            // to this client.
            let number = waiting.as_ref().map_or(0, Waiting::number);
            let result = call_mark::marked(number, Callers::as_caller(caller, call)).await;
            if let Some(relay) = relay {
                relay.flush().await;
            }
            if let Some((done, task)) = logs {
                let _ = done.send(());
                let _ = task.await;
            }
            let retried = matches!(result, Err(Error::NotFound { kind: "tool", .. })) && !fresh;
            if !retried {
                self.audit(context, name, &tool, &result, started);
            }
            return match result {
                Ok(CallRound::Done(mut result)) => {
                    completed(&mut result.result_type);
                    Ok(result.into())
                }
                Ok(CallRound::Task(started)) => {
                    crate::serve::relay::tasks::to_client(&self.seal, started, owner(context))
                        .map(Into::into)
                }
                Ok(CallRound::InputRequired(asked)) => {
                    // Only a call in rounds gets the upstream's questions back.
                    let asked_as = round.as_ref().map_or(name, |r| r.asked_as.as_str());
                    crate::serve::relay::input_rounds::ask_client(&self.seal, asked_as, asked)
                        .map(Into::into)
                }
                // The pool's tools changed since the names were taken: once more, by name.
                Err(Error::NotFound { kind: "tool", .. }) if !fresh => {
                    fresh = true;
                    continue;
                }
                // Still gone after listing again: named as this client knows it, and offered
                // only what it is shown (the pool's offer names pool ids, perhaps of tools this
                // profile hides).
                Err(Error::NotFound { kind: "tool", .. }) => Err(self.unknown_tool(name, views)),
                Err(Error::Cancelled) => Err(ErrorData::internal_error("cancelled", None)),
                Err(e @ Error::InvalidArgument(_)) => Err(to_error_data(e)),
                // The upstream refused the call (unknown arguments, a capability the client
                // lacks): the client gets the same error.
                Err(e @ Error::Tool { code: Some(_), .. }) => Err(relayed(e)),
                // The tool or its server failed: the client's user reads why.
                Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(e.to_string())]).into()),
            };
        }
    }

    /// For a 2026-07-28 client, which is asked in rounds: what its `request` brings to the
    /// upstream (its answers, the upstream's state). `None` for a client with a session.
    pub(super) fn round_of(
        &self,
        context: &RequestContext<RoleServer>,
        request: std::fmt::Arguments<'_>,
        responses: Option<rmcp::model::InputResponses>,
        state: Option<&str>,
    ) -> Result<Option<ClientRound>, ErrorData> {
        if !is_modern(context) {
            return Ok(None);
        }
        // Named only here: a call of a client with a session (every call, for most) does
        // not pay for the text.
        let request = request.to_string();
        let input =
            crate::serve::relay::input_rounds::from_client(&self.seal, &request, responses, state)?;
        Ok(Some(ClientRound {
            input,
            asked_as: request,
        }))
    }

    /// The servers of this gateway's profile, by id, as a relay's filter.
    pub(super) fn server_filter(&self) -> ServerFilter {
        let (pool, view) = (self.pool.clone(), self.view.clone());
        Box::new(move |id| {
            let profile = view.read().unwrap().clone();
            pool.server_states()
                .iter()
                .any(|s| s.id == id && profile.serves(&s.name))
        })
    }

    /// For a 2026-07-28 call whose `_meta` asks for log messages: a relay of the called
    /// server's messages to the call's stream, until the sender is used.
    pub(super) async fn call_logs(
        &self,
        context: &RequestContext<RoleServer>,
        tool: &ServedTool,
    ) -> Option<(
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<()>,
    )> {
        let level = crate::serve::relay::logging::from_mcp(context.meta.log_level()?)?;
        let server = self.pool.tool_server(&tool.id)?;
        Box::pin(self.pool.hear_logs_at(level)).await;
        let client_level = Arc::new(ClientLevel::default());
        client_level.set(level);
        let (done, until) = tokio::sync::oneshot::channel::<()>();
        let relay = crate::serve::relay::logging::relay(
            self.pool.clone(),
            self.pool.events(),
            context.peer.clone(),
            client_level,
            Box::new(move |id| id == server),
            async move {
                let _ = until.await;
            },
        );
        Some((done, tokio::spawn(relay)))
    }

    /// The error of a call this client may not make (a name it is not shown, or one its
    /// profile's allow and deny lists leave out), recorded in the audit log with the reason:
    /// a refused attempt is what an audit is read for.
    pub(super) fn refuse(
        &self,
        context: &RequestContext<RoleServer>,
        name: &str,
        views: bool,
    ) -> ErrorData {
        if let Some(log) = &self.options.audit {
            let profile = self.profile();
            let reason = match profile.shows(name) {
                true => "no tool of this name is served to this client".to_string(),
                false => format!(
                    "the allow and deny lists of profile '{}' leave it out",
                    profile.name.as_deref().unwrap_or_default()
                ),
            };
            let entry = crate::serve::front::audit::Entry {
                client: &client_name(context).unwrap_or_else(|| "unknown".into()),
                principal: principal(context),
                profile: profile.name.as_deref(),
                server: None,
                tool: name,
                outcome: "refused",
                error: Some(reason),
            };
            log.record(entry, std::time::Duration::ZERO);
        }
        self.unknown_tool(name, views)
    }

    /// Records a call in the audit log, if there is one.
    pub(super) fn audit(
        &self,
        context: &RequestContext<RoleServer>,
        name: &str,
        tool: &ServedTool,
        result: &crate::error::Result<CallRound>,
        started: Option<std::time::Instant>,
    ) {
        let (Some(log), Some(started)) = (&self.options.audit, started) else {
            return;
        };
        let (outcome, error) = match result {
            // Asking the client is not the end of the call: its last round is recorded.
            Ok(CallRound::InputRequired(_)) => return,
            Ok(CallRound::Done(r)) if r.is_error == Some(true) => ("error", Some(text_of(r))),
            Ok(CallRound::Done(_)) => ("ok", None),
            // The client follows the task from here.
            Ok(CallRound::Task(_)) => ("task", None),
            Err(Error::Cancelled) => ("cancelled", None),
            Err(e) => ("error", Some(e.to_string())),
        };
        let client = client_name(context);
        let profile = self.profile();
        let entry = crate::serve::front::audit::Entry {
            client: client.as_deref().unwrap_or("unknown"),
            principal: principal(context),
            profile: profile.name.as_deref(),
            server: Some(&tool.server),
            tool: name,
            outcome,
            error,
        };
        log.record(entry, started.elapsed());
    }
}

/// How long a call's last progress notifications may take to go out before its result does.
/// Waiting ends as soon as they are out; the bound only keeps a client that stopped reading
/// from holding the result back forever, and is generous because a loaded machine can take a
/// while to schedule the relay.
pub(super) const PROGRESS_FLUSH: Duration = Duration::from_secs(5);

/// The pool's options for a call made by `context`: its cancellation, and its progress sent
/// on to the client in order through a [`ProgressRelay`] (a task started by the first update:
/// most calls report none).
pub(super) fn call_options(
    context: &RequestContext<RoleServer>,
    caller: &Caller,
) -> (CallOptions, Option<Arc<ProgressRelay>>) {
    let mut options = CallOptions {
        cancel: Some(context.ct.clone()),
        client_capabilities: client_capabilities(context),
        ..CallOptions::default()
    };
    let Some(token) = context.meta.get_progress_token() else {
        return (options, None);
    };
    let relay = Arc::new(ProgressRelay {
        token,
        peer: caller.clone(),
        state: Mutex::default(),
    });
    let sender = relay.clone();
    options.on_progress = Some(Arc::new(move |p| sender.send(p)));
    (options, Some(relay))
}

/// A call's progress on its way to the client: in order, through one task per call that
/// reports any.
pub(super) struct ProgressRelay {
    token: rmcp::model::ProgressToken,
    peer: Caller,
    state: Mutex<
        Option<(
            tokio::sync::mpsc::UnboundedSender<Progress>,
            tokio::task::JoinHandle<()>,
        )>,
    >,
}

impl ProgressRelay {
    pub(super) fn send(&self, progress: Progress) {
        let mut state = self.state.lock().unwrap();
        let (tx, _) = state.get_or_insert_with(|| {
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Progress>();
            let (peer, token) = (self.peer.clone(), self.token.clone());
            let task = tokio::spawn(async move {
                while let Some(p) = rx.recv().await {
                    let mut param = ProgressNotificationParam::new(token.clone(), p.progress);
                    param.total = p.total;
                    param.message = p.message;
                    // A client that went away misses its progress; the call goes on.
                    let _ = peer.notify_progress(param).await;
                }
            });
            (tx, task)
        });
        let _ = tx.send(progress);
    }

    /// Waits (a while) for the updates sent so far to go out, so they precede the result.
    pub(super) async fn flush(&self) {
        let Some((tx, task)) = self.state.lock().unwrap().take() else {
            return;
        };
        drop(tx);
        let _ = tokio::time::timeout(PROGRESS_FLUSH, task).await;
    }
}

/// An error of a request relayed upstream: the upstream's own refusal as it is, else the
/// pool's.
pub(super) fn relayed(e: Error) -> ErrorData {
    match e {
        Error::Tool {
            message,
            code: Some(code),
            data,
            ..
        } => ErrorData::new(rmcp::model::ErrorCode(code), message, data),
        e => to_error_data(e),
    }
}

/// A task where only a tool call can start one (the pool never returns it there).
pub(super) fn not_a_call() -> ErrorData {
    ErrorData::internal_error("a task answered a request that is not a tool call", None)
}
