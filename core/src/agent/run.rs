//! The agent loop (WebMCP Auto-UI's `runAgentLoop`): ask the model, run the tools it asks for
//! (discovery answered locally, real tools through the pool with lazy activation and
//! approval), feed the results back, until it answers or the iteration limit is reached.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::CallToolResult;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::approval_reason::ApprovalReason;
use super::providers::{ChatRequest, Provider, TokenFn};
use super::textcalls::parse_tool_calls;
use crate::error::{Error, Result};
use crate::events::{Event, EventReceiver};
use crate::host::BoxFuture;
pub use crate::host::answers::Approval;
use crate::message::{Block, Image, Message, Role, Usage};
use crate::pool::{CallOptions, Conversation, Pool, ServerFilter, ToolDef};
use crate::tools::host_tools::HOST_TOOLS_SERVER;
use crate::tools::pins::Standing;

/// What the approval callback is asked about: the call, and what a host shows to decide
/// (the tool's title, description and annotations, whether its server is trusted, and why the
/// policy asks).
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    pub tool_id: String,
    pub server_name: String,
    pub arguments: Value,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub server_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The tool's annotations (`readOnlyHint`, `destructiveHint`, `idempotentHint`,
    /// `openWorldHint`): hints from the server, which an untrusted server may get wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Whether the user marked the tool's server trusted.
    pub trusted: bool,
    /// Why the policy asks: `untrusted_server`, `changed_since_trusted` (the tool's
    /// definition is not what the user trusted: `change` says how), `new_since_trusted` (the
    /// tool was not there when its server was trusted), `not_auto_approved` (the server's
    /// `disabledAutoApproveTools`), `destructive` (the tool says `destructiveHint`),
    /// `not_read_only` (the `read_only` policy), `always` (the `always` policy), or
    /// `sampling` for a server's sampling request (an [`ApprovalReason`]'s name).
    #[serde(skip_serializing_if = "String::is_empty")]
    #[schemars(with = "ApprovalReason")]
    pub reason: String,
    /// For a tool of a trusted server that changed or is new since it was trusted: what is
    /// not as the user saw it (a description before and now).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
}

/// Which tools an agent asks the host about before running them. Annotations are hints from
/// the server: only a trusted server's are a reason to run a tool without asking.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalPolicy {
    /// Ask for tools of untrusted servers, tools in a server's `disabledAutoApproveTools`,
    /// and tools that say they destroy (`destructiveHint: true`) unless `askDestructive` is
    /// off.
    #[default]
    Trusted,
    /// Only read-only tools (`readOnlyHint: true`) of trusted servers run without asking.
    ReadOnly,
    /// Ask for every server tool.
    Always,
}

/// Decides whether a tool that needs approval may run.
pub type ApproveFn = Arc<dyn Fn(ApprovalRequest) -> BoxFuture<Approval> + Send + Sync>;

/// How an agent behaves (camelCase JSON in the bindings; every field optional).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
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
    /// call `recall(id)` (WebMCP Auto-UI's `compressOldToolResults`).
    pub compress_over_chars: usize,
    pub preview_chars: usize,
    /// Estimated tokens (characters / 4) the transcript may take; over it, every result but
    /// the latest turn's is cut to its preview, however short the turn.
    pub context_budget_tokens: usize,
    /// The most of each server's `instructions` the system prompt takes (cut with a marker);
    /// 0 leaves them out.
    pub server_instructions_chars: usize,
    /// Which tools are asked about before they run.
    pub approval_policy: ApprovalPolicy,
    /// Under the `trusted` policy, ask before tools of trusted servers that say they destroy
    /// (`destructiveHint: true`); `false` lets them run.
    pub ask_destructive: bool,
    /// How long a tool call may go without progress, in milliseconds (unset: the server
    /// record's, else the pool's request timeout).
    pub tool_timeout_ms: Option<u64>,
    /// The most a tool call may take in all, in milliseconds, however much progress it
    /// reports; past it the call is cancelled and the model told.
    pub tool_max_total_ms: Option<u64>,
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
            server_instructions_chars: crate::pool::INSTRUCTIONS_CHARS,
            approval_policy: ApprovalPolicy::Trusted,
            ask_destructive: true,
            tool_timeout_ms: None,
            tool_max_total_ms: None,
        }
    }
}

/// What an image counts for in the context estimate, in characters.
const IMAGE_CHARS: usize = 4_000;

/// The tool an agent calls to read a compressed result in full.
const RECALL: &str = "recall";

/// A resource the host attaches to the user's message (the llama.cpp web UI's mcpResourceStore).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Attachment {
    /// The server's id or name.
    pub server: String,
    pub uri: String,
}

