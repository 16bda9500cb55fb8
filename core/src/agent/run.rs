//! The agent loop (seed 002's `runAgentLoop`): ask the model, run the tools it asks for
//! (discovery answered locally, real tools through the pool with lazy activation and
//! approval), feed the results back, until it answers or the iteration limit is reached.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use rmcp::model::CallToolResult;
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::message::{Block, Message, Role, Usage};
use super::provider::{ChatRequest, Provider, TokenFn};
use crate::error::{Error, Result};
use crate::host::BoxFuture;
use crate::local::LOCAL_SERVER;
use crate::pool::{CallOptions, Conversation, Pool, ToolDef};

/// The host's answer to "may this tool run?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    AllowOnce,
    /// For the rest of this agent's life.
    AllowAlways,
    Deny,
}

/// What the approval callback is asked about.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    pub tool_id: String,
    pub server_name: String,
    pub arguments: Value,
}

/// Decides whether a tool that needs approval may run.
pub type ApproveFn = Arc<dyn Fn(ApprovalRequest) -> BoxFuture<Approval> + Send + Sync>;

/// How an agent behaves.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// Model requests per run before it stops with [`Stop::MaxIterations`].
    pub max_iterations: usize,
    /// The host's own instructions, added to the system prompt.
    pub instructions: Option<String>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    /// Tool results of the last this-many turns are always sent whole.
    pub keep_recent_turns: usize,
    /// Older results longer than this many characters are cut to a preview with a hint to
    /// call `recall(id)` (seed 002's `compressOldToolResults`).
    pub compress_over_chars: usize,
    pub preview_chars: usize,
    /// Estimated tokens (characters / 4) the transcript may take; over it, every result but
    /// the latest turn's is cut to its preview, however short the turn.
    pub context_budget_tokens: usize,
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            max_iterations: 10,
            instructions: None,
            max_tokens: None,
            temperature: None,
            keep_recent_turns: 2,
            compress_over_chars: 2_000,
            preview_chars: 200,
            context_budget_tokens: 100_000,
        }
    }
}

/// The tool an agent calls to read a compressed result in full.
const RECALL: &str = "recall";

/// Per-run callbacks.
#[derive(Clone, Default)]
pub struct RunOptions {
    pub on_token: Option<TokenFn>,
    /// Without it, tools that need approval are denied.
    pub approve: Option<ApproveFn>,
    pub cancel: Option<CancellationToken>,
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The model answered without asking for tools.
    Finished,
    /// `max_iterations` model requests were made (seed 002's END_MAX).
    MaxIterations,
    Cancelled,
}

/// The outcome of a run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentResult {
    pub text: String,
    pub transcript: Vec<Message>,
    pub usage: Usage,
    pub stop: Stop,
    pub iterations: usize,
}

/// What the tool calls of one run share.
struct Run<'a> {
    conversation: &'a Conversation,
    recall: &'a Mutex<HashMap<String, String>>,
    options: &'a RunOptions,
    cancel: &'a CancellationToken,
}

/// An agent over a pool's tools and one provider.
pub struct Agent {
    pool: Pool,
    provider: Arc<dyn Provider>,
    options: AgentOptions,
    always_allowed: Mutex<HashSet<String>>,
}

impl Agent {
    pub fn new(pool: Pool, provider: Arc<dyn Provider>, options: AgentOptions) -> Agent {
        Agent {
            pool,
            provider,
            options,
            always_allowed: Mutex::new(HashSet::new()),
        }
    }

    /// Seed 002's structured prompt: discover, read, execute, display; then the servers
    /// and the host's instructions.
    pub fn system_prompt(&self) -> String {
        let mut p = String::from(
            "You can use tools from several servers. Work in steps:\n\
             STEP 1 - find a recipe: {server}_search_recipes(query)\n\
             STEP 1b - list recipes: {server}_list_recipes()\n\
             STEP 1c - find a tool: search_tools(query) or {server}_search_tools(query)\n\
             STEP 1d - list tools: {server}_list_tools()\n\
             STEP 2 - read a recipe: {server}_get_recipe(name)\n\
             STEP 3 - execute: call the tool by the id the discovery tools gave, with arguments \
             that follow its schema (a server's tools become available after its first use)\n\
             STEP 4 - display: widget_display(name, params), canvas(action, id, params)\n\
             Never invent tool names.\n\nServers:\n",
        );
        for layer in self.pool.layers() {
            p.push_str(&format!(
                "- {} ({}, {} tools)\n",
                layer.server_name,
                layer.protocol,
                layer.tools.len()
            ));
        }
        if let Some(i) = &self.options.instructions {
            p.push('\n');
            p.push_str(i);
        }
        p
    }

