//! The suite's task fixtures (the tasks extension, SEP-2663), run on rmcp's `TaskManager`:
//! `greet` (never a task), `slow_compute`, `failing_job`, `protocol_error_job`,
//! `confirm_delete` and `multi_input` (questions asked inside the task, answered by
//! `tasks/update`), and `test_tool_with_task` (an `input_required` round first, then a task).
//! A client that did not declare the extension (in the request's `_meta` or at `initialize`)
//! gets the task-supporting tools run inline (their questions asked as any tool's), and
//! `-32021` from the two that require a task (`failing_job`, `test_tool_with_task`), as the
//! reference's middleware answers.

use std::time::Duration;

use rmcp::{
    ErrorData, RoleServer,
    handler::server::{tool::InputResponses as ToolInputResponses, wrapper::Parameters},
    model::{CallToolResponse, CallToolResult, ClientCapabilities, CreateTaskResult, JsonObject},
    service::RequestContext,
    task_manager::{TaskContext, TaskExit, TaskFuture, TaskOptions},
    tool, tool_router,
};
use serde_json::{Value, json};

use super::{
    Asked, Fixture, answer_text, answered, ask_client, ask_name, done, elicit, form, object, round,
    text_result,
};

/// How often a client is told to poll: short, so the suite's checks run quickly.
const POLL_MS: u64 = 200;

fn takes_tasks(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|c| c.supports_tasks())
}

/// `-32021` naming the extension, for a tool that runs only as a task.
fn needs_tasks() -> ErrorData {
    ErrorData::missing_required_client_capability(
        ClientCapabilities::builder().enable_tasks().build(),
    )
}

impl Fixture {
    /// Starts `work` as a task and answers with it.
    fn start(&self, work: impl FnOnce(TaskContext) -> TaskFuture) -> CallToolResponse {
        let options = TaskOptions::new().with_poll_interval_ms(POLL_MS);
        CreateTaskResult::new(self.tasks.spawn(options, work)).into()
    }
}

/// Sleeps `seconds`, or settles as cancelled when `tasks/cancel` comes first.
async fn compute(
    task: Option<TaskContext>,
    seconds: f64,
    label: String,
) -> Result<CallToolResult, TaskExit> {
    let sleep = tokio::time::sleep(Duration::from_secs_f64(seconds.max(0.0)));
    match task {
        Some(task) => tokio::select! {
            _ = sleep => {}
            _ = task.cancelled() => return Err(TaskExit::Cancelled),
        },
        None => sleep.await,
    }
    Ok(text_result(format!("Computed {label} after {seconds}s")))
}

