//! `mcpmux-conformance-fixture`: the upstream MCP server that the official MCP conformance suite's
//! server scenarios reach through `mcpmux serve`.
//!
//! The suite calls fixtures by name (`test_simple_text`, `test_prompt_with_image`,
//! `test://static-binary`, …) and checks what comes back against what its reference server
//! (`examples/servers/typescript/everything-server.ts` in the conformance repository) answers.
//! The gateway passes tools, prompts and resources through unchanged, so this server answers the
//! same names with the same contents, and the suite's verdict is about the gateway in between.
//!
//! It speaks MCP over stdio (rmcp's server side), in both lifecycles: legacy `initialize` sessions,
//! and 2026-07-28 requests that carry their protocol version and client capabilities in `_meta`.
//! What differs between the two:
//! * the tools that ask the client something (`test_sampling`, `test_elicitation*`) send it a
//!   request in a legacy session; on 2026-07-28, where a server may no longer send requests, they
//!   answer with an `input_required` round instead and finish when the client calls again;
//! * the multi round-trip fixtures (`test_input_required_result_*`, the prompt
//!   `test_input_required_result_prompt`), the diagnostic tools (`test_missing_capability`,
//!   `test_streaming_elicitation`, `test_logging_tool`, `test_trigger_tool_change`,
//!   `test_trigger_prompt_change`) and the resource `test://stateless-static-text` exist only on
//!   2026-07-28, as the reference serves them only on its stateless path;
//! * log messages go out at the levels `logging/setLevel` (legacy) or the request's `_meta` log
//!   level (2026-07-28) asks for.
//!
//! The tasks extension's fixtures are in `task_tools.rs`.
//!
//! Left to the gateway in front: everything about the HTTP transport (sessions, headers, SSE,
//! caching hints, DNS rebinding), and skills.

#![allow(
    deprecated,
    reason = "sampling, roots and logging are what the suite's fixtures exercise"
)]

use std::{
    collections::BTreeSet,
    hash::{BuildHasher, RandomState},
    process::ExitCode,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    handler::server::{
        router::tool::ToolRouter,
        tool::{InputResponses as ToolInputResponses, RequestState, ToolCallContext},
        wrapper::Parameters,
    },
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
        CompleteResult, CompletionInfo, ContentBlock, ErrorCode, GetPromptRequestParams,
        GetPromptResponse, GetPromptResult, Implementation, InputRequest, InputRequiredResult,
        InputResponses, JsonObject, ListPromptsResult, ListResourceTemplatesResult,
        ListResourcesResult, ListToolsResult, LoggingLevel, LoggingMessageNotificationParam,
        PaginatedRequestParams, ProgressNotificationParam, ProgressToken, Prompt, PromptArgument,
        PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
        Resource, ResourceContents, ResourceTemplate, Role, ServerCapabilities, ServerConfig,
        ServerNotification, ServerRequest, SetLevelRequestParams, SubscribeRequestParams,
        SubscriptionFilter, UnsubscribeRequestParams,
    },
    service::{RequestContext, ServerInitializeError, SubscriptionContext, SubscriptionSink},
    tool, tool_handler, tool_router,
};
use serde::Deserialize;
use serde_json::{Value, json};

mod task_tools;

const SERVER_NAME: &str = "mcp-conformance-test-server";
const SERVER_VERSION: &str = "1.0.0";

/// The logger name of the reference's own log lines (subscriptions, level changes).
const LOGGER: &str = "conformance-test-server";

/// A 1x1 red PNG pixel, byte for byte the reference's.
const TEST_IMAGE_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A minimal WAV file, byte for byte the reference's.
const TEST_AUDIO_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// Tools the reference serves only on its stateless (2026-07-28) path.
const STATELESS_TOOLS: &[&str] = &[
    "test_missing_capability",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
    "test_streaming_elicitation",
    "test_logging_tool",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
];

/// The prompt the reference serves only on its stateless path.
const STATELESS_PROMPT: &str = "test_input_required_result_prompt";

/// The resource the reference serves only on its stateless path.
const STATELESS_RESOURCE: &str = "test://stateless-static-text";

#[derive(Debug, Deserialize)]
struct SamplingArgs {
    prompt: String,
}

#[derive(Debug, Deserialize)]
struct ElicitationArgs {
    message: String,
}

#[derive(Clone)]
struct Fixture {
    tool_router: ToolRouter<Self>,
    /// What `logging/setLevel` asked in a legacy session; unset lets every level through, as the
    /// reference's tools do.
    log_level: Arc<Mutex<Option<LoggingLevel>>>,
    /// Tracked because the suite asks servers to; like the reference's watched resource, nothing
    /// here ever changes, so no update is sent.
    subscriptions: Arc<Mutex<BTreeSet<String>>>,
    streams: Arc<ListenStreams>,
    signer: StateSigner,
    /// The tasks of the task fixtures (task_tools.rs).
    tasks: rmcp::task_manager::TaskManager,
}