    /// Runs the loop for one user prompt.
    pub async fn run(&self, prompt: &str, options: RunOptions) -> Result<AgentResult> {
        let conversation = self.pool.conversation();
        let cancel = options.cancel.clone().unwrap_or_default();
        let mut transcript = vec![Message::user(prompt)];
        let mut usage = Usage::default();
        let system = self.system_prompt();
        // Full tool results by call id, for `recall`.
        let recall: Mutex<HashMap<String, String>> = Mutex::new(HashMap::new());
        for iteration in 1..=self.options.max_iterations {
            if cancel.is_cancelled() {
                return Ok(self.finish(transcript, usage, Stop::Cancelled, iteration - 1));
            }
            compress(&mut transcript, &self.options);
            let mut tools = conversation.tools();
            tools.push(ToolDef {
                name: RECALL.into(),
                description: "Read in full a tool result that was shortened to save context."
                    .into(),
                input_schema: serde_json::json!({
                    "type": "object",
                    "properties": {"id": {"type": "string", "description": "the tool call id from the hint"}},
                    "required": ["id"]
                }),
            });
            let request = ChatRequest {
                messages: transcript.clone(),
                tools,
                system: Some(system.clone()),
                max_tokens: self.options.max_tokens,
                temperature: self.options.temperature,
                cancel: Some(cancel.clone()),
                on_token: options.on_token.clone(),
            };
            let response = match self.provider.chat(request).await {
                Ok(r) => r,
                Err(Error::Cancelled) => {
                    return Ok(self.finish(transcript, usage, Stop::Cancelled, iteration));
                }
                Err(e) => return Err(e),
            };
            usage += response.usage;
            let uses: Vec<(String, String, Value)> = response
                .content
                .iter()
                .filter_map(|b| match b {
                    Block::ToolUse { id, name, input } => {
                        Some((id.clone(), name.clone(), input.clone()))
                    }
                    _ => None,
                })
                .collect();
            transcript.push(Message {
                role: Role::Assistant,
                content: response.content,
            });
            if uses.is_empty() {
                return Ok(self.finish(transcript, usage, Stop::Finished, iteration));
            }
            // The calls of one turn run concurrently; cancelling the run cancels them too.
            let run = Run {
                conversation: &conversation,
                recall: &recall,
                options: &options,
                cancel: &cancel,
            };
            let results = futures::future::join_all(
                uses.into_iter()
                    .map(|(id, name, input)| self.dispatch(&run, id, name, input)),
            )
            .await;
            for b in &results {
                if let Block::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } = b
                {
                    recall
                        .lock()
                        .unwrap()
                        .insert(tool_use_id.clone(), content.clone());
                }
            }
            if cancel.is_cancelled() {
                return Ok(self.finish(transcript, usage, Stop::Cancelled, iteration));
            }
            transcript.push(Message {
                role: Role::User,
                content: results,
            });
        }
        let n = self.options.max_iterations;
        Ok(self.finish(transcript, usage, Stop::MaxIterations, n))
    }

    fn finish(
        &self,
        transcript: Vec<Message>,
        usage: Usage,
        stop: Stop,
        iterations: usize,
    ) -> AgentResult {
        let text = match stop {
            Stop::MaxIterations => {
                format!("Stopped: the limit of {iterations} model requests was reached.")
            }
            _ => transcript
                .iter()
                .rev()
                .find(|m| m.role == Role::Assistant)
                .map(Message::text)
                .unwrap_or_default(),
        };
        AgentResult {
            text,
            transcript,
            usage,
            stop,
            iterations,
        }
    }

    /// Whether a tool needs the host's yes: tools of untrusted servers, and tools listed in
    /// `disabledAutoApproveTools`; discovery and host tools never do.
    async fn needs_approval(&self, tool_id: &str) -> Option<String> {
        let server_id = self.pool.tool_server(tool_id)?;
        if server_id == LOCAL_SERVER {
            return None;
        }
        let record = self.pool.get_server(&server_id).await.ok()?;
        let name = self
            .pool
            .known_tools()
            .into_iter()
            .find(|t| t.id == tool_id)?
            .name;
        (!record.is_trusted || record.disabled_auto_approve_tools.contains(&name))
            .then_some(record.name)
    }

    async fn dispatch(&self, run: &Run<'_>, id: String, name: String, input: Value) -> Block {
        let Run {
            conversation,
            recall,
            options,
            cancel,
        } = run;
        let result = |content: String, is_error: bool| Block::ToolResult {
            tool_use_id: id.clone(),
            content,
            is_error,
        };
        if name == RECALL {
            let wanted = input.get("id").and_then(Value::as_str).unwrap_or_default();
            return match recall.lock().unwrap().get(wanted) {
                Some(full) => result(full.clone(), false),
                None => result(format!("no tool result has the id '{wanted}'"), true),
            };
        }
        if let Some(server_name) = self.needs_approval(&name).await
            && !self.always_allowed.lock().unwrap().contains(&name)
        {
            let answer = match &options.approve {
                Some(approve) => {
                    approve(ApprovalRequest {
                        tool_id: name.clone(),
                        server_name,
                        arguments: input.clone(),
                    })
                    .await
                }
                None => Approval::Deny,
            };
            match answer {
                Approval::Deny => {
                    return result(format!("The user denied the call of '{name}'."), true);
                }
                Approval::AllowAlways => {
                    self.always_allowed.lock().unwrap().insert(name.clone());
                }
                Approval::AllowOnce => {}
            }
        }
        let call = CallOptions {
            cancel: Some(cancel.child_token()),
            ..Default::default()
        };
        match conversation.call(&name, input, call).await {
            Ok(r) => result(render(&r), r.is_error == Some(true)),
            Err(e) => result(e.to_string(), true),
        }
    }
}

