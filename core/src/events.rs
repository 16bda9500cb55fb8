//! Pool events (Elftia's names) and the bus that delivers them to any number of subscribers.

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

/// Connection state of one server (Elftia's state machine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ConnectionState {
    Disconnected,
    Connecting,
    Connected,
    Error,
}

/// Finer steps inside `connecting` and why a connection left `connected` (the llama.cpp web
/// UI's phases).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionPhase {
    /// Spawning the child process or opening the HTTP session.
    Transport,
    /// `initialize` or `server/discover`.
    Handshake,
    Ready,
    /// Waiting before the next reconnect attempt.
    Backoff,
    /// Closed on purpose (disconnect, update, shutdown).
    Closed,
    /// The transport ended without being asked to.
    Lost,
    /// A health check failed.
    Unhealthy,
    Failed,
}

pub use crate::log_level::LogLevel;

/// Something that happened in the pool. Serialized with a `type` tag, fields in camelCase.
/// No event ever carries an env value, a header value or a token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum Event {
    #[serde(rename = "server:connected", rename_all = "camelCase")]
    ServerConnected {
        server_id: String,
        server_name: String,
        protocol_version: String,
    },
    #[serde(rename = "connection:state", rename_all = "camelCase")]
    ConnectionState {
        server_id: String,
        server_name: String,
        state: ConnectionState,
        phase: ConnectionPhase,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// Reconnect attempt number, when reconnecting.
        #[serde(skip_serializing_if = "Option::is_none")]
        attempt: Option<u32>,
    },
    #[serde(rename = "servers:changed")]
    ServersChanged,
    /// A server was saved waiting for the user's approval (imported from another host's
    /// file): what running it would do, for the host to show before `approve_server`.
    #[serde(rename = "server:pending", rename_all = "camelCase")]
    ServerPending {
        server_id: String,
        server_name: String,
        consent: Box<crate::config::consent::Consent>,
    },
    #[serde(rename = "tool:called", rename_all = "camelCase")]
    ToolCalled {
        server_id: String,
        tool_name: String,
        tool_id: String,
        duration_ms: u64,
        success: bool,
    },
    #[serde(rename = "tools:changed", rename_all = "camelCase")]
    ToolsChanged { server_id: String },
    /// The server's prompt list changed (`notifications/prompts/list_changed`).
    #[serde(rename = "prompts:changed", rename_all = "camelCase")]
    PromptsChanged { server_id: String },
    /// The server's resource list changed (`notifications/resources/list_changed`).
    #[serde(rename = "resources:changed", rename_all = "camelCase")]
    ResourcesChanged { server_id: String },
    #[serde(rename = "resource:updated", rename_all = "camelCase")]
    ResourceUpdated { server_id: String, uri: String },
    /// The user finished what a URL elicitation asked of them (the server's
    /// `notifications/elicitation/complete`): a request refused with
    /// `url_elicitation_required` for it can be retried now.
    #[serde(rename = "elicitation:complete", rename_all = "camelCase")]
    ElicitationComplete {
        server_id: String,
        elicitation_id: String,
    },
    #[serde(rename = "progress", rename_all = "camelCase")]
    Progress {
        server_id: String,
        progress_token: serde_json::Value,
        progress: f64,
        #[serde(skip_serializing_if = "Option::is_none")]
        total: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// A widget was put on the canvas (`widget_display`).
    #[serde(rename = "widget", rename_all = "camelCase")]
    Widget {
        id: String,
        name: String,
        params: serde_json::Value,
    },
    /// An agent made a model request and got its answer (tokens are this turn's).
    #[serde(rename = "agent:turn", rename_all = "camelCase")]
    AgentTurn {
        run_id: String,
        iteration: usize,
        input_tokens: u64,
        output_tokens: u64,
        /// How many tools the model asked for in this turn.
        tool_uses: usize,
    },
    /// An agent is about to run a tool the model asked for.
    #[serde(rename = "agent:tool_use", rename_all = "camelCase")]
    AgentToolUse {
        run_id: String,
        call_id: String,
        tool_id: String,
        arguments: serde_json::Value,
    },
    /// A tool of an agent run answered (or was denied, or failed).
    #[serde(rename = "agent:tool_result", rename_all = "camelCase")]
    AgentToolResult {
        run_id: String,
        call_id: String,
        tool_id: String,
        is_error: bool,
        /// The first characters of the result as the model reads it.
        preview: String,
    },
    /// A server runs a tool call as a task (the tasks extension), and the pool follows it:
    /// sent when the task is announced and whenever its status changes (`working`,
    /// `input_required`, then `completed`, `failed` or `cancelled`).
    #[serde(rename = "task:status", rename_all = "camelCase")]
    TaskStatus {
        server_id: String,
        /// The tool's own name on its server.
        tool_name: String,
        /// The server's id of the task.
        task_id: String,
        status: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        status_message: Option<String>,
    },
    /// A notification from a server that mcpmux has no meaning for (an extension's), as it
    /// came.
    #[serde(rename = "notification", rename_all = "camelCase")]
    Notification {
        server_id: String,
        method: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        params: Option<serde_json::Value>,
    },
    /// Server log output: `notifications/message`, stderr of stdio servers, or a transport fault.
    #[serde(rename = "log", rename_all = "camelCase")]
    Log {
        server_id: String,
        level: String,
        /// `notification`, `stderr`, `transport`, or `app` (an MCP App view's own line).
        source: String,
        message: String,
    },
}