/// The open `subscriptions/listen` streams of 2026-07-28 clients, which the trigger tools notify.
#[derive(Debug, Default)]
struct ListenStreams {
    sinks: Mutex<Vec<SubscriptionSink>>,
    /// Acknowledged streams whose `listen` has not registered its sink yet: rmcp acknowledges
    /// first, and the suite triggers a change as soon as it reads the acknowledgement.
    starting: AtomicUsize,
}

impl ListenStreams {
    async fn tell(&self, notification: ServerNotification) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
        while self.starting.load(Ordering::SeqCst) > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let sinks = self.sinks.lock().unwrap().clone();
        for sink in sinks {
            // A stream that did not ask for this kind refuses it: that is its filter at work.
            let _ = sink.send(notification.clone()).await;
        }
    }
}

/// Seals a `requestState` so that a changed one is refused. The reference signs with HMAC-SHA256
/// under a per-process secret; std's `RandomState` (SipHash under random per-process keys) does
/// the same job for a test fixture without a crypto crate: without the keys a client cannot make
/// a matching tag.
#[derive(Debug, Clone, Default)]
struct StateSigner(RandomState);

impl StateSigner {
    fn tag(&self, data: &str) -> String {
        format!("{:016x}", self.0.hash_one(data))
    }

    fn seal(&self, payload: &Value) -> String {
        let data = payload.to_string();
        json!({"data": data, "mac": self.tag(&data)}).to_string()
    }

    fn open(&self, sealed: &str) -> Option<Value> {
        let sealed: Value = serde_json::from_str(sealed).ok()?;
        let data = sealed["data"].as_str()?;
        if sealed["mac"].as_str()? != self.tag(data) {
            return None;
        }
        serde_json::from_str(data).ok()
    }
}

fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v >= rmcp::model::ProtocolVersion::V_2026_07_28)
}

impl Fixture {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router() + Self::task_tools(),
            log_level: Arc::default(),
            subscriptions: Arc::default(),
            streams: Arc::default(),
            signer: StateSigner::default(),
            tasks: rmcp::task_manager::TaskManager::new(),
        }
    }

    fn wants_log(&self, context: &RequestContext<RoleServer>, level: LoggingLevel) -> bool {
        let asked = if is_modern(context) {
            context.meta.log_level()
        } else {
            Some(
                self.log_level
                    .lock()
                    .unwrap()
                    .unwrap_or(LoggingLevel::Debug),
            )
        };
        // `LoggingLevel` has no order of its own: its variants are declared least severe first.
        asked.is_some_and(|asked| level as u8 >= asked as u8)
    }

    async fn log(&self, context: &RequestContext<RoleServer>, message: &str, logger: Option<&str>) {
        if !self.wants_log(context, LoggingLevel::Info) {
            return;
        }
        let mut param = LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(message));
        if let Some(logger) = logger {
            param = param.with_logger(logger);
        }
        // A client that went away must not fail the request that logs.
        let _ = context.peer.notify_logging_message(param).await;
    }
}

#[tool_router]
impl Fixture {
    #[tool(description = "Tests simple text content response")]
    fn test_simple_text(&self) -> CallToolResult {
        text_result("This is a simple text response for testing.")
    }

