//! The host's end of one rendered MCP App view: the view speaks JSON-RPC over `postMessage`
//! (`ui/initialize`, then `tools/call`, `resources/read`, log messages, and requests only the
//! host can decide), and the host must answer in the extension's terms and tell the view the
//! tool's input and result once it is initialized. [`AppBridge`] does all of it but the
//! carrying: the host passes each message from the frame to [`AppBridge::handle`] and posts
//! back what comes out, so an Electron main process, a C host and a Python UI answer a view
//! alike.

use std::sync::Mutex;

use rmcp::model::CallToolResult;
use serde::Serialize;
use serde_json::{Value, json};

use crate::error::{Error, ErrorKind};
use crate::events::Event;
use crate::pool::ext::apps::AppView;
use crate::pool::{CallOptions, Pool};
use crate::shared_json::SharedJson;

/// The revision of the extension this host speaks to views.
pub const APPS_PROTOCOL_VERSION: &str = "2026-01-26";

/// What the host does after handing the bridge one message from the view.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppBridgeOutput {
    /// Messages to post to the view, in order (a reply, then notifications it is now due).
    pub post: Vec<Value>,
    /// A message only the host can act on, as the view sent it: `ui/open-link`,
    /// `ui/message`, `ui/update-model-context`, `ui/request-display-mode` (requests: the host
    /// posts the reply, e.g. made with [`AppBridge::reply`]) and `ui/notifications/size-changed`
    /// (resize the frame).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<Value>,
}

/// What the view has been told, and what it is still due.
#[derive(Default)]
struct Progress {
    initialized: bool,
    /// `ui/notifications/tool-input`, until posted.
    input: Option<Value>,
    /// `ui/notifications/tool-result` or `-cancelled`, until posted (after the input).
    outcome: Option<Value>,
}

/// One view's bridge to the pool (see the module's documentation).
pub struct AppBridge {
    pool: Pool,
    view: AppView,
    host_context: Value,
    progress: Mutex<Progress>,
}

impl Pool {
    /// The bridge of a view being rendered. `host_context` is what the host tells views of
    /// itself in `ui/initialize` (`theme`, `displayMode`, `containerDimensions`, `locale`…;
    /// `{}` for none); the bridge adds the tool's description.
    pub fn app_bridge(&self, view: AppView, host_context: Value) -> AppBridge {
        AppBridge {
            pool: self.clone(),
            view,
            host_context,
            progress: Mutex::default(),
        }
    }
}

impl AppBridge {
    /// The view this bridge serves.
    pub fn view(&self) -> &AppView {
        &self.view
    }

    /// The tool's arguments, for the view: the messages to post now (none until the view is
    /// initialized; they come out of `handle` then).
    pub fn tool_input(&self, arguments: Value) -> Vec<Value> {
        let message = notification(
            "ui/notifications/tool-input",
            json!({ "arguments": arguments }),
        );
        self.due(|p| p.input = Some(message))
    }

    /// The tool's result, for the view (after its input).
    pub fn tool_result(&self, result: &CallToolResult) -> Vec<Value> {
        let params = serde_json::to_value(result).unwrap_or_default();
        let message = notification("ui/notifications/tool-result", params);
        self.due(|p| p.outcome = Some(message))
    }

    /// The tool's call did not finish (cancelled, failed to start), for the view.
    pub fn tool_cancelled(&self, reason: &str) -> Vec<Value> {
        let message = notification(
            "ui/notifications/tool-cancelled",
            json!({ "reason": reason }),
        );
        self.due(|p| p.outcome = Some(message))
    }

