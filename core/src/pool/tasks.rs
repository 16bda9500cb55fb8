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
    CallToolResult, CancelTaskParams, GetTaskParams, GetTaskResult, JsonObject, Task, TaskPayload,
    UpdateTaskParams,
};
use rmcp::service::ServiceError;

use super::Inner;
use super::calls::ToolCall;
use super::connection::Connection;
use crate::error::{Error, Result};

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
pub(super) fn with_tasks(capabilities: &serde_json::Value) -> serde_json::Value {
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

/// Sends `tasks/cancel` if the call is dropped before its task ended.
struct CancelOnDrop {
    conn: Option<Arc<Connection>>,
    task_id: String,
}

impl CancelOnDrop {
    fn disarm(&mut self) {
        self.conn = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let (Some(conn), Ok(runtime)) = (self.conn.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let params = CancelTaskParams::new(std::mem::take(&mut self.task_id));
        runtime.spawn(async move {
            let _ = conn.peer.cancel_task(params).await;
        });
    }
}

impl Inner {
    /// Follows `task`, made by the server of `call`, to its result.
    pub(super) async fn drive_task(
        self: &Arc<Self>,
        call: &ToolCall<'_>,
        task: Task,
    ) -> Result<CallToolResult> {
        let mut conn = call.conn.clone();
        let mut guard = CancelOnDrop {
            conn: Some(conn.clone()),
            task_id: task.task_id.clone(),
        };
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
                    guard.conn = Some(conn.clone());
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
        Box::pin(call.slot.connection(self)).await
    }
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