    #[tool(description = "Tests image content response")]
    fn test_image_content(&self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::image(TEST_IMAGE_BASE64, "image/png")])
    }

    #[tool(description = "Tests audio content response")]
    fn test_audio_content(&self) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::audio(TEST_AUDIO_BASE64, "audio/wav")])
    }

    #[tool(description = "Tests embedded resource content response")]
    fn test_embedded_resource(&self) -> CallToolResult {
        let resource = ResourceContents::text(
            "This is an embedded resource content.",
            "test://embedded-resource",
        );
        CallToolResult::success(vec![ContentBlock::resource(resource)])
    }

    #[tool(description = "Tests response with multiple content types (text, image, resource)")]
    fn test_multiple_content_types(&self) -> CallToolResult {
        let json = json!({"test": "data", "value": 123}).to_string();
        let resource = ResourceContents::text(json, "test://mixed-content-resource")
            .with_mime_type("application/json");
        CallToolResult::success(vec![
            ContentBlock::text("Multiple content types test:"),
            ContentBlock::image(TEST_IMAGE_BASE64, "image/png"),
            ContentBlock::resource(resource),
        ])
    }

    #[tool(description = "Tests tool that emits log messages during execution")]
    async fn test_tool_with_logging(&self, context: RequestContext<RoleServer>) -> CallToolResult {
        let steps = [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ];
        for (i, message) in steps.into_iter().enumerate() {
            // The pauses are the point: clients must take several log lines during one call.
            if i > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            self.log(&context, message, None).await;
        }
        text_result("Tool with logging executed successfully")
    }

    #[tool(description = "Tests tool that reports progress notifications")]
    async fn test_tool_with_progress(&self, context: RequestContext<RoleServer>) -> CallToolResult {
        let token = context.meta.get_progress_token();
        for step in [0u32, 50, 100] {
            if step > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            // Unlike the reference (token 0), no token means no notifications: a server may only
            // report progress on a token the client gave.
            if let Some(token) = &token {
                let param = ProgressNotificationParam::new(token.clone(), f64::from(step))
                    .with_total(100.0)
                    .with_message(format!("Completed step {step} of 100"));
                let _ = context.peer.notify_progress(param).await;
            }
        }
        text_result(token.as_ref().map_or("0".to_owned(), token_text))
    }

    #[tool(description = "Tests error response handling")]
    fn test_error_handling(&self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(
            "This tool intentionally returns an error for testing",
        )])
    }

    #[tool(
        description = "Tests server-initiated sampling (LLM completion request)",
        input_schema = one_string_arg("prompt", "The prompt to send to the LLM")
    )]
    async fn test_sampling(
        &self,
        Parameters(SamplingArgs { prompt }): Parameters<SamplingArgs>,
        ToolInputResponses(responses): ToolInputResponses,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let question = sampling(&prompt, 100);
        match ask_client(&context, responses.as_ref(), "sampling", question).await {
            Asked::Answer(answer) => done(format!("LLM response: {}", sampled_text(&answer))),
            Asked::Failed(error) => done(format!("Sampling not supported or error: {error}")),
            Asked::Pending(round) => round.into(),
        }
    }

    #[tool(
        description = "Tests server-initiated elicitation (user input request)",
        input_schema = one_string_arg("message", "The message to show the user")
    )]
    async fn test_elicitation(
        &self,
        Parameters(ElicitationArgs { message }): Parameters<ElicitationArgs>,
        ToolInputResponses(responses): ToolInputResponses,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let properties = json!({"response": {"type": "string", "description": "User's response"}});
        let question = elicit(&message, form(properties, &["response"]));
        elicitation_tool(&context, responses.as_ref(), question, "User response").await
    }

    #[tool(description = "Tests elicitation with default values per SEP-1034")]
    async fn test_elicitation_sep1034_defaults(
        &self,
        ToolInputResponses(responses): ToolInputResponses,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let question = elicit(
            "Please review and update the form fields with defaults",
            defaults_form(),
        );
        elicitation_tool(
            &context,
            responses.as_ref(),
            question,
            "Elicitation completed",
        )
        .await
    }

    #[tool(description = "Tests elicitation with enum schema improvements per SEP-1330")]
    async fn test_elicitation_sep1330_enums(
        &self,
        ToolInputResponses(responses): ToolInputResponses,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let question = elicit("Please select options from the enum fields", enums_form());
        elicitation_tool(
            &context,
            responses.as_ref(),
            question,
            "Elicitation completed",
        )
        .await
    }

    #[tool(
        description = "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
        input_schema = object(json_schema_2020_12())
    )]
    fn json_schema_2020_12_tool(
        &self,
        Parameters(mut args): Parameters<JsonObject>,
    ) -> CallToolResult {
        // The reference parses the arguments with a schema of these two keys, which drops others.
        args.retain(|key, _| key == "name" || key == "address");
        let args = Value::Object(args);
        text_result(format!("JSON Schema 2020-12 tool called with: {args}"))
    }

    #[tool(
        description = "Echoes its region, which an HTTP client also sends as the header \
                       Mcp-Param-Region (x-mcp-header): the server checks the two agree",
        input_schema = object(json!({
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            "required": ["region"]
        }))
    )]
    fn test_custom_header(&self, Parameters(args): Parameters<JsonObject>) -> CallToolResult {
        let region = args
            .get("region")
            .and_then(Value::as_str)
            .unwrap_or_default();
        text_result(format!("Region: {region}"))
    }

    #[tool(description = "Test tool requiring sampling")]
    fn test_missing_capability(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        if context
            .client_capabilities()
            .and_then(|c| c.sampling)
            .is_none()
        {
            return Err(ErrorData::new(
                ErrorCode(-32021),
                "MissingRequiredClientCapabilityError",
                Some(json!({"requiredCapabilities": {"sampling": {}}})),
            ));
        }
        Ok(text_result("Success"))
    }

    #[tool(description = "MRTR: returns InputRequiredResult with elicitation request")]
    fn test_input_required_result_elicitation(
        &self,
        ToolInputResponses(responses): ToolInputResponses,
    ) -> CallToolResponse {
        match answered(responses.as_ref(), "user_name") {
            Some(answer) => done(format!("Hello, {}!", answer_text(answer, "name"))),
            None => round(vec![("user_name", ask_name("What is your name?"))], None).into(),
        }
    }

    #[tool(description = "MRTR: returns InputRequiredResult with sampling request")]
    fn test_input_required_result_sampling(
        &self,
        ToolInputResponses(responses): ToolInputResponses,
    ) -> CallToolResponse {
        match answered(responses.as_ref(), "sample_request") {
            Some(answer) => {
                let text = answer["content"]["text"].as_str().unwrap_or("no response");
                done(format!("Sampling result: {text}"))
            }
            None => {
                let question = sampling("What is the capital of France?", 100);
                round(vec![("sample_request", question)], None).into()
            }
        }
    }

    #[tool(description = "MRTR: returns InputRequiredResult with roots/list request")]
    fn test_input_required_result_list_roots(
        &self,
        ToolInputResponses(responses): ToolInputResponses,
    ) -> CallToolResponse {
        match answered(responses.as_ref(), "roots_request") {
            Some(answer) => done(format!("Found {} root(s)", roots_count(answer))),
            None => round(vec![("roots_request", list_roots())], None).into(),
        }
    }

    #[tool(description = "MRTR: returns InputRequiredResult with requestState")]
    fn test_input_required_result_request_state(
        &self,
        RequestState(state): RequestState,
        ToolInputResponses(responses): ToolInputResponses,
    ) -> CallToolResponse {
        let confirmed = answered(responses.as_ref(), "confirm")
            .is_some_and(|answer| answer["content"]["ok"] == true);
        if confirmed && parse_state(state.as_deref())["kind"] == "request-state" {
            return done("state-ok: requestState validated");
        }
        let state = json!({"kind": "request-state", "nonce": nonce()}).to_string();
        round(vec![("confirm", ask_confirm())], Some(state)).into()
    }

    #[tool(description = "MRTR: returns InputRequiredResult with multiple input requests")]
    fn test_input_required_result_multiple_inputs(
        &self,
        RequestState(state): RequestState,
        ToolInputResponses(responses): ToolInputResponses,
    ) -> CallToolResponse {
        if let Some(text) = multiple_inputs_answer(state.as_deref(), responses.as_ref()) {
            return done(text);
        }
        let questions = vec![
            ("user_name", ask_name("What is your name?")),
            ("greeting", sampling("Generate a greeting", 50)),
            ("client_roots", list_roots()),
        ];
        let state = json!({"kind": "multiple-inputs", "nonce": nonce()}).to_string();
        round(questions, Some(state)).into()
    }

    #[tool(description = "MRTR: multi-round InputRequiredResult workflow")]
    fn test_input_required_result_multi_round(
        &self,
        RequestState(state): RequestState,
        ToolInputResponses(responses): ToolInputResponses,
    ) -> CallToolResponse {
        let state = parse_state(state.as_deref());
        let responses = responses.as_ref();
        if let Some(answer) = answered(responses, "step1").filter(|_| state["round"] == 1) {
            let properties = json!({"color": {"type": "string"}});
            let question = elicit(
                "Step 2: What is your favorite color?",
                form(properties, &["color"]),
            );
            let name = answer_text(answer, "name");
            let next = json!({"round": 2, "name": name, "nonce": nonce()}).to_string();
            return round(vec![("step2", question)], Some(next)).into();
        }
        if let Some(answer) = answered(responses, "step2").filter(|_| state["round"] == 2) {
            let name = state["name"].as_str().unwrap_or("friend");
            let color = answer_text(answer, "color");
            return done(format!("Multi-round complete for {name} who likes {color}"));
        }
        // A first call, or a state that does not fit the answers: start over.
        let first = json!({"round": 1, "nonce": nonce()}).to_string();
        round(
            vec![("step1", ask_name("Step 1: What is your name?"))],
            Some(first),
        )
        .into()
    }

    #[tool(description = "MRTR: HMAC-signed requestState integrity test")]
    fn test_input_required_result_tampered_state(
        &self,
        RequestState(state): RequestState,
        ToolInputResponses(responses): ToolInputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(sealed) = state.as_deref() {
            let state = self.signer.open(sealed).ok_or_else(|| {
                ErrorData::invalid_params("requestState integrity check failed", None)
            })?;
            if state["kind"] == "tamper-test" && answered(responses.as_ref(), "confirm").is_some() {
                return Ok(done("integrity-ok: state verified"));
            }
        }
        let state = self
            .signer
            .seal(&json!({"kind": "tamper-test", "nonce": nonce()}));
        Ok(round(vec![("confirm", ask_confirm())], Some(state)).into())
    }

    #[tool(description = "MRTR: respects client capabilities in inputRequests")]
    fn test_input_required_result_capabilities(
        &self,
        ToolInputResponses(responses): ToolInputResponses,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        if let Some(responses) = responses.filter(|r| !r.is_empty()) {
            let keys: Vec<&str> = responses.keys().map(String::as_str).collect();
            return done(format!("capabilities-ok: received {}", keys.join(",")));
        }
        let declared = context.client_capabilities().unwrap_or_default();
        let mut questions = Vec::new();
        if declared.elicitation.is_some() {
            let properties = json!({"value": {"type": "string"}});
            questions.push((
                "elicit_input",
                elicit("Elicitation input", form(properties, &["value"])),
            ));
        }
        if declared.sampling.is_some() {
            questions.push(("sample_input", sampling("Sample request", 50)));
        }
        if questions.is_empty() {
            return done("No supported capabilities declared");
        }
        let state = self
            .signer
            .seal(&json!({"kind": "capabilities-test", "nonce": nonce()}));
        round(questions, Some(state)).into()
    }

    #[tool(description = "Diagnostic tool validating response progress streams")]
    async fn test_streaming_elicitation(
        &self,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        // The reference reports progress on a token of its own ("token-abc"); only a token the
        // client gave may carry progress, so it goes out only when there is one.
        if let Some(token) = context.meta.get_progress_token() {
            let param = ProgressNotificationParam::new(token, 50.0).with_total(100.0);
            let _ = context.peer.notify_progress(param).await;
        }
        text_result("Streaming complete")
    }

    #[tool(description = "Diagnostic logging validator tool")]
    async fn test_logging_tool(&self, context: RequestContext<RoleServer>) -> CallToolResult {
        self.log(&context, "Diagnostic trace logging activated", None)
            .await;
        text_result("Logging evaluated")
    }

    #[tool(description = "Diagnostic hook: tells the listen streams that the tool list changed")]
    async fn test_trigger_tool_change(&self) -> CallToolResult {
        let changed = ServerNotification::ToolListChangedNotification(Default::default());
        self.streams.tell(changed).await;
        text_result("Mutation triggered")
    }

    #[tool(description = "Diagnostic hook: tells the listen streams that the prompt list changed")]
    async fn test_trigger_prompt_change(&self) -> CallToolResult {
        let changed = ServerNotification::PromptListChangedNotification(Default::default());
        self.streams.tell(changed).await;
        text_result("Mutation triggered")
    }
}