/// What one run starts from, beyond the prompt (camelCase JSON in the bindings).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct RunParams {
    /// Earlier messages of the conversation (a previous result's `transcript`).
    pub history: Vec<Message>,
    /// Resources whose contents go with the prompt.
    pub attachments: Vec<Attachment>,
    /// The servers this conversation uses.
    pub servers: ServerFilter,
}

/// Per-run data and callbacks.
#[derive(Clone, Default)]
pub struct RunOptions {
    pub params: RunParams,
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
    /// `max_iterations` model requests were made (WebMCP Auto-UI's END_MAX).
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
    id: String,
    conversation: &'a Conversation,
    recall: &'a Mutex<HashMap<String, String>>,
    options: &'a RunOptions,
    cancel: &'a CancellationToken,
}

/// Resource contents already read for attachments, until the server says they changed.
type ResourceCache = HashMap<Attachment, Vec<Block>>;

/// An agent over a pool's tools and one provider.
pub struct Agent {
    pub(super) pool: Pool,
    provider: Arc<dyn Provider>,
    options: AgentOptions,
    always_allowed: Mutex<HashSet<String>>,
    resources: Mutex<ResourceCache>,
    /// Watches `resource:updated` and reconnections to drop stale cache entries.
    updates: Mutex<EventReceiver>,
}

static RUNS: AtomicU64 = AtomicU64::new(0);

impl Agent {
    pub fn new(pool: Pool, provider: Arc<dyn Provider>, options: AgentOptions) -> Agent {
        let updates = Mutex::new(pool.events());
        Agent {
            pool,
            provider,
            options,
            always_allowed: Mutex::new(HashSet::new()),
            resources: Mutex::new(HashMap::new()),
            updates,
        }
    }

    pub fn provider(&self) -> &Arc<dyn Provider> {
        &self.provider
    }

    pub fn options(&self) -> &AgentOptions {
        &self.options
    }

    /// Switches the provider's model for later requests.
    pub fn set_model(&self, model: &str) {
        self.provider.set_model(model);
    }

