//! The task driver (the tasks extension, SEP-2663): a server may answer `tools/call` with a
//! task rather than a result, for long work. The pool follows the task to its end as if the
//! call had been direct, so every caller gets long-running tools for free: it polls
//! `tasks/get` at the interval the server suggests (with a bounded backoff when it suggests
//! none), answers the task's input requests with the host's handlers (as for a 2026-07-28
//! server's `input_required`) through `tasks/update`, turns the caller's cancel (or a dropped
//! call) into `tasks/cancel`, and keeps polling over a reconnect of the server, which keeps
//! its tasks by id when its store outlives the process.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, CancelTaskParams, GetTaskParams, GetTaskResult, InputResponses, JsonObject,
    Task, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::ServiceError;

use crate::error::{Error, Result};
use crate::events::Event;
use crate::pool::call::send::ToolCall;
use crate::pool::call::tell_on_drop::TellOnDrop;
use crate::pool::session::client_side::Progress;
use crate::pool::session::connection::Connection;
use crate::pool::{Inner, Pool};

/// The shortest and longest waits between two polls, whatever the server suggests.
const MIN_POLL: Duration = Duration::from_millis(50);
const MAX_POLL: Duration = Duration::from_secs(30);
/// The first wait when the server suggests none; it doubles up to [`UNSUGGESTED_MAX`].
const UNSUGGESTED_FIRST: Duration = Duration::from_millis(100);
const UNSUGGESTED_MAX: Duration = Duration::from_secs(5);
/// How many reconnects in a row polling survives before the call fails.
const MAX_RECONNECTS: u32 = 3;

/// The wait before poll number `polls` (from 0) of a task whose server suggests `suggested`.
fn poll_wait(suggested: Option<u64>, polls: u32) -> Duration {
    match suggested {
        Some(ms) => Duration::from_millis(ms).clamp(MIN_POLL, MAX_POLL),
        None => (UNSUGGESTED_FIRST * 2u32.saturating_pow(polls.min(6))).min(UNSUGGESTED_MAX),
    }
}

/// A calling client's capabilities (a gateway passes its client's on), with the tasks
/// extension: the pool drives a task itself, whatever the client can do.
pub(in crate::pool) fn with_tasks(capabilities: &serde_json::Value) -> serde_json::Value {
    let mut capabilities = capabilities.clone();
    if let Some(all) = capabilities.as_object_mut() {
        let extensions = all
            .entry("extensions")
            .or_insert_with(|| serde_json::json!({}));
        if let Some(extensions) = extensions.as_object_mut() {
            extensions
                .entry(rmcp::model::TASKS_EXTENSION_ID)
                .or_insert_with(|| serde_json::json!({}));
        }
    }
    capabilities
}

/// A status of the task a call's server runs it as.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskUpdate {
    /// The server's id of the task.
    pub task_id: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
}

/// Told each status of a call's task ([`crate::pool::CallOptions::on_task`]).
pub type TaskFn = Arc<dyn Fn(TaskUpdate) + Send + Sync>;

/// What a call has seen of its task, to report only changes.
#[derive(Default)]
struct TaskSeen {
    /// The last status and message reported.
    last: Option<(TaskStatus, Option<String>)>,
    /// The last message passed on as progress, and how many were: the progress value, which
    /// must grow, is their count (a task's status carries no figures).
    message: Option<String>,
    messages: u32,
}

/// A tool call started in the background ([`Pool::start_task`]), for a host that follows it:
/// the status of the task its server runs it as (none while the server has announced none, and
/// never for a call answered directly), a wait for each change, its result, and a cancel. The
/// one follower of a call in every language: the bindings wrap it, each in its own idiom.
pub struct TaskRun {
    /// The last status, read without waiting.
    latest: tokio::sync::watch::Receiver<Option<TaskUpdate>>,
    /// The follower's own receiver: what [`TaskRun::changed`] has told.
    told: tokio::sync::Mutex<tokio::sync::watch::Receiver<Option<TaskUpdate>>>,
    cancel: tokio_util::sync::CancellationToken,
    call: std::sync::Mutex<Option<tokio::task::JoinHandle<Result<CallToolResult>>>>,
}

impl TaskRun {
    /// The task's last status, if the server announced one.
    pub fn status(&self) -> Option<TaskUpdate> {
        self.latest.borrow().clone()
    }

