//! What a client sees of the pool: its tools, prompts and resources under the served names
//! (listed, looked up, or searched and described when the fleet is served through the search
//! tools), and the instructions the gateway gives.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ReadResourceResult, Tool};

use super::{Gateway, ServedTool, convert, to_error_data};
use crate::pool::PromptInfo;
use crate::serve::view::exposure::{Exposure, SCHEMAS_IN_SEARCH, answer};
use crate::serve::view::names::{prompt_names, resource_keys, tool_names, unwrap_uri, wrap_uri};
use crate::tools::ToolInfo;

impl Gateway {
    /// The profile's tools under their served names; remembers the names for calls. Tools
    /// kept to MCP App views are among them (named with the rest, so a name is the same for
    /// every client): each surface keeps them to the clients that render views.
    pub(super) async fn served_tools(&self) -> Result<Vec<(String, ToolInfo)>, ErrorData> {
        let profile = self.profile();
        // A stopped server's tools come from the catalog: a client listing does not start it.
        // Boxed: a listing's future is large, and every request's future (a call's too,
        // which lists when it meets a name it has not seen) is as large as its largest step.
        let listing = self
            .pool
            .list_tools_with(None, crate::pool::ListOptions::known());
        let tools: Vec<ToolInfo> = Box::pin(listing)
            .await
            .map_err(to_error_data)?
            .into_iter()
            .filter(|t| profile.serves(&t.server_name) && (t.for_model() || t.for_apps()))
            .collect();
        let names = if profile.pass_through {
            tools.iter().map(|t| t.name.clone()).collect()
        } else {
            tool_names(&tools, self.max_name_len())
        };
        let served: Vec<(String, ToolInfo)> = names
            .into_iter()
            .zip(tools)
            .filter(|(name, _)| profile.shows(name))
            .collect();
        *self.tools.lock().unwrap() = served
            .iter()
            .map(|(name, t)| {
                let tool = ServedTool {
                    id: t.id.clone(),
                    server: t.server_name.clone(),
                    schema: Arc::new(t.input_schema.parse().unwrap_or_default()),
                    for_model: t.for_model(),
                };
                (name.clone(), Arc::new(tool))
            })
            .collect();
        Ok(served)
    }

    /// The profile's prompts under their served names.
    pub(super) async fn served_prompts(&self) -> Result<Vec<(String, PromptInfo)>, ErrorData> {
        let profile = self.profile();
        let prompts: Vec<PromptInfo> = self
            .pool
            .list_prompts(None)
            .await
            .map_err(to_error_data)?
            .into_iter()
            .filter(|p| profile.serves(&p.server_name))
            .collect();
        let names = if profile.pass_through {
            prompts.iter().map(|p| p.prompt.name.clone()).collect()
        } else {
            prompt_names(&prompts, self.max_name_len())
        };
        Ok(names.into_iter().zip(prompts).collect())
    }

    /// A tool as clients see it: its served name, the profile's override of its text, and its
    /// MCP App view under the address served here when `views` (the resource keys, by server
    /// id) is given (the client renders views), else none.
    pub(super) fn served_tool(
        &self,
        name: String,
        mut tool: ToolInfo,
        views: Option<&HashMap<String, String>>,
    ) -> Result<Tool, ErrorData> {
        match views {
            Some(keys) => {
                let view = tool.view_uri();
                if let (Some(uri), Some(key)) = (view, keys.get(&tool.server_id)) {
                    tool.move_view(&self.wrap(key, &uri));
                }
                // A host of views learns the name the view's code calls the tool by.
                if tool.name != name && tool.for_apps() {
                    tool.set_own_name(tool.name.clone());
                }
            }
            None => tool.drop_view(),
        }
        let overrides = self.profile().tools.get(&name).cloned();
        let mut served = served_tool(name, tool)?;
        if let Some(o) = overrides {
            if let Some(description) = o.description {
                served.description = Some(description.into());
            }
            if let Some(title) = o.title {
                served.title = Some(title);
            }
        }
        Ok(served)
    }

    /// The pool id of the served tool `name`, listing again when it is not known yet (a client
    /// may call without listing: a 2026-07-28 client on another replica listed, or a client
    /// that remembers names across restarts).
    pub(super) async fn pool_tool(
        &self,
        name: &str,
        fresh: bool,
    ) -> Result<Option<Arc<ServedTool>>, ErrorData> {
        if !fresh && let Some(tool) = self.tools.lock().unwrap().get(name) {
            return Ok(Some(tool.clone()));
        }
        self.served_tools().await?;
        Ok(self.tools.lock().unwrap().get(name).cloned())
    }