fn number(args: &JsonObject, key: &str) -> f64 {
    args.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn string(args: &JsonObject, key: &str, default: &str) -> String {
    args.get(key)
        .and_then(Value::as_str)
        .unwrap_or(default)
        .to_string()
}

/// The answer to a question asked inside a task, as a line of its result.
fn accepted(answer: &Value) -> String {
    let action = answer["action"].as_str().unwrap_or("unknown");
    format!(
        "action={action}, content={}",
        answer.get("content").unwrap_or(&Value::Null)
    )
}

#[tool_router(router = task_tools, vis = "pub(super)")]
impl Fixture {
    #[tool(
        description = "Greets by name (never a task)",
        input_schema = object(json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"]
        }))
    )]
    fn greet(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        text_result(format!("Hello, {}!", string(&args, "name", "World")))
    }

    #[tool(
        description = "Sleeps `seconds` then answers; a task for a client that takes tasks",
        input_schema = object(json!({
            "type": "object",
            "properties": {"seconds": {"type": "number"}, "label": {"type": "string"}}
        }))
    )]
    async fn slow_compute(
        &self,
        Parameters(args): Parameters<JsonObject>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (seconds, label) = (number(&args, "seconds"), string(&args, "label", "task"));
        if !takes_tasks(&context) {
            return compute(None, seconds, label)
                .await
                .map(Into::into)
                .map_err(|_| ErrorData::internal_error("cancelled", None));
        }
        Ok(self.start(|task| Box::pin(compute(Some(task), seconds, label))))
    }

    #[tool(description = "A task whose tool fails after about a second (isError)")]
    fn failing_job(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !takes_tasks(&context) {
            return Err(needs_tasks());
        }
        Ok(self.start(|_| {
            Box::pin(async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Ok(CallToolResult::error(vec![
                    rmcp::model::ContentBlock::text("the job failed"),
                ]))
            })
        }))
    }

    #[tool(description = "A task that ends in a protocol error (status failed)")]
    fn protocol_error_job(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let broke = || ErrorData::internal_error("the job broke down", None);
        if !takes_tasks(&context) {
            return Err(broke());
        }
        Ok(self.start(move |_| Box::pin(async move { Err(TaskExit::Error(broke())) })))
    }

    #[tool(
        description = "A task that asks the user to confirm a deletion, then deletes",
        input_schema = object(json!({
            "type": "object",
            "properties": {"filename": {"type": "string"}}
        }))
    )]
    async fn confirm_delete(
        &self,
        Parameters(args): Parameters<JsonObject>,
        ToolInputResponses(responses): ToolInputResponses,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let filename = string(&args, "filename", "file");
        let question = elicit(
            &format!("Delete {filename}?"),
            form(json!({"confirm": {"type": "boolean"}}), &["confirm"]),
        );
        if !takes_tasks(&context) {
            return match ask_client(&context, responses.as_ref(), "confirm", question).await {
                Asked::Answer(answer) => done(format!("Delete {filename}: {}", accepted(&answer))),
                Asked::Failed(error) => done(format!("Delete {filename}: not asked ({error})")),
                Asked::Pending(round) => round.into(),
            };
        }
        self.start(move |task| {
            Box::pin(async move {
                let answer = task.request_input("confirm", question).await?;
                Ok(text_result(format!(
                    "Delete {filename}: {}",
                    accepted(&answer)
                )))
            })
        })
    }

    #[tool(description = "A task that asks two questions at once")]
    fn multi_input(
        &self,
        ToolInputResponses(responses): ToolInputResponses,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        if !takes_tasks(&context) {
            // Inline, both questions go in one input round.
            let answers = ["first", "second"].map(|key| answered(responses.as_ref(), key));
            return match answers {
                [Some(first), Some(second)] => done(format!(
                    "first: {}; second: {}",
                    accepted(first),
                    accepted(second)
                )),
                _ => {
                    let questions = vec![
                        ("first", ask_name("First name?")),
                        ("second", ask_name("Second name?")),
                    ];
                    round(questions, None).into()
                }
            };
        }
        self.start(|task| {
            Box::pin(async move {
                let (first, second) = tokio::try_join!(
                    task.request_input("first", ask_name("First name?")),
                    task.request_input("second", ask_name("Second name?")),
                )?;
                let answers = format!("first: {}; second: {}", accepted(&first), accepted(&second));
                Ok(text_result(answers))
            })
        })
    }

    #[tool(description = "Asks the user's name in an input round, then greets in a task")]
    fn test_tool_with_task(
        &self,
        ToolInputResponses(responses): ToolInputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !takes_tasks(&context) {
            return Err(needs_tasks());
        }
        let Some(answer) = answered(responses.as_ref(), "user_name") else {
            return Ok(round(vec![("user_name", ask_name("What is your name?"))], None).into());
        };
        let name = answer_text(answer, "name").to_string();
        Ok(
            self.start(move |_| {
                Box::pin(async move { Ok(text_result(format!("Hello, {name}!"))) })
            }),
        )
    }
}

/// `tasks/get`, `tasks/update` and `tasks/cancel`, on the fixture's task store.
impl Fixture {
    pub(super) fn task_state(&self, id: &str) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        self.tasks.get_task(id).map(rmcp::model::GetTaskResult::new)
    }

    pub(super) fn answer_task(
        &self,
        id: &str,
        responses: rmcp::model::InputResponses,
    ) -> Result<(), ErrorData> {
        self.tasks.update_task(id, responses)
    }

    pub(super) fn cancel(&self, id: &str) -> Result<(), ErrorData> {
        self.tasks.cancel_task(id)
    }
}