    /// Waits for the next status not told yet; `None` once the call has ended and every
    /// status was told. The last status is always told before the end: a call's task reports
    /// it before the call returns.
    pub async fn changed(&self) -> Option<TaskUpdate> {
        let mut told = self.told.lock().await;
        told.changed().await.ok()?;
        told.borrow_and_update().clone()
    }

    /// Cancels the call (and the task at the server); its result is then `Cancelled`.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// The call's result, as `call_tool` gives it. Given once: a second call is refused (a
    /// binding that lets its users ask again keeps the first answer).
    pub async fn result(&self) -> Result<CallToolResult> {
        let call = self.call.lock().unwrap().take();
        let Some(call) = call else {
            return Err(Error::invalid(
                "the result of this task run was taken already",
            ));
        };
        call.await
            .unwrap_or_else(|e| Err(Error::invalid(format!("the task's call panicked: {e}"))))
    }
}

impl Pool {
    /// Starts a tool call in the background and gives a [`TaskRun`] to follow it: for tools
    /// that run long (a server's tasks), where the host shows the status as it changes and
    /// lets the user cancel. The call is `call_tool`'s; `options.cancel`, if given, cancels it
    /// too.
    pub fn start_task(
        &self,
        tool_id: &str,
        arguments: serde_json::Value,
        mut options: crate::pool::CallOptions,
    ) -> TaskRun {
        let (tx, status) = tokio::sync::watch::channel(None);
        let cancel = match &options.cancel {
            Some(outer) => outer.child_token(),
            None => tokio_util::sync::CancellationToken::new(),
        };
        options.cancel = Some(cancel.clone());
        options.on_task = Some(Arc::new(move |update| {
            tx.send_replace(Some(update));
        }));
        let (pool, tool_id) = (self.clone(), tool_id.to_string());
        let call = tokio::spawn(async move { pool.call_tool(&tool_id, arguments, options).await });
        TaskRun {
            latest: status.clone(),
            told: tokio::sync::Mutex::new(status),
            cancel,
            call: std::sync::Mutex::new(Some(call)),
        }
    }
}

/// Whether the server on `conn` declared the tasks extension (so may answer a call with one).
pub(in crate::pool) fn runs_tasks(conn: &Connection) -> bool {
    conn.peer
        .peer_info()
        .is_some_and(|info| info.capabilities.supports_tasks())
}

/// For a call cancelled before its answer came: reads the answer `heard` still brings, and
/// cancels the task in it, which would otherwise run on at the server with no one to follow
/// or stop it.
pub(in crate::pool) fn stop_late_task(
    conn: Arc<Connection>,
    heard: impl std::future::Future<Output = Option<Vec<u8>>> + Send + 'static,
) {
    tokio::spawn(async move {
        let Some(line) = heard.await else {
            return;
        };
        if let Ok(Ok(crate::pool::call::reply::Answer::Task(task))) =
            crate::pool::call::reply::call_reply(&line)
        {
            let params = CancelTaskParams::new(task.task_id);
            let _ = conn.peer.cancel_task(params).await;
        }
    });
}

/// `tasks/cancel` of task `id` on `conn`, for a call dropped while it follows the task.
async fn cancel_task(conn: Arc<Connection>, id: String) {
    let _ = conn.peer.cancel_task(CancelTaskParams::new(id)).await;
}

/// The requests that follow a task the pool returned to its caller ([`crate::TaskMode`]
/// `Return`), sent to the server holding it (through this view's own connection for a
/// `perClient` server). The server's refusal (an unknown or expired task) is an
/// `Error::Tool` with the server's code, which a gateway passes on as it is.
impl Pool {
    /// `tasks/get`: the task's state, with its result or error once it ended.
    pub async fn get_task(&self, server_id: &str, task_id: &str) -> Result<GetTaskResult> {
        let (name, conn) = self.task_connection(server_id).await?;
        let asked = conn.peer.get_task(GetTaskParams::new(task_id.to_string()));
        self.task_request(&name, &conn, "tasks/get", task_id, asked)
            .await
    }

    /// `tasks/update`: the caller's answers to the task's input requests.
    pub async fn update_task(
        &self,
        server_id: &str,
        task_id: &str,
        responses: InputResponses,
    ) -> Result<()> {
        let (name, conn) = self.task_connection(server_id).await?;
        let update = UpdateTaskParams::new(task_id.to_string(), responses);
        let sent = conn.peer.update_task(update);
        self.task_request(&name, &conn, "tasks/update", task_id, sent)
            .await
    }

