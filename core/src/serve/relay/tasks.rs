//! Upstreams' tasks (the tasks extension, SEP-2663) passed through to a client that takes
//! them. The gateway declares the extension; a client that declares it too gets an upstream's
//! `CreateTaskResult` as it came, under a task id the gateway seals around the server holding
//! the task and the upstream's own id (and, behind OAuth, whose token started it), and its
//! `tasks/get`, `tasks/update` and `tasks/cancel` go to that server. Nothing is kept in
//! memory, so any replica relays them to its own connection of the server; a task of a stdio
//! upstream lives in one replica's process, so behind a balancer those requests need to reach
//! that replica. A client that does not take tasks gets the result: the pool follows the task
//! for it, except through a pass-through profile, which shows the upstream as it is (a tool
//! that needs a task is refused with the upstream's own `-32021`).

use rmcp::ErrorData;
use rmcp::model::{CreateTaskResult, GetTaskResult, Task};
use rmcp::service::RequestContext;
use serde::{Deserialize, Serialize};

use crate::pool::{StartedTask, TaskMode};
use crate::serve::relay::seal::Seal;

/// What task ids are sealed for (no other sealed text opens as one).
const TASK_ID: &[u8] = b"task id";

/// What a sealed task id carries.
#[derive(Debug, Serialize, Deserialize)]
pub(in crate::serve) struct Carried {
    /// The pool's id of the server holding the task.
    pub server: String,
    /// The server's own id of the task.
    pub id: String,
    /// Behind OAuth, whose token started it: no other token reaches it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
}

/// How a call of a client treats a task its upstream starts: returned when the client takes
/// tasks, else followed to its result, or (`pass_through`) not offered upstream at all.
pub(in crate::serve) fn mode(
    context: &RequestContext<rmcp::RoleServer>,
    pass_through: bool,
) -> TaskMode {
    match (crate::serve::gateway::declares_tasks(context), pass_through) {
        (true, _) => TaskMode::Return,
        (false, true) => TaskMode::Withhold,
        (false, false) => TaskMode::Follow,
    }
}

/// The upstream's task as the gateway's answer, under a sealed id.
pub(in crate::serve) fn to_client(
    seal: &Seal,
    started: StartedTask,
    owner: Option<String>,
) -> Result<CreateTaskResult, ErrorData> {
    let StartedTask { server_id, task } = started;
    let task = sealed_task(seal, &server_id, task, owner)?;
    Ok(CreateTaskResult::new(task))
}

/// An upstream's `tasks/get` answer, naming the task by the id the client knows.
pub(in crate::serve) fn detailed_to_client(
    mut got: GetTaskResult,
    client_id: &str,
) -> GetTaskResult {
    got.task.task.task_id = client_id.to_string();
    got
}

/// `task` with its id sealed around `server` and `owner`.
fn sealed_task(
    seal: &Seal,
    server: &str,
    mut task: Task,
    owner: Option<String>,
) -> Result<Task, ErrorData> {
    let carried = Carried {
        server: server.to_string(),
        id: std::mem::take(&mut task.task_id),
        owner,
    };
    task.task_id = seal
        .seal(TASK_ID, &carried)
        .ok_or_else(|| ErrorData::internal_error("could not seal the task id", None))?;
    Ok(task)
}

/// The server and upstream id a client's task id stands for; an id this gateway (or a
/// replica sharing its key) did not issue to `owner` is unknown, as the spec's `-32602`.
pub(in crate::serve) fn from_client(
    seal: &Seal,
    client_id: &str,
    owner: Option<&str>,
) -> Result<Carried, ErrorData> {
    seal.open(TASK_ID, client_id)
        .filter(|c: &Carried| c.owner.as_deref() == owner)
        .ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "unknown task {client_id}: use the taskId of a tools/call answer of this \
                     server, unchanged"
                ),
                None,
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::TaskStatus;

    fn task(id: &str) -> Task {
        Task::new(id, TaskStatus::Working, "t", "t")
    }

    #[test]
    fn a_task_id_opens_to_its_server_and_upstream_id_for_its_owner_only() {
        let seal = Seal::new(None).unwrap();
        let started = StartedTask {
            server_id: "fixture".into(),
            task: task("upstream-7"),
        };
        let created = to_client(&seal, started, Some("alice".into())).unwrap();
        let outer = created.task.task_id;
        assert!(!outer.contains("upstream-7"), "{outer}");
        let carried = from_client(&seal, &outer, Some("alice")).unwrap();
        assert_eq!(
            (carried.server.as_str(), carried.id.as_str()),
            ("fixture", "upstream-7")
        );
        assert!(from_client(&seal, &outer, Some("bob")).is_err());
        assert!(from_client(&seal, &outer, None).is_err());
        let error = from_client(&seal, "upstream-7", Some("alice")).unwrap_err();
        assert!(error.message.contains("unchanged"), "{error:?}");
        let other = Seal::new(None).unwrap();
        assert!(from_client(&other, &outer, Some("alice")).is_err());
    }
}
