//! The small MCP server shipped inside the binary (`mcpmux demo-server`), so `mcpmux demo`
//! works with nothing else installed. Built with rmcp's server side, spoken over stdio.

use std::time::Duration;

use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    Implementation, ListResourcesResult, PaginatedRequestParams, ProgressNotificationParam,
    PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, Role, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt, prompt, prompt_handler, prompt_router,
    schemars, tool, tool_handler, tool_router,
};
use serde::Deserialize;

const README: &str = "mcpmux demo server: tools echo, add, countdown; this resource; prompt greet \
                      (its name completes).";

/// What `greet`'s `name` completes from.
const NAMES: &[&str] = &["Ada", "Alan", "Barbara", "Grace", "Linus", "Margaret"];

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// Text to send back.
    text: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: f64,
    b: f64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct CountdownArgs {
    /// Steps to count down, 100 ms each (at most 50).
    steps: u32,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct GreetArgs {
    name: String,
}

#[derive(Clone)]
struct DemoServer {
    tool_router: ToolRouter<Self>,
    prompt_router: PromptRouter<Self>,
}

#[tool_router]
impl DemoServer {
    #[tool(description = "Send the text back unchanged")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }

    #[tool(description = "Add two numbers")]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        (a + b).to_string()
    }

    #[tool(description = "Count down, reporting progress at each step")]
    async fn countdown(
        &self,
        Parameters(CountdownArgs { steps }): Parameters<CountdownArgs>,
        context: RequestContext<RoleServer>,
    ) -> String {
        let steps = steps.min(50);
        let token = context.meta.get_progress_token();
        for done in 1..=steps {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if let Some(token) = &token {
                // The client may be gone; the countdown finishes regardless.
                let _ = context
                    .peer
                    .notify_progress(
                        ProgressNotificationParam::new(token.clone(), f64::from(done))
                            .with_total(f64::from(steps))
                            .with_message(format!("{} left", steps - done)),
                    )
                    .await;
            }
        }
        "liftoff".to_string()
    }
}

#[prompt_router]
impl DemoServer {
    #[prompt(description = "Greet someone by name")]
    async fn greet(
        &self,
        Parameters(GreetArgs { name }): Parameters<GreetArgs>,
    ) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(
            Role::User,
            format!("Say hello to {name}."),
        )]
    }
}

#[tool_handler(router = self.tool_router)]
#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for DemoServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .enable_completions()
                .build(),
        )
        .with_server_info(Implementation::new(
            "mcpmux-demo",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    /// `greet`'s `name` completes from a few names, by what is typed so far.
    async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, ErrorData> {
        let greet =
            matches!(&request.r#ref, rmcp::model::Reference::Prompt(p) if p.name == "greet");
        let values: Vec<String> = if greet && request.argument.name == "name" {
            let typed = request.argument.value.to_lowercase();
            NAMES
                .iter()
                .filter(|n| n.to_lowercase().starts_with(&typed))
                .map(|n| n.to_string())
                .collect()
        } else {
            Vec::new()
        };
        let info = rmcp::model::CompletionInfo::with_all_values(values)
            .map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(rmcp::model::CompleteResult::new(info))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new("demo://readme", "readme").with_mime_type("text/plain"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != "demo://readme" {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        Ok(ReadResourceResult::new(vec![ResourceContents::text(README, &request.uri)]).into())
    }
}

/// Serves the demo over this process's stdin/stdout until the client goes away.
pub async fn run() -> Result<(), String> {
    let server = DemoServer {
        tool_router: DemoServer::tool_router(),
        prompt_router: DemoServer::prompt_router(),
    };
    let running = server
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await
        .map_err(|e| e.to_string())?;
    running.waiting().await.map(drop).map_err(|e| e.to_string())
}