fn text_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

fn done(text: impl Into<String>) -> CallToolResponse {
    text_result(text).into()
}

fn object(value: Value) -> Arc<JsonObject> {
    Arc::new(serde_json::from_value(value).expect("a JSON object"))
}

/// The input schema of a tool with one required string argument.
fn one_string_arg(name: &str, description: &str) -> Arc<JsonObject> {
    let mut properties = JsonObject::new();
    properties.insert(
        name.to_owned(),
        json!({"type": "string", "description": description}),
    );
    object(json!({"type": "object", "properties": properties, "required": [name]}))
}

/// The reference's input schema for `json_schema_2020_12_tool`, verbatim: the suite checks
/// that `$schema`, `$defs`, `$anchor`, the composition and conditional keywords and
/// `additionalProperties` reach the client untouched.
fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "city": {"type": "string"}
                }
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {
            "properties": {"contactMethod": {"const": "phone"}},
            "required": ["contactMethod"]
        },
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

/// A form with a default for every primitive type.
fn defaults_form() -> Value {
    let properties = json!({
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active"
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": true}
    });
    form(properties, &[])
}

/// A form with each of the five enum shapes: untitled and titled single-select, the legacy
/// `enumNames`, untitled and titled multi-select.
fn enums_form() -> Value {
    let properties = json!({
        "untitledSingle": {
            "type": "string",
            "description": "Select one option",
            "enum": ["option1", "option2", "option3"]
        },
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"}
            ]
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"]
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}
                ]
            }
        }
    });
    form(properties, &[])
}