/// Every event name, as [`Event::name`] gives them.
pub const EVENT_NAMES: &[&str] = &[
    "server:connected",
    "connection:state",
    "servers:changed",
    "server:pending",
    "tool:called",
    "tools:changed",
    "prompts:changed",
    "resources:changed",
    "resource:updated",
    "elicitation:complete",
    "notification",
    "progress",
    "log",
    "widget",
    "agent:turn",
    "agent:tool_use",
    "agent:tool_result",
    "task:status",
];

impl Event {
    /// The event's name as used by `on(name, ...)` in the bindings.
    pub fn name(&self) -> &'static str {
        match self {
            Event::ServerConnected { .. } => "server:connected",
            Event::ConnectionState { .. } => "connection:state",
            Event::ServersChanged => "servers:changed",
            Event::ServerPending { .. } => "server:pending",
            Event::ToolCalled { .. } => "tool:called",
            Event::ToolsChanged { .. } => "tools:changed",
            Event::PromptsChanged { .. } => "prompts:changed",
            Event::ResourcesChanged { .. } => "resources:changed",
            Event::ResourceUpdated { .. } => "resource:updated",
            Event::ElicitationComplete { .. } => "elicitation:complete",
            Event::Notification { .. } => "notification",
            Event::Progress { .. } => "progress",
            Event::Log { .. } => "log",
            Event::Widget { .. } => "widget",
            Event::AgentTurn { .. } => "agent:turn",
            Event::AgentToolUse { .. } => "agent:tool_use",
            Event::AgentToolResult { .. } => "agent:tool_result",
            Event::TaskStatus { .. } => "task:status",
        }
    }

    /// Whether the event changes what a list of the pool's (tools, prompts, resources) holds.
    pub fn changes_lists(&self) -> bool {
        matches!(
            self,
            Event::ToolsChanged { .. }
                | Event::PromptsChanged { .. }
                | Event::ResourcesChanged { .. }
                | Event::ServersChanged
        )
    }
}

/// Fan-out of events; emitting never blocks and never fails, even with no subscriber.
#[derive(Debug, Clone)]
pub struct EventBus {
    tx: broadcast::Sender<Event>,
    /// The list changes alone, for those who wait on nothing else (a served client's
    /// `list_changed`): they are not woken by every call.
    lists: broadcast::Sender<Event>,
}