    /// `tasks/cancel`: asks the server to stop the task (its state says when it did).
    pub async fn cancel_task(&self, server_id: &str, task_id: &str) -> Result<()> {
        let (name, conn) = self.task_connection(server_id).await?;
        let sent = conn
            .peer
            .cancel_task(CancelTaskParams::new(task_id.to_string()));
        self.task_request(&name, &conn, "tasks/cancel", task_id, sent)
            .await
    }

    /// The server's name and a connection to it, for a request about one of its tasks.
    async fn task_connection(&self, server_id: &str) -> Result<(String, Arc<Connection>)> {
        let _flight = self.inner.begin()?;
        let slot = self.slot_for(&self.inner.slot(server_id)?)?;
        let conn = slot.connection(&self.inner).await?;
        Ok((slot.name(), conn))
    }

    /// Sends one request about task `id`, within the pool's request timeout.
    async fn task_request<T>(
        &self,
        server: &str,
        conn: &Connection,
        method: &str,
        id: &str,
        sent: impl std::future::Future<Output = std::result::Result<T, ServiceError>>,
    ) -> Result<T> {
        let limit = self.inner.opts.request_timeout();
        // Boxed, as in `in_rounds`: an rmcp request's future is large.
        let answer = tokio::time::timeout(limit, Box::pin(sent))
            .await
            .map_err(|_| Error::Timeout {
                what: format!("{method} of task {id} on server '{server}'"),
                after: limit,
            })?;
        conn.touch();
        answer.map_err(|e| match e {
            ServiceError::McpError(e) => Error::Tool {
                tool: format!("{method} {id}"),
                message: e.message.to_string(),
                code: Some(e.code.0),
                data: e.data,
            },
            e => self.inner.closing_or(conn.failure(server, method, e)),
        })
    }
}

impl Inner {
    /// Follows `task`, made by the server of `call`, to its result.
    pub(in crate::pool) async fn drive_task(
        self: &Arc<Self>,
        call: &ToolCall<'_>,
        task: Task,
    ) -> Result<CallToolResult> {
        let mut conn = call.conn.clone();
        let mut guard = TellOnDrop::new(cancel_task(conn.clone(), task.task_id.clone()));
        let mut seen = TaskSeen::default();
        self.task_status(call, &task, &mut seen);
        let (id, mut suggested) = (task.task_id, task.poll_interval_ms);
        let (mut polls, mut reconnects) = (0u32, 0u32);
        loop {
            tokio::select! {
                _ = tokio::time::sleep(poll_wait(suggested, polls)) => {}
                _ = call.cancelled() => {
                    guard.disarm();
                    let _ = conn.peer.cancel_task(CancelTaskParams::new(id.clone())).await;
                    return Err(Error::Cancelled);
                }
            }
            polls += 1;
            let got = match self.poll(call, &conn, &id).await {
                Ok(got) => got,
                Err(PollError::Lost) if reconnects < MAX_RECONNECTS => {
                    reconnects += 1;
                    conn = self.reconnect(call).await?;
                    guard.replace(cancel_task(conn.clone(), id.clone()));
                    continue;
                }
                Err(PollError::Lost) => {
                    return Err(Error::connection(
                        call.name,
                        format!("task {id}: the connection was lost {MAX_RECONNECTS} times"),
                    ));
                }
                Err(PollError::Failed(e)) => return Err(e),
            };
            reconnects = 0;
            suggested = got.task.task.poll_interval_ms.or(suggested);
            self.task_status(call, &got.task.task, &mut seen);
            match got.task.payload {
                TaskPayload::Completed { result } => {
                    guard.disarm();
                    return completed(call, &id, result);
                }
                TaskPayload::Failed { error } => {
                    guard.disarm();
                    return Err(failed(call, &id, &error));
                }
                TaskPayload::Cancelled => {
                    guard.disarm();
                    return Err(Error::Tool {
                        tool: call.tool.to_string(),
                        message: format!("the server cancelled its task {id}"),
                        code: None,
                        data: None,
                    });
                }
                TaskPayload::InputRequired { input_requests } => {
                    let responses = call.fulfil(input_requests).await?;
                    let update = UpdateTaskParams::new(id.clone(), responses);
                    conn.peer
                        .update_task(update)
                        .await
                        .map_err(|e| self.closing_or(conn.failure(call.name, "tasks/update", e)))?;
                    polls = 0;
                }
                _ => {}
            }
        }
    }

