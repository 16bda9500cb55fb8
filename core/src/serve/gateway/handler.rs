//! rmcp's `ServerHandler` for the gateway: each MCP request a client sends, answered by the
//! gateway's own parts.

#[allow(
    deprecated,
    reason = "server logging (SEP-2577) is deprecated, but clients before 2026-07-28 ask for it"
)]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    Prompt, ReadResourceRequestParams, ReadResourceResponse, Reference, Resource, ResourceTemplate,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::{
    Gateway,
    call::{not_a_call, relayed},
    client::{owner, renders_views},
    completed,
    served::rewrap_contents,
    to_error_data,
};
use crate::pool::CallRound;
use crate::serve::relay::subscriptions::Subscriber;
use crate::serve::view::exposure::search_surface;

impl ServerHandler for Gateway {
    #[allow(deprecated, reason = "logging: see `set_level`")]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_completions()
            .enable_logging()
            .enable_tasks()
            .build();
        let mut info = ServerConfig::new(capabilities).with_server_info(Implementation::new(
            self.options.server_name.clone(),
            env!("CARGO_PKG_VERSION"),
        ));
        if let Some(text) = self.instructions() {
            info = info.with_instructions(text);
        }
        info
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = crate::serve::relay::changes::accepted(requested);
        // The resources this gateway can name a server for.
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|uri| self.unwrap(uri).is_ok())
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let uris = context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        let to = Subscriber::Stream(context.sink().clone());
        let mut failed = None;
        for uri in uris {
            let Ok(target) = self.unwrap(&uri) else {
                continue;
            };
            let added = self
                .subscriptions
                .add(self.client, target, uri, to.clone())
                .await;
            if let Err(e) = added {
                failed = Some(to_error_data(e));
                break;
            }
        }
        if failed.is_none() {
            crate::serve::relay::changes::stream(self.pool.clone(), context).await;
        }
        self.subscriptions.remove_client(self.client).await;
        failed.map_or(Ok(()), Err)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let target = self.unwrap(&request.uri)?;
        self.subscriptions
            .add(
                self.client,
                target,
                request.uri,
                Subscriber::Session(context.peer),
            )
            .await
            .map_err(to_error_data)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let target = self.unwrap(&request.uri)?;
        self.subscriptions
            .remove(self.client, target)
            .await
            .map_err(to_error_data)
    }

    #[allow(
        deprecated,
        reason = "server logging (SEP-2577) is deprecated, but clients before 2026-07-28 ask for it"
    )]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let level = crate::serve::relay::logging::from_mcp(request.level)
            .ok_or_else(|| ErrorData::invalid_params("an unknown log level", None))?;
        let first = self.log_level.set(level);
        Box::pin(self.pool.hear_logs_at(level)).await;
        if first {
            let relay = crate::serve::relay::logging::relay(
                self.pool.clone(),
                self.pool.events(),
                context.peer,
                self.log_level.clone(),
                self.server_filter(),
                std::future::pending(),
            );
            tokio::spawn(relay);
        }
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        crate::serve::relay::changes::watch(self.pool.clone(), context.peer);
    }

    // What rmcp's HTTP front checks a call's `Mcp-Param-*` headers against (SEP-2243): the
    // schema of a tool as last listed; a tool not listed yet goes unchecked.
    fn get_tool(&self, name: &str) -> Option<Tool> {
        let schema = self.tools.lock().unwrap().get(name)?.schema.clone();
        Some(Tool::new(name.to_string(), "", schema))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let served = self.served_tools().await?;
        if self.searching(served.iter().filter(|(_, t)| t.for_model()).count()) {
            return Ok(ListToolsResult::with_all_items(search_surface()));
        }
        // A client that renders MCP Apps is shown the views, and the tools kept to them.
        let views = renders_views(&context).then(|| self.resource_keys());
        let tools = served
            .into_iter()
            .filter(|(_, tool)| tool.for_model() || views.is_some())
            .map(|(name, tool)| self.served_tool(name, tool, views.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // A 2026-07-28 client has no session to be asked on: it is asked in rounds.
        let round = self.round_of(
            &context,
            format_args!("tool {}", request.name),
            request.input_responses,
            request.request_state.as_deref(),
        )?;
        self.call_round(&request.name, request.arguments, &context, round)
            .await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let listed = self.pool.list_resources(None).await;
        let served = self.served_uris(listed.map_err(to_error_data)?, |r| {
            (&r.server_id, &mut r.resource.uri)
        });
        let resources: Vec<Resource> = served.into_iter().map(|r| r.resource).collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let listed = self.pool.list_resource_templates(None).await;
        let served = self.served_uris(listed.map_err(to_error_data)?, |t| {
            (&t.server_id, &mut t.template.uri_template)
        });
        let templates: Vec<ResourceTemplate> = served.into_iter().map(|t| t.template).collect();
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let (server, uri) = self.unwrap(&request.uri)?;
        let asked_as = format!("resource {}", request.uri);
        let round = self.round_of(
            &context,
            format_args!("{asked_as}"),
            request.input_responses,
            request.request_state.as_deref(),
        )?;
        let pool = self.pool_for(&context);
        let result = match round {
            Some(round) => {
                let round = round.input;
                pool.read_resource_round(&server, &uri, round).await
            }
            None => pool.read_resource(&server, &uri).await.map(CallRound::Done),
        };
        match result.map_err(to_error_data)? {
            CallRound::Done(result) => {
                let mut result = rewrap_contents(result, &request.uri)?;
                completed(&mut result.result_type);
                Ok(result.into())
            }
            CallRound::InputRequired(asked) => {
                crate::serve::relay::input_rounds::ask_client(&self.seal, &asked_as, asked)
                    .map(Into::into)
            }
            CallRound::Task(_) => Err(not_a_call()),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let served = self
            .served_prompts()
            .await?
            .into_iter()
            .map(|(name, p)| {
                let mut prompt: Prompt = p.prompt;
                prompt.name = name;
                prompt
            })
            .collect();
        Ok(ListPromptsResult::with_all_items(served))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let (server, prompt) = self.find_prompt(&request.name).await?;
        let asked_as = format!("prompt {}", request.name);
        let round = self.round_of(
            &context,
            format_args!("{asked_as}"),
            request.input_responses,
            request.request_state.as_deref(),
        )?;
        let (pool, arguments) = (&self.pool_for(&context), request.arguments);
        let result = match round {
            Some(round) => {
                let round = round.input;
                pool.get_prompt_round(&server, &prompt, arguments, round)
                    .await
            }
            None => pool
                .get_prompt(&server, &prompt, arguments)
                .await
                .map(CallRound::Done),
        };
        match result.map_err(to_error_data)? {
            CallRound::Done(mut result) => {
                completed(&mut result.result_type);
                Ok(result.into())
            }
            CallRound::InputRequired(asked) => {
                crate::serve::relay::input_rounds::ask_client(&self.seal, &asked_as, asked)
                    .map(Into::into)
            }
            CallRound::Task(_) => Err(not_a_call()),
        }
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        let task = crate::serve::relay::tasks::from_client(
            &self.seal,
            &request.task_id,
            owner(&context).as_deref(),
        )?;
        let got = self
            .pool_for(&context)
            .get_task(&task.server, &task.id)
            .await
            .map_err(relayed)?;
        Ok(crate::serve::relay::tasks::detailed_to_client(
            got,
            &request.task_id,
        ))
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let task = crate::serve::relay::tasks::from_client(
            &self.seal,
            &request.task_id,
            owner(&context).as_deref(),
        )?;
        self.pool_for(&context)
            .update_task(&task.server, &task.id, request.input_responses)
            .await
            .map_err(relayed)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let task = crate::serve::relay::tasks::from_client(
            &self.seal,
            &request.task_id,
            owner(&context).as_deref(),
        )?;
        self.pool_for(&context)
            .cancel_task(&task.server, &task.id)
            .await
            .map_err(relayed)
    }

    async fn complete(
        &self,
        mut request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let server = match &mut request.r#ref {
            Reference::Prompt(p) => {
                let (server, name) = self.find_prompt(&p.name).await?;
                p.name = name;
                server
            }
            Reference::Resource(r) => {
                let (server, uri) = self.unwrap(&r.uri)?;
                r.uri = uri;
                server
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("a completion reference mcpmux does not know: {other:?}"),
                    None,
                ));
            }
        };
        let completion = self
            .pool_for(&context)
            .complete(&server, request)
            .await
            .map_err(to_error_data)?;
        Ok(CompleteResult::new(completion))
    }
}