    /// WebMCP Auto-UI's structured prompt: discover, read, execute, display; then the servers
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
        let layers = self.pool.layer_outline().layers;
        for layer in &layers {
            match &layer.error {
                Some(error) => p.push_str(&format!(
                    "- {} ({}, unavailable: {error})\n",
                    layer.server_name, layer.protocol
                )),
                None => p.push_str(&format!(
                    "- {} ({}, {} tools)\n",
                    layer.server_name,
                    layer.protocol,
                    layer.tools.len()
                )),
            }
        }
        self.server_instructions(&layers, &mut p);
        if let Some(i) = &self.options.instructions {
            p.push('\n');
            p.push_str(i);
        }
        p
    }

    /// Each server's own instructions (what it said when it connected, known from the catalog
    /// before), after the servers, each cut to `server_instructions_chars`.
    fn server_instructions(&self, layers: &[crate::pool::OutlinedLayer], prompt: &mut String) {
        let max = self.options.server_instructions_chars;
        if max == 0 {
            return;
        }
        let mut section = String::new();
        for layer in layers {
            let Some(text) = self.pool.server_instructions(&layer.server_id) else {
                continue;
            };
            section.push_str(&format!(
                "\n## {}\n{}\n",
                layer.server_name,
                crate::pool::bounded_instructions(&text, max)
            ));
        }
        if !section.is_empty() {
            prompt.push_str("\nWhat each server says about using its tools:\n");
            prompt.push_str(&section);
        }
    }

    /// Runs the loop for one user prompt: ask the model, run the tools it asks for, give it
    /// their results, until it answers without a tool call, the run is cancelled or
    /// `max_iterations` requests were made.
    pub async fn run(&self, prompt: &str, options: RunOptions) -> Result<AgentResult> {
        let conversation = self.pool.conversation_with(options.params.servers.clone());
        // Servers never listed (a fresh config) are listed now, so the prompt counts their
        // tools and the model's first search finds them.
        conversation.ensure_catalog().await;
        let cancel = options.cancel.clone().unwrap_or_default();
        let mut transcript = self.first_transcript(prompt, &options).await?;
        let mut usage = Usage::default();
        let system = self.system_prompt();
        let run_id = format!("run-{}", RUNS.fetch_add(1, Ordering::Relaxed) + 1);
        // Full tool results by call id, for `recall`.
        let recall: Mutex<HashMap<String, String>> = Mutex::new(HashMap::new());
        for iteration in 1..=self.options.max_iterations {
            if cancel.is_cancelled() {
                return Ok(self.finish(transcript, usage, Stop::Cancelled, iteration - 1));
            }
            compress(&mut transcript, &self.options);
            let request = self.request(&conversation, &transcript, &system, &cancel, &options);
            // One span a turn: the model request and the tool calls it asked for.
            let turn = tracing::info_span!("mcpmux.agent.turn", run = %run_id, iteration);
            let response = match self.provider.chat(request).instrument(turn.clone()).await {
                Ok(r) => r,
                Err(Error::Cancelled) => {
                    return Ok(self.finish(transcript, usage, Stop::Cancelled, iteration));
                }
                Err(e) => return Err(e),
            };
            usage += response.usage;
            let mut content = with_text_calls(response.content, &run_id, iteration);
            let uses = tool_uses(&mut content);
            self.pool.emit(Event::AgentTurn {
                run_id: run_id.clone(),
                iteration,
                input_tokens: response.usage.input_tokens,
                output_tokens: response.usage.output_tokens,
                tool_uses: uses.len(),
            });
            transcript.push(Message {
                role: Role::Assistant,
                content,
            });
            if uses.is_empty() {
                return Ok(self.finish(transcript, usage, Stop::Finished, iteration));
            }
            let run = Run {
                id: run_id.clone(),
                conversation: &conversation,
                recall: &recall,
                options: &options,
                cancel: &cancel,
            };
            let results = self.run_tools(&run, uses).instrument(turn).await;
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

    /// The transcript a run starts from: the history it was given, then the user's prompt
    /// with the attached resources.
    async fn first_transcript(&self, prompt: &str, options: &RunOptions) -> Result<Vec<Message>> {
        let mut transcript = options.params.history.clone();
        let mut first = Message::user(prompt);
        first
            .content
            .extend(self.attachments(&options.params.attachments).await?);
        transcript.push(first);
        Ok(transcript)
    }

    /// One request to the model: the transcript so far, the conversation's tools and `recall`.
    fn request(
        &self,
        conversation: &Conversation,
        transcript: &[Message],
        system: &str,
        cancel: &CancellationToken,
        options: &RunOptions,
    ) -> ChatRequest {
        let mut tools = conversation.tools();
        tools.push(recall_tool());
        ChatRequest {
            messages: transcript.to_vec(),
            tools,
            tool_choice: None,
            system: Some(system.to_string()),
            max_tokens: self.options.max_tokens,
            temperature: self.options.temperature,
            cancel: Some(cancel.clone()),
            on_token: options.on_token.clone(),
        }
    }

    /// Runs one turn's tool calls concurrently (cancelling the run cancels them too) and keeps
    /// each full result for `recall`.
    async fn run_tools(&self, run: &Run<'_>, uses: Vec<(String, String, Value)>) -> Vec<Block> {
        let results = futures::future::join_all(
            uses.into_iter()
                .map(|(id, name, input)| self.dispatch(run, id, name, input)),
        )
        .await;
        for b in &results {
            if let Block::ToolResult {
                tool_use_id,
                content,
                ..
            } = b
            {
                run.recall
                    .lock()
                    .unwrap()
                    .insert(tool_use_id.clone(), content.clone());
            }
        }
        results
    }

    /// The contents of attached resources as message blocks: text as text (named by URI),
    /// images as images, other binary content named. Read once and cached until the
    /// server reports the resource updated or the pool reconnects.
    async fn attachments(&self, attachments: &[Attachment]) -> Result<Vec<Block>> {
        {
            let mut updates = self.updates.lock().unwrap();
            let mut cache = self.resources.lock().unwrap();
            while let Some(event) = updates.try_recv() {
                match event {
                    Event::ResourceUpdated { uri, .. } => cache.retain(|a, _| a.uri != uri),
                    Event::ServerConnected { .. } => cache.clear(),
                    _ => {}
                }
            }
        }
        let mut out = Vec::new();
        for a in attachments {
            let cached = self.resources.lock().unwrap().get(a).cloned();
            let blocks = match cached {
                Some(b) => b,
                None => {
                    let read = self.pool.read_resource(&a.server, &a.uri).await?;
                    let blocks =
                        resource_blocks(&serde_json::to_value(&read.contents).unwrap_or_default());
                    self.resources
                        .lock()
                        .unwrap()
                        .insert(a.clone(), blocks.clone());
                    blocks
                }
            };
            out.extend(blocks);
        }
        Ok(out)
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

    /// What to ask the host before a tool runs, when the approval policy wants its yes;
    /// discovery and host tools never do. A tool the pool has not seen yet is located first,
    /// so it cannot slip through unchecked.
    async fn needs_approval(&self, tool_id: &str, arguments: &Value) -> Option<ApprovalRequest> {
        let (server_id, name) = self.pool.locate_tool(tool_id).await.ok()?;
        if server_id == HOST_TOOLS_SERVER {
            return None;
        }
        let record = self.pool.get_server(&server_id).await.ok()?;
        let tool = self.pool.tool_info(tool_id).await.ok();
        let annotations = tool
            .as_ref()
            .and_then(|t| t.annotations.as_ref())
            .map(crate::shared_json::SharedJson::to_value);
        let hint = |key: &str| {
            annotations
                .as_ref()
                .and_then(|a| a.get(key))
                .and_then(Value::as_bool)
        };
        // A trusted server's tool is trusted as the user saw it: changed or new since, it is
        // asked about (a tool that cannot be looked up counts as new).
        let standing = match (record.is_trusted, &tool) {
            (false, _) => Standing::AsTrusted,
            (true, None) => Standing::New,
            (true, Some(tool)) => match self.pool.pins_of(&record).await {
                Some(pins) => crate::tools::pins::standing(&pins, tool),
                None => Standing::New,
            },
        };
        let mut change = None;
        let reason = if !record.is_trusted {
            ApprovalReason::UntrustedServer
        } else if let Standing::Changed(what) = standing {
            change = Some(what);
            ApprovalReason::ChangedSinceTrusted
        } else if standing == Standing::New {
            change = Some("it was not among the server's tools when the server was trusted".into());
            ApprovalReason::NewSinceTrusted
        } else if record.disabled_auto_approve_tools.contains(&name) {
            ApprovalReason::NotAutoApproved
        } else {
            match self.options.approval_policy {
                ApprovalPolicy::Always => ApprovalReason::Always,
                ApprovalPolicy::ReadOnly if hint("readOnlyHint") != Some(true) => {
                    ApprovalReason::NotReadOnly
                }
                ApprovalPolicy::Trusted
                    if self.options.ask_destructive
                        && hint("destructiveHint") == Some(true)
                        && hint("readOnlyHint") != Some(true) =>
                {
                    ApprovalReason::Destructive
                }
                _ => return None,
            }
        };
        let tool = tool.unwrap_or_default();
        Some(ApprovalRequest {
            tool_id: tool_id.to_string(),
            server_name: record.name,
            arguments: arguments.clone(),
            server_id,
            title: tool.title,
            description: tool.description,
            annotations,
            trusted: record.is_trusted,
            reason: reason.as_str().into(),
            change,
        })
    }

    async fn dispatch(&self, run: &Run<'_>, id: String, name: String, input: Value) -> Block {
        self.pool.emit(Event::AgentToolUse {
            run_id: run.id.clone(),
            call_id: id.clone(),
            tool_id: name.clone(),
            arguments: input.clone(),
        });
        let block = self.tool_result(run, &id, &name, input).await;
        if let Block::ToolResult {
            content, is_error, ..
        } = &block
        {
            self.pool.emit(Event::AgentToolResult {
                run_id: run.id.clone(),
                call_id: id.clone(),
                tool_id: name.clone(),
                is_error: *is_error,
                preview: content.chars().take(200).collect(),
            });
        }
        block
    }

    async fn tool_result(&self, run: &Run<'_>, id: &str, name: &str, input: Value) -> Block {
        let Run {
            conversation,
            recall,
            options,
            cancel,
            ..
        } = run;
        let result = |content: String, is_error: bool| Block::ToolResult {
            tool_use_id: id.to_string(),
            content,
            is_error,
            images: Vec::new(),
        };
        let input = match input {
            Value::Object(_) => input,
            Value::Null => Value::Object(Default::default()),
            other => {
                let raw = match other {
                    Value::String(s) => s,
                    v => v.to_string(),
                };
                return result(
                    format!(
                        "The arguments for '{name}' are not a JSON object: {raw}\n                         Call it again with a JSON object that follows its schema."
                    ),
                    true,
                );
            }
        };
        if name == RECALL {
            let wanted = input.get("id").and_then(Value::as_str).unwrap_or_default();
            return match recall.lock().unwrap().get(wanted) {
                Some(full) => result(full.clone(), false),
                None => result(format!("no tool result has the id '{wanted}'"), true),
            };
        }
        if let Some(request) = self.needs_approval(name, &input).await
            && !self.always_allowed.lock().unwrap().contains(name)
        {
            let answer = match &options.approve {
                Some(approve) => approve(request).await,
                None => Approval::Deny,
            };
            match answer {
                Approval::Deny => {
                    return result(format!("The user denied the call of '{name}'."), true);
                }
                Approval::AllowAlways => {
                    self.always_allowed.lock().unwrap().insert(name.to_string());
                }
                Approval::AllowOnce => {}
            }
        }
        let call = CallOptions {
            cancel: Some(cancel.child_token()),
            timeout: self.options.tool_timeout_ms.map(Duration::from_millis),
            max_total: self.options.tool_max_total_ms.map(Duration::from_millis),
            ..Default::default()
        };
        match conversation.call(name, input, call).await {
            Ok(r) => Block::ToolResult {
                tool_use_id: id.to_string(),
                content: render(&r),
                is_error: r.is_error == Some(true),
                images: images(&r),
            },
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
                // Providers bill an image at roughly a thousand tokens.
                Block::Image(_) => IMAGE_CHARS,
                Block::ToolUse { input, .. } => input.to_string().len(),
                Block::ToolResult {
                    content, images, ..
                } => content.len() + images.len() * IMAGE_CHARS,
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
                images,
                ..
            } = block
            {
                if !images.is_empty() {
                    content.push_str(&format!(
                        "\n[{} image(s) removed to save context]",
                        images.len()
                    ));
                    images.clear();
                }
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

/// The images of a tool result, for providers that take them.
fn images(r: &CallToolResult) -> Vec<Image> {
    r.content
        .iter()
        .filter_map(|block| {
            let v = serde_json::to_value(block).ok()?;
            (v.get("type")? == "image").then(|| Image {
                data: v["data"].as_str().unwrap_or_default().to_string(),
                mime_type: v["mimeType"].as_str().unwrap_or("image/png").to_string(),
            })
        })
        .collect()
}

/// `resources/read` contents as message blocks.
fn resource_blocks(contents: &Value) -> Vec<Block> {
    let mut out = Vec::new();
    for c in contents.as_array().into_iter().flatten() {
        let uri = c["uri"].as_str().unwrap_or_default();
        let mime = c["mimeType"].as_str().unwrap_or_default();
        if let Some(text) = c["text"].as_str() {
            out.push(Block::Text {
                text: format!("\n\n[attached resource {uri}]\n{text}"),
            });
        } else if let Some(blob) = c["blob"].as_str() {
            if mime.starts_with("image/") {
                out.push(Block::Text {
                    text: format!("\n\n[attached image {uri}]"),
                });
                out.push(Block::Image(Image {
                    data: blob.to_string(),
                    mime_type: mime.to_string(),
                }));
            } else {
                out.push(Block::Text {
                    text: format!(
                        "\n\n[attached resource {uri}: {} bytes of {}]",
                        blob.len() / 4 * 3,
                        if mime.is_empty() { "binary data" } else { mime }
                    ),
                });
            }
        }
    }
    out
}

/// A model without native tool calling writes its calls as text: they become tool_use
/// blocks (with ids of our own), the rest stays text.
fn with_text_calls(content: Vec<Block>, run_id: &str, iteration: usize) -> Vec<Block> {
    if content.iter().any(|b| matches!(b, Block::ToolUse { .. })) {
        return content;
    }
    let text: String = content
        .iter()
        .filter_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let parsed = parse_tool_calls(&text);
    if parsed.calls.is_empty() {
        return content;
    }
    let mut out = Vec::new();
    if !parsed.text.trim().is_empty() {
        out.push(Block::Text { text: parsed.text });
    }
    out.extend(
        parsed
            .calls
            .into_iter()
            .enumerate()
            .map(|(i, c)| Block::ToolUse {
                id: format!("{run_id}-{iteration}-{i}"),
                name: c.name,
                input: c.arguments,
            }),
    );
    out
}

fn recall_tool() -> ToolDef {
    ToolDef {
        name: RECALL.into(),
        description: "Read in full a tool result that was shortened to save context.".into(),
        input_schema: serde_json::json!({
            "type": "object",
            "properties": {"id": {"type": "string", "description": "the tool call id from the hint"}},
            "required": ["id"]
        }).into(),
    }
}

/// The tool calls in a model's answer, as (call id, tool name, arguments as the model wrote
/// them). Providers require an object in the transcript, so a call whose arguments are not
/// one gets `{}` there; what the model wrote goes with the call, for the error it gets back.
fn tool_uses(content: &mut [Block]) -> Vec<(String, String, Value)> {
    content
        .iter_mut()
        .filter_map(|b| match b {
            Block::ToolUse { id, name, input } => {
                let given = input.clone();
                if !input.is_object() {
                    *input = Value::Object(Default::default());
                }
                Some((id.clone(), name.clone(), given))
            }
            _ => None,
        })
        .collect()
}