    /// A reply to request `id` of the view (what the host posts after acting on a request
    /// `handle` gave it): `Ok(result)` or `Err(message)`. An `id` no view request has (one
    /// that is not a string or a number) is an `invalid_argument` error: a view would drop
    /// such a reply and wait for its answer for ever.
    pub fn reply(
        id: &Value,
        answer: std::result::Result<Value, String>,
    ) -> crate::error::Result<Value> {
        if !(id.is_string() || id.is_number()) {
            return Err(Error::invalid(format!(
                "a reply's id must be the view request's id (a string or a number), not {id}"
            )));
        }
        Ok(match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(message) => error_reply(id, -32000, &message),
        })
    }

    /// One message from the view (a JSON-RPC request or notification): its answer and what
    /// else to do. A message that is not JSON-RPC is answered with an error when it has an id,
    /// and dropped otherwise (a frame may post other things).
    pub async fn handle(&self, message: Value) -> AppBridgeOutput {
        let id = message.get("id").filter(|id| !id.is_null()).cloned();
        let method = message.get("method").and_then(Value::as_str).unwrap_or("");
        let params = message.get("params").cloned().unwrap_or(json!({}));
        let Some(id) = id else {
            return self.notified(method, &params, &message);
        };
        let answer = match method {
            "ui/initialize" => Ok(self.initialize_result()),
            "ping" => Ok(json!({})),
            "tools/call" => self.call(&params).await,
            "resources/read" => self.read(&params).await,
            "ui/open-link"
            | "ui/message"
            | "ui/update-model-context"
            | "ui/request-display-mode" => {
                return AppBridgeOutput {
                    post: Vec::new(),
                    host: Some(message),
                };
            }
            "" => Err((-32600, "not a JSON-RPC request: no method".to_owned())),
            other => Err((-32601, format!("method not found: {other}"))),
        };
        let reply = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, text)) => error_reply(&id, code, &text),
        };
        AppBridgeOutput {
            post: vec![reply],
            host: None,
        }
    }

    /// A notification from the view.
    fn notified(&self, method: &str, params: &Value, message: &Value) -> AppBridgeOutput {
        match method {
            "ui/notifications/initialized" => AppBridgeOutput {
                post: self.due(|p| p.initialized = true),
                host: None,
            },
            "notifications/message" => {
                self.log(params);
                AppBridgeOutput::default()
            }
            "ui/notifications/size-changed" => AppBridgeOutput {
                post: Vec::new(),
                host: Some(message.clone()),
            },
            _ => AppBridgeOutput::default(),
        }
    }

    /// Changes what the view is due, and takes what can be posted now: nothing before it is
    /// initialized, the input first, the outcome only after the input.
    fn due(&self, change: impl FnOnce(&mut Progress)) -> Vec<Value> {
        let mut p = self.progress.lock().unwrap();
        change(&mut p);
        if !p.initialized {
            return Vec::new();
        }
        let mut out = Vec::new();
        if let Some(input) = p.input.take() {
            out.push(input);
        }
        // An input already posted leaves `input` empty: the outcome may follow.
        if p.input.is_none()
            && let Some(outcome) = p.outcome.take()
        {
            out.push(outcome);
        }
        out
    }

    /// The answer to `ui/initialize`: what the host offers the view, and its context.
    fn initialize_result(&self) -> Value {
        let view = &self.view;
        let granted: serde_json::Map<String, Value> = [
            ("camera", view.permissions.camera),
            ("microphone", view.permissions.microphone),
            ("geolocation", view.permissions.geolocation),
            ("clipboardWrite", view.permissions.clipboard_write),
        ]
        .into_iter()
        .filter(|(_, asked)| *asked)
        .map(|(name, _)| (name.to_owned(), json!({})))
        .collect();
        let mut context = match &self.host_context {
            Value::Object(map) => map.clone(),
            _ => serde_json::Map::new(),
        };
        context.insert("toolInfo".into(), json!({ "tool": tool_as_mcp(view) }));
        json!({
            "protocolVersion": APPS_PROTOCOL_VERSION,
            "hostCapabilities": {
                "serverTools": {},
                "serverResources": {},
                "logging": {},
                "sandbox": {"permissions": granted, "csp": view.csp},
            },
            "hostInfo": {
                "name": self.pool.options().client_name,
                "version": env!("CARGO_PKG_VERSION"),
            },
            "hostContext": context,
        })
    }

    async fn call(&self, params: &Value) -> std::result::Result<Value, (i64, String)> {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err((-32602, "tools/call needs params.name".into()));
        };
        let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
        let result = self
            .pool
            .app_call(&self.view, name, arguments, CallOptions::default())
            .await
            .map_err(refusal)?;
        serde_json::to_value(result).map_err(|e| (-32603, e.to_string()))
    }

    async fn read(&self, params: &Value) -> std::result::Result<Value, (i64, String)> {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return Err((-32602, "resources/read needs params.uri".into()));
        };
        let read = self
            .pool
            .app_read_resource(&self.view, uri)
            .await
            .map_err(refusal)?;
        serde_json::to_value(read).map_err(|e| (-32603, e.to_string()))
    }

    /// A view's log message, as a `log` event of its server (source `app`).
    fn log(&self, params: &Value) {
        let level = params
            .get("level")
            .and_then(Value::as_str)
            .unwrap_or("info");
        let message = match params.get("data") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        };
        self.pool.emit(Event::Log {
            server_id: self.view.server_id.clone(),
            level: level.to_owned(),
            source: "app".into(),
            message,
        });
    }
}

/// The tool as MCP describes it (its server's own name), for the view's host context.
fn tool_as_mcp(view: &AppView) -> Value {
    let tool = &view.tool;
    let mut out = json!({"name": tool.name, "inputSchema": tool.input_schema});
    for (key, value) in [
        ("title", tool.title.clone().map(Value::String)),
        ("description", tool.description.clone().map(Value::String)),
        (
            "outputSchema",
            tool.output_schema.as_ref().map(SharedJson::to_value),
        ),
        (
            "annotations",
            tool.annotations.as_ref().map(SharedJson::to_value),
        ),
        ("_meta", tool.meta.as_ref().map(SharedJson::to_value)),
    ] {
        if let Some(value) = value {
            out[key] = value;
        }
    }
    out
}

fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

fn error_reply(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// A refused or failed request of the view, as a JSON-RPC error: the caller's mistakes are
/// invalid params, everything else the server's or the pool's.
fn refusal(e: Error) -> (i64, String) {
    let code = match e.kind() {
        ErrorKind::InvalidArgument | ErrorKind::NotFound => -32602,
        _ => -32603,
    };
    (code, e.to_string())
}