/// A subscription to pool events.
pub struct EventReceiver {
    rx: broadcast::Receiver<Event>,
}

impl EventBus {
    pub fn new(capacity: usize) -> Self {
        EventBus {
            tx: broadcast::channel(capacity.max(16)).0,
            lists: broadcast::channel(capacity.max(16)).0,
        }
    }

    pub fn emit(&self, event: Event) {
        tracing::trace!(event = event.name(), "event");
        if event.changes_lists() && self.lists.receiver_count() > 0 {
            let _ = self.lists.send(event.clone());
        }
        let _ = self.tx.send(event);
    }

    /// Whether anyone subscribes now (lets the per-call path skip even timing itself).
    pub fn listening(&self) -> bool {
        self.tx.receiver_count() > 0
    }

    /// Emits the event `make` builds, building it only when someone listens: events on the
    /// per-call path would otherwise cost allocations on every call.
    pub fn emit_with(&self, make: impl FnOnce() -> Event) {
        if self.tx.receiver_count() > 0 {
            self.emit(make());
        }
    }

    pub fn subscribe(&self) -> EventReceiver {
        EventReceiver {
            rx: self.tx.subscribe(),
        }
    }

    /// A subscription to the events that change a list ([`Event::changes_lists`]) only.
    pub fn subscribe_lists(&self) -> EventReceiver {
        EventReceiver {
            rx: self.lists.subscribe(),
        }
    }
}

impl EventReceiver {
    /// The next event, or `None` once the pool is gone. A subscriber too slow to keep up skips
    /// the events it missed rather than stalling the pool.
    pub async fn recv(&mut self) -> Option<Event> {
        loop {
            match self.rx.recv().await {
                Ok(e) => return Some(e),
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "event subscriber lagged");
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// The next event if one is waiting.
    pub fn try_recv(&mut self) -> Option<Event> {
        loop {
            match self.rx.try_recv() {
                Ok(e) => return Some(e),
                Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
                Err(_) => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_subscriber_hears_list_changes_only_and_does_not_make_calls_emit() {
        let bus = EventBus::new(16);
        let mut lists = bus.subscribe_lists();
        assert!(
            !bus.listening(),
            "calls would build their events for nobody"
        );
        bus.emit(Event::ToolCalled {
            server_id: "s".into(),
            tool_name: "t".into(),
            tool_id: "mcp__s__t".into(),
            duration_ms: 1,
            success: true,
        });
        bus.emit(Event::ServersChanged);
        bus.emit(Event::ToolsChanged {
            server_id: "s".into(),
        });
        assert!(matches!(lists.try_recv(), Some(Event::ServersChanged)));
        assert!(matches!(lists.try_recv(), Some(Event::ToolsChanged { .. })));
        assert!(lists.try_recv().is_none());
    }

    #[test]
    fn events_serialize_with_seed_names() {
        let e = Event::ToolCalled {
            server_id: "s".into(),
            tool_name: "echo".into(),
            tool_id: "mcp__a__echo".into(),
            duration_ms: 3,
            success: true,
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["type"], "tool:called");
        assert_eq!(v["serverId"], "s");
        assert_eq!(v["durationMs"], 3);
        assert_eq!(e.name(), "tool:called");
        let v = serde_json::to_value(Event::ServersChanged).unwrap();
        assert_eq!(v, serde_json::json!({"type": "servers:changed"}));
    }

    #[tokio::test]
    async fn every_subscriber_gets_every_event() {
        let bus = EventBus::new(16);
        let mut a = bus.subscribe();
        let mut b = bus.subscribe();
        bus.emit(Event::ServersChanged);
        assert_eq!(a.recv().await, Some(Event::ServersChanged));
        assert_eq!(b.recv().await, Some(Event::ServersChanged));
        drop(bus);
        assert_eq!(a.recv().await, None);
    }
}