fn form(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

/// A question to the client, written as the reference writes it on the wire.
fn question(method: &str, params: Value) -> InputRequest {
    serde_json::from_value(json!({"method": method, "params": params}))
        .expect("a sampling, elicitation or roots request")
}

fn elicit(message: &str, requested_schema: Value) -> InputRequest {
    let params = json!({"message": message, "requestedSchema": requested_schema});
    question("elicitation/create", params)
}

fn ask_name(message: &str) -> InputRequest {
    elicit(
        message,
        form(json!({"name": {"type": "string"}}), &["name"]),
    )
}

fn ask_confirm() -> InputRequest {
    elicit(
        "Please confirm",
        form(json!({"ok": {"type": "boolean"}}), &["ok"]),
    )
}

fn sampling(text: &str, max_tokens: u32) -> InputRequest {
    let message = json!({"role": "user", "content": {"type": "text", "text": text}});
    question(
        "sampling/createMessage",
        json!({"messages": [message], "maxTokens": max_tokens}),
    )
}

fn list_roots() -> InputRequest {
    question("roots/list", json!({}))
}

/// An `input_required` round asking `questions`, carrying `state` to the next call.
fn round(questions: Vec<(&str, InputRequest)>, state: Option<String>) -> InputRequiredResult {
    let requests = questions
        .into_iter()
        .map(|(key, question)| (key.to_owned(), question))
        .collect();
    InputRequiredResult::new(Some(requests), state)
}

/// The client's answer under `key`. Only an object counts: anything else is asked again
/// rather than read as an answer (the reference reads it, as "unknown").
fn answered<'a>(responses: Option<&'a InputResponses>, key: &str) -> Option<&'a Value> {
    responses?.get(key).filter(|answer| answer.is_object())
}