    /// The error of a call of a tool this client is not shown, offering the served names it
    /// may have meant among those it is shown (`views`: also the tools kept to views).
    pub(super) fn unknown_tool(&self, name: &str, views: bool) -> ErrorData {
        let meant = {
            let tools = self.tools.lock().unwrap();
            let shown = tools
                .iter()
                .filter(|(_, t)| t.for_model || views)
                .map(|(served, _)| (served.as_str(), served.as_str()));
            crate::tools::suggest::meant(name, shown)
        };
        let hint = crate::tools::suggest::offer(&meant)
            .map(|h| format!(" ({h})"))
            .unwrap_or_default();
        ErrorData::invalid_params(
            format!("unknown tool '{name}'{hint}: tools/list gives the names"),
            None,
        )
    }

    /// The served name of a tool an MCP App's view calls by its server's own name (a view
    /// knows its tools by those, and its host passes the call on as it is): for a client that
    /// renders views and a name that is not served, the one tool for apps of that name. Two
    /// servers' views with a tool of the name are told apart only by the served names.
    pub(super) async fn view_tool(
        &self,
        name: &str,
        views: bool,
    ) -> Result<Option<String>, ErrorData> {
        if !views || self.tools.lock().unwrap().contains_key(name) {
            return Ok(None);
        }
        // One listing answers both questions: is `name` served after all (a client may call
        // before it lists), and else, which view's tool has it as its own name.
        let served = self.served_tools().await?;
        if served.iter().any(|(served, _)| served == name) {
            return Ok(None);
        }
        let named: Vec<&String> = served
            .iter()
            .filter(|(_, t)| t.name == name && t.for_apps())
            .map(|(served, _)| served)
            .collect();
        match named.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some((*one).clone())),
            several => Err(ErrorData::invalid_params(
                format!(
                    "tool '{name}' is a tool of several servers' views ({}): call it by its \
                     served name, or serve the view's server alone (a passThrough profile)",
                    several
                        .iter()
                        .map(|n| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            )),
        }
    }