    /// Emits `task:status` for `task` unless its status and message are still what `seen`
    /// saw, and tells the call's progress callback a new message of a working task (how a
    /// task reports its progress: its server's `statusMessage`, read at each poll).
    fn task_status(&self, call: &ToolCall<'_>, task: &Task, seen: &mut TaskSeen) {
        let now = (task.status, task.status_message.clone());
        if seen.last.as_ref() != Some(&now) {
            if let (Some(on_progress), TaskStatus::Working, Some(message)) =
                (call.on_progress, task.status, &task.status_message)
                && seen.message.as_ref() != Some(message)
            {
                seen.messages += 1;
                seen.message = Some(message.clone());
                on_progress(Progress {
                    progress: f64::from(seen.messages),
                    total: None,
                    message: Some(message.clone()),
                });
            }
            if let Some(on_task) = call.on_task {
                on_task(TaskUpdate {
                    task_id: task.task_id.clone(),
                    status: status_name(task.status),
                    status_message: task.status_message.clone(),
                });
            }
            self.events.emit_with(|| Event::TaskStatus {
                server_id: call.slot.id.clone(),
                tool_name: call.tool.to_string(),
                task_id: task.task_id.clone(),
                status: status_name(task.status),
                status_message: task.status_message.clone(),
            });
            seen.last = Some(now);
        }
    }

    /// One `tasks/get`, within the call's timeout.
    async fn poll(
        self: &Arc<Self>,
        call: &ToolCall<'_>,
        conn: &Arc<Connection>,
        id: &str,
    ) -> std::result::Result<GetTaskResult, PollError> {
        let asked = conn.peer.get_task(GetTaskParams::new(id.to_string()));
        match tokio::time::timeout(call.timeout, asked).await {
            Err(_) => Err(PollError::Failed(Error::Timeout {
                what: format!("tasks/get of task {id} on server '{}'", call.name),
                after: call.timeout,
            })),
            Ok(Ok(got)) => Ok(got),
            Ok(Err(ServiceError::TransportClosed)) => {
                call.slot.connection_failed(self, conn);
                Err(PollError::Lost)
            }
            Ok(Err(e)) if !conn.is_alive() => {
                let _ = e;
                call.slot.connection_failed(self, conn);
                Err(PollError::Lost)
            }
            Ok(Err(e)) => Err(PollError::Failed(self.closing_or(conn.failure(
                call.name,
                "tasks/get",
                e,
            )))),
        }
    }

    /// A new connection to the call's server, to go on polling there.
    async fn reconnect(self: &Arc<Self>, call: &ToolCall<'_>) -> Result<Arc<Connection>> {
        tokio::time::sleep(MIN_POLL).await;
        call.slot.connection(self).await
    }
}

/// A task status as the wire names it (`input_required`, ...).
fn status_name(status: TaskStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Why a poll gave no task.
enum PollError {
    /// The connection is gone: polling goes on over a new one.
    Lost,
    Failed(Error),
}

/// The result of a completed task.
fn completed(call: &ToolCall<'_>, id: &str, result: JsonObject) -> Result<CallToolResult> {
    serde_json::from_value(serde_json::Value::Object(result)).map_err(|e| Error::Protocol {
        server: call.name.to_string(),
        message: format!("task {id} completed with something that is not a tool result: {e}"),
    })
}

/// The error of a failed task (a JSON-RPC error object), as the tool's.
fn failed(call: &ToolCall<'_>, id: &str, error: &JsonObject) -> Error {
    let message = error
        .get("message")
        .and_then(|m| m.as_str())
        .unwrap_or("no message");
    Error::Tool {
        tool: call.tool.to_string(),
        message: format!("its task {id} failed: {message}"),
        code: error
            .get("code")
            .and_then(|c| c.as_i64())
            .and_then(|c| i32::try_from(c).ok()),
        data: error.get("data").cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polls_follow_the_server_within_bounds_and_back_off_without_it() {
        let ms = |d: Duration| d.as_millis() as u64;
        assert_eq!(ms(poll_wait(Some(200), 9)), 200);
        assert_eq!(ms(poll_wait(Some(1), 0)), 50);
        assert_eq!(ms(poll_wait(Some(3_600_000), 0)), 30_000);
        let unsuggested: Vec<u64> = (0..8).map(|n| ms(poll_wait(None, n))).collect();
        assert_eq!(unsuggested, [100, 200, 400, 800, 1600, 3200, 5000, 5000]);
    }
}