/// A string field of an accepted form, or "unknown" as the reference says.
fn answer_text<'a>(answer: &'a Value, field: &str) -> &'a str {
    answer["content"][field].as_str().unwrap_or("unknown")
}

fn roots_count(answer: &Value) -> usize {
    answer["roots"].as_array().map_or(0, Vec::len)
}

/// A state of the reference's plain (unsigned) kind; anything unreadable reads as none.
fn parse_state(state: Option<&str>) -> Value {
    state
        .and_then(|state| serde_json::from_str(state).ok())
        .unwrap_or_default()
}

/// A fresh value for every state, as the reference's random UUID, so no two rounds share one.
fn nonce() -> String {
    format!("{:016x}", RandomState::new().hash_one(()))
}

fn token_text(token: &ProgressToken) -> String {
    match serde_json::to_value(token).unwrap_or_default() {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

/// The final text of `test_input_required_result_multiple_inputs`, once all three answers and
/// the state are there.
fn multiple_inputs_answer(
    state: Option<&str>,
    responses: Option<&InputResponses>,
) -> Option<String> {
    let name = answered(responses, "user_name")?;
    let greeting = answered(responses, "greeting")?;
    let roots = answered(responses, "client_roots")?;
    if parse_state(state)["kind"] != "multiple-inputs" {
        return None;
    }
    let greeting = greeting["content"]["text"]
        .as_str()
        .unwrap_or("Hello there!");
    Some(format!(
        "Name: {}; Greeting: {greeting}; Roots: {}",
        answer_text(name, "name"),
        roots_count(roots)
    ))
}

/// What the client said to one question.
enum Asked {
    Answer(Value),
    /// The legacy request failed: the client lacks the capability, or refused.
    Failed(String),
    /// On 2026-07-28: the question as a round, answered by the client's next call.
    Pending(InputRequiredResult),
}

/// Asks the client one question the way its protocol allows: a request in a legacy session, an
/// `input_required` round (answered under `key` on the next call) on 2026-07-28.
async fn ask_client(
    context: &RequestContext<RoleServer>,
    responses: Option<&InputResponses>,
    key: &str,
    question: InputRequest,
) -> Asked {
    if is_modern(context) {
        return match answered(responses, key) {
            Some(answer) => Asked::Answer(answer.clone()),
            None => Asked::Pending(round(vec![(key, question)], None)),
        };
    }
    let request = match question {
        InputRequest::CreateMessage(request) => ServerRequest::CreateMessageRequest(request),
        InputRequest::Elicitation(request) => ServerRequest::ElicitRequest(request),
        InputRequest::ListRoots(request) => ServerRequest::ListRootsRequest(request),
        _ => return Asked::Failed("not a request this server knows how to send".into()),
    };
    match context.peer.send_request(request).await {
        Ok(result) => Asked::Answer(serde_json::to_value(result).unwrap_or_default()),
        Err(error) => Asked::Failed(error.to_string()),
    }
}

async fn elicitation_tool(
    context: &RequestContext<RoleServer>,
    responses: Option<&InputResponses>,
    question: InputRequest,
    heading: &str,
) -> CallToolResponse {
    match ask_client(context, responses, "elicitation", question).await {
        Asked::Answer(answer) => {
            let action = answer["action"].as_str().unwrap_or_default();
            let content = answer.get("content").filter(|c| !c.is_null());
            let content = content.cloned().unwrap_or_else(|| json!({}));
            done(format!("{heading}: action={action}, content={content}"))
        }
        Asked::Failed(error) => done(format!("Elicitation not supported or error: {error}")),
        Asked::Pending(round) => round.into(),
    }
}

/// The sampled text, where either shape of sampling result keeps it.
fn sampled_text(answer: &Value) -> &str {
    answer["content"]["text"]
        .as_str()
        .or_else(|| answer["message"]["content"]["text"].as_str())
        .unwrap_or("No response")
}

fn prompts(modern: bool) -> Vec<Prompt> {
    let arg = |name: &str, description: &str| {
        PromptArgument::new(name)
            .with_description(description)
            .with_required(true)
    };
    let mut prompts = vec![
        Prompt::new(
            "test_simple_prompt",
            Some("A simple prompt without arguments"),
            None,
        )
        .with_title("Simple Test Prompt"),
        Prompt::new(
            "test_prompt_with_arguments",
            Some("A prompt with required arguments"),
            Some(vec![
                arg("arg1", "First test argument"),
                arg("arg2", "Second test argument"),
            ]),
        )
        .with_title("Prompt With Arguments"),
        Prompt::new(
            "test_prompt_with_embedded_resource",
            Some("A prompt that includes an embedded resource"),
            Some(vec![arg("resourceUri", "URI of the resource to embed")]),
        )
        .with_title("Prompt With Embedded Resource"),
        Prompt::new(
            "test_prompt_with_image",
            Some("A prompt that includes image content"),
            None,
        )
        .with_title("Prompt With Image"),
    ];
    if modern {
        let description = "MRTR: prompt that requires elicitation input";
        prompts.push(Prompt::new(STATELESS_PROMPT, Some(description), None));
    }
    prompts
}

/// The messages of the prompts both eras have.
fn prompt_messages(name: &str, args: &JsonObject) -> Result<Vec<PromptMessage>, ErrorData> {
    let arg = |key: &str| {
        let value = args.get(key).and_then(Value::as_str).map(str::to_owned);
        let missing = format!("Invalid arguments for prompt {name}: {key} is required");
        value.ok_or_else(|| ErrorData::invalid_params(missing, None))
    };
    Ok(match name {
        "test_simple_prompt" => vec![PromptMessage::new_text(
            Role::User,
            "This is a simple prompt for testing.",
        )],
        "test_prompt_with_arguments" => {
            let (arg1, arg2) = (arg("arg1")?, arg("arg2")?);
            let text = format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'");
            vec![PromptMessage::new_text(Role::User, text)]
        }
        "test_prompt_with_embedded_resource" => embedded_resource_prompt(arg("resourceUri")?),
        "test_prompt_with_image" => image_prompt(),
        other => {
            let message = format!("Prompt {other} not found");
            return Err(ErrorData::invalid_params(message, None));
        }
    })
}

fn embedded_resource_prompt(uri: String) -> Vec<PromptMessage> {
    let resource = ResourceContents::text("Embedded resource content for testing.", uri);
    vec![
        PromptMessage::new(Role::User, ContentBlock::resource(resource)),
        PromptMessage::new_text(Role::User, "Please process the embedded resource above."),
    ]
}

fn image_prompt() -> Vec<PromptMessage> {
    vec![
        PromptMessage::new(
            Role::User,
            ContentBlock::image(TEST_IMAGE_BASE64, "image/png"),
        ),
        PromptMessage::new_text(Role::User, "Please analyze the image above."),
    ]
}

/// `test_input_required_result_prompt`: asks for a context first, then uses it.
fn context_prompt(responses: Option<&InputResponses>) -> GetPromptResponse {
    match answered(responses, "user_context") {
        Some(answer) => {
            let text = format!("Prompt with context: {}", answer_text(answer, "context"));
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).into()
        }
        None => {
            let properties = json!({"context": {"type": "string"}});
            let question = elicit(
                "What context should the prompt use?",
                form(properties, &["context"]),
            );
            round(vec![("user_context", question)], None).into()
        }
    }
}

fn resources(modern: bool) -> Vec<Resource> {
    let mut resources = vec![
        Resource::new("test://static-text", "static-text")
            .with_title("Static Text Resource")
            .with_description("A static text resource for testing")
            .with_mime_type("text/plain"),
        Resource::new("test://static-binary", "static-binary")
            .with_title("Static Binary Resource")
            .with_description("A static binary resource (image) for testing")
            .with_mime_type("image/png"),
        Resource::new("test://watched-resource", "watched-resource")
            .with_title("Watched Resource")
            .with_description("A resource that auto-updates every 3 seconds")
            .with_mime_type("text/plain"),
    ];
    if modern {
        resources.push(
            Resource::new(STATELESS_RESOURCE, "Stateless Static Text")
                .with_description("A static text resource served on the draft path")
                .with_mime_type("text/plain"),
        );
    }
    resources
}

fn read(uri: &str, modern: bool) -> Option<ResourceContents> {
    Some(match uri {
        "test://static-text" => {
            ResourceContents::text("This is the content of the static text resource.", uri)
        }
        "test://static-binary" => {
            ResourceContents::blob(TEST_IMAGE_BASE64, uri).with_mime_type("image/png")
        }
        "test://watched-resource" => ResourceContents::text("Watched resource content", uri),
        STATELESS_RESOURCE if modern => {
            ResourceContents::text("Static text content from the stateless draft path.", uri)
        }
        _ => return template_data(uri),
    })
}

/// `test://template/{id}/data`.
fn template_data(uri: &str) -> Option<ResourceContents> {
    let id = uri
        .strip_prefix("test://template/")?
        .strip_suffix("/data")?;
    if id.is_empty() || id.contains('/') {
        return None;
    }
    // Written out to keep the reference's key order (a JSON map here would sort the keys).
    let text = format!(
        r#"{{"id":{},"templateTest":true,"data":{}}}"#,
        json!(id),
        json!(format!("Data for ID: {id}"))
    );
    Some(ResourceContents::text(text, uri).with_mime_type("application/json"))
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_tasks()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(SERVER_NAME, SERVER_VERSION))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let modern = is_modern(&context);
        let tools = self
            .tool_router
            .list_all()
            .into_iter()
            .filter(|tool| modern || !STATELESS_TOOLS.contains(&tool.name.as_ref()))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !is_modern(&context) && STATELESS_TOOLS.contains(&request.name.as_ref()) {
            let message = format!("Tool {} not found", request.name);
            return Err(ErrorData::invalid_params(message, None));
        }
        self.tool_router
            .call(ToolCallContext::new(self, request, context))
            .await
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        self.task_state(&request.task_id)
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.answer_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.cancel(&request.task_id)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts(is_modern(
            &context,
        ))))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name == STATELESS_PROMPT && is_modern(&context) {
            return Ok(context_prompt(request.input_responses.as_ref()));
        }
        let args = request.arguments.unwrap_or_default();
        Ok(GetPromptResult::new(prompt_messages(&request.name, &args)?).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(resources(is_modern(
            &context,
        ))))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let template = ResourceTemplate::new("test://template/{id}/data", "template")
            .with_title("Resource Template")
            .with_description("A resource template with parameter substitution")
            .with_mime_type("application/json");
        Ok(ListResourceTemplatesResult::with_all_items(vec![template]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        match read(&request.uri, is_modern(&context)) {
            Some(contents) => Ok(ReadResourceResult::new(vec![contents]).into()),
            // -32602 with the URI in `data`, as the suite's resource-not-found check wants.
            None => Err(ErrorData::invalid_params(
                format!("Resource {} not found", request.uri),
                Some(json!({"uri": request.uri})),
            )),
        }
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let message = format!("Subscribed to resource: {}", request.uri);
        self.subscriptions.lock().unwrap().insert(request.uri);
        self.log(&context, &message, Some(LOGGER)).await;
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let message = format!("Unsubscribed from resource: {}", request.uri);
        self.subscriptions.lock().unwrap().remove(&request.uri);
        self.log(&context, &message, Some(LOGGER)).await;
        Ok(())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // 2026-07-28 removed the method: a log level travels with each request instead.
        if is_modern(&context) {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                "Method not found",
                None,
            ));
        }
        *self.log_level.lock().unwrap() = Some(request.level);
        let level = json!(request.level);
        let message = format!("Log level set to: {}", level.as_str().unwrap_or_default());
        self.log(&context, &message, Some(LOGGER)).await;
        Ok(())
    }

    async fn complete(
        &self,
        _request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        // The reference has no suggestions either; the suite checks only the answer's shape.
        let none = CompletionInfo::with_all_values(Vec::new()).expect("no values is within limits");
        Ok(CompleteResult::new(none))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.streams.starting.fetch_add(1, Ordering::SeqCst);
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let sink = context.sink().clone();
        let id = sink.id().clone();
        self.streams.sinks.lock().unwrap().push(sink);
        self.streams.starting.fetch_sub(1, Ordering::SeqCst);
        context.cancelled().await;
        self.streams
            .sinks
            .lock()
            .unwrap()
            .retain(|sink| *sink.id() != id);
        Ok(())
    }
}

async fn serve_stdio() -> Result<(), String> {
    match Fixture::new()
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await
    {
        Ok(running) => running.waiting().await.map(drop).map_err(|e| e.to_string()),
        // A 2026-07-28 client never sends `initialize`: rmcp serves its requests all the same and
        // reports the missing handshake when stdin closes, which is a normal end.
        Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(other) => Err(format!("initialization failed: {other}")),
    }
}

fn main() -> ExitCode {
    // A current-thread runtime: the server is tiny and shares two cores with the gateway and
    // the suite.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcpmux-conformance-fixture: tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve_stdio()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("mcpmux-conformance-fixture: {message}");
            ExitCode::FAILURE
        }
    }
}