    /// The served prompt `name`: its server's id and its own name.
    pub(super) async fn find_prompt(&self, name: &str) -> Result<(String, String), ErrorData> {
        self.served_prompts()
            .await?
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| (p.server_id, p.prompt.name))
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("no prompt named '{name}': prompts/list gives the names"),
                    None,
                )
            })
    }

    /// Resource keys of the profile's servers, by server id.
    pub(super) fn resource_keys(&self) -> HashMap<String, String> {
        let states = self.pool.server_states();
        resource_keys(
            states
                .iter()
                .filter(|s| self.profile().serves(&s.name))
                .map(|s| (s.id.as_str(), s.name.as_str())),
        )
    }

    /// The items (resources, templates) of the servers clients see, each with its URI as they
    /// see it: `uri` gives an item's server id and its URI to wrap in place.
    pub(super) fn served_uris<T>(
        &self,
        items: Vec<T>,
        uri: impl Fn(&mut T) -> (&str, &mut String),
    ) -> Vec<T> {
        let keys = self.resource_keys();
        items
            .into_iter()
            .filter_map(|mut item| {
                let (server_id, uri) = uri(&mut item);
                let key = keys.get(server_id)?;
                *uri = self.wrap(key, uri);
                Some(item)
            })
            .collect()
    }

    /// A server's resource URI as clients see it: wrapped, or as it is when passed through.
    pub(super) fn wrap(&self, key: &str, uri: &str) -> String {
        if self.profile().pass_through {
            uri.to_string()
        } else {
            wrap_uri(key, uri)
        }
    }

    /// The server id and the server's own URI of a URI a client gives.
    pub(super) fn unwrap(&self, wrapped: &str) -> Result<(String, String), ErrorData> {
        if self.profile().pass_through {
            let server = self.resource_keys().into_keys().next().ok_or_else(|| {
                ErrorData::resource_not_found(
                    format!("no resource {wrapped}: the profile's server is not configured"),
                    None,
                )
            })?;
            return Ok((server, wrapped.to_string()));
        }
        let not_found = || {
            ErrorData::resource_not_found(
                format!(
                    "no resource {wrapped}: resources/list gives URIs of the form \
                     mcpmux:SERVER/URI (ui://mcpmux.SERVER/PATH for an MCP App's view)"
                ),
                None,
            )
        };
        let (key, uri) = unwrap_uri(wrapped).ok_or_else(not_found)?;
        let server = self
            .resource_keys()
            .into_iter()
            .find(|(_, k)| k == key)
            .map(|(id, _)| id)
            .ok_or_else(not_found)?;
        Ok((server, uri))
    }

    /// Every server's instructions, one section each under its name.
    pub(super) fn instructions(&self) -> Option<String> {
        let sections: Vec<String> = self
            .pool
            .server_states()
            .into_iter()
            .filter(|s| self.profile().serves(&s.name))
            .filter_map(|s| {
                let text = s.instructions?;
                let text = text.trim();
                (!text.is_empty()).then(|| format!("## {}\n\n{text}", s.name))
            })
            .collect();
        (!sections.is_empty()).then(|| sections.join("\n\n"))
    }

    /// Whether the client sees the search surface, for a fleet of `tools` tools.
    pub(super) fn searching(&self, tools: usize) -> bool {
        match self.exposure() {
            Exposure::Direct => false,
            Exposure::Search => true,
            Exposure::Auto => tools > self.options.auto_limit,
        }
    }

    pub(super) async fn search(
        &self,
        query: &str,
        limit: Option<usize>,
    ) -> Result<CallToolResult, ErrorData> {
        let hits = self
            .pool
            .search_tools(query, limit)
            .await
            .map_err(to_error_data)?;
        let served = self.served_tools().await?;
        let by_id: HashMap<&str, (&String, &ToolInfo)> = served
            .iter()
            .filter(|(_, t)| t.for_model())
            .map(|(name, t)| (t.id.as_str(), (name, t)))
            .collect();
        let tools: Vec<serde_json::Value> = hits
            .iter()
            .filter_map(|hit| by_id.get(hit.id.as_str()))
            .enumerate()
            .map(|(rank, (name, tool))| {
                let mut hit = serde_json::json!({
                    "name": name,
                    "server": tool.server_name,
                    "description": tool.description.clone().unwrap_or_default(),
                });
                if rank < SCHEMAS_IN_SEARCH {
                    hit["inputSchema"] = tool.input_schema.to_value();
                }
                hit
            })
            .collect();
        Ok(answer(serde_json::json!({ "tools": tools })))
    }

    pub(super) async fn describe(&self, names: &[String]) -> Result<CallToolResult, ErrorData> {
        let served = self.served_tools().await?;
        let mut tools = Vec::new();
        let mut unknown = Vec::new();
        for name in names {
            match served.iter().find(|(n, t)| n == name && t.for_model()) {
                Some((n, t)) => tools.push(
                    serde_json::to_value(self.served_tool(n.clone(), t.clone(), None)?)
                        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
                ),
                None => unknown.push(name.clone()),
            }
        }
        let mut value = serde_json::json!({ "tools": tools });
        if !unknown.is_empty() {
            // What each unknown name may have meant, so a model corrects itself in one step.
            let shown = || {
                served
                    .iter()
                    .filter(|(_, t)| t.for_model())
                    .map(|(n, t)| (n.as_str(), t.name.as_str()))
            };
            let meant: serde_json::Map<String, serde_json::Value> = unknown
                .iter()
                .map(|name| (name, crate::tools::suggest::meant(name, shown())))
                .filter(|(_, meant)| !meant.is_empty())
                .map(|(name, meant)| (name.clone(), meant.into()))
                .collect();
            value["unknown"] = unknown.into();
            if !meant.is_empty() {
                value["didYouMean"] = meant.into();
            }
        }
        Ok(answer(value))
    }
}

pub(super) fn served_tool(name: String, tool: ToolInfo) -> Result<Tool, ErrorData> {
    let mut value =
        serde_json::to_value(&tool).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let object = value.as_object_mut().expect("a tool is an object");
    for key in ["id", "serverId", "serverName"] {
        object.remove(key);
    }
    object.insert("name".into(), name.into());
    convert(&value)
}

/// A result whose contents name `uri` wherever the server's own URI stood.
pub(super) fn rewrap_contents(
    result: ReadResourceResult,
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    let mut value = serde_json::to_value(&result)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    if let Some(contents) = value.get_mut("contents").and_then(|c| c.as_array_mut()) {
        for item in contents {
            if let Some(object) = item.as_object_mut() {
                object.insert("uri".into(), uri.into());
            }
        }
    }
    convert(&value)
}