/// Cuts old, long tool results to a preview with a `recall` hint, so the context stays
/// bounded: results of the last `keep_recent_turns` turns stay whole unless the whole
/// transcript is over the token budget, in which case only the latest turn does.
fn compress(transcript: &mut [Message], options: &AgentOptions) {
    let estimate = |t: &[Message]| -> usize {
        t.iter()
            .flat_map(|m| m.content.iter())
            .map(|b| match b {
                Block::Text { text } => text.len(),
                Block::ToolUse { input, .. } => input.to_string().len(),
                Block::ToolResult { content, .. } => content.len(),
            })
            .sum::<usize>()
            / 4
    };
    let over_budget = estimate(transcript) > options.context_budget_tokens;
    let turns = transcript.iter().filter(|m| m.role == Role::User).count();
    let keep = if over_budget {
        1
    } else {
        options.keep_recent_turns.max(1)
    };
    let mut user_turn = 0;
    for message in transcript.iter_mut() {
        if message.role != Role::User {
            continue;
        }
        user_turn += 1;
        if user_turn + keep > turns {
            break;
        }
        for block in &mut message.content {
            if let Block::ToolResult {
                tool_use_id,
                content,
                ..
            } = block
            {
                let limit = if over_budget {
                    options.preview_chars
                } else {
                    options.compress_over_chars
                };
                if content.len() > limit && !content.contains("call recall(") {
                    let preview: String = content.chars().take(options.preview_chars).collect();
                    *content = format!(
                        "{preview}...\n[shortened to save context: call recall(\"{tool_use_id}\") for the full result]"
                    );
                }
            }
        }
    }
}

/// A tool result as text for the model: text blocks as they are, other content named.
fn render(r: &CallToolResult) -> String {
    let mut out = Vec::new();
    for block in &r.content {
        let v = serde_json::to_value(block).unwrap_or_default();
        match v.get("type").and_then(Value::as_str) {
            Some("text") => out.push(v["text"].as_str().unwrap_or_default().to_string()),
            Some("resource") => out.push(
                v["resource"]["text"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("[resource {}]", v["resource"]["uri"])),
            ),
            Some(kind) => out.push(format!("[{kind} content]")),
            None => {}
        }
    }
    if out.is_empty()
        && let Some(s) = &r.structured_content
    {
        out.push(s.to_string());
    }
    out.join("\n")
}
