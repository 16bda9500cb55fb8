//! A client of `mcpmux serve --http` that speaks JSON-RPC as it is on the wire, for the tests
//! that look at the bytes an answer is made of (the official schema, the audit of refused
//! calls) or time them (one kept-alive connection): a legacy client (a session opened with
//! `initialize`) or a 2026-07-28 one (stateless: every request carries the protocol version,
//! the client and its capabilities in `_meta`, as the official SDKs send them).

use serde_json::{Value, json};

/// The protocol of a 2026-07-28 client.
pub const MODERN: &str = "2026-07-28";

/// One client, on one HTTP/1.1 connection kept alive between its requests.
pub struct RawClient {
    http: reqwest::Client,
    url: String,
    token: String,
    /// The session of a legacy client.
    session: Option<String>,
    modern: bool,
    next: u64,
    /// The notifications that came with the answers, in order.
    pub notifications: Vec<Value>,
}

/// What a client declares: sampling, elicitation and roots, as the SDKs' clients do.
fn capabilities() -> Value {
    json!({"sampling": {}, "elicitation": {"form": {}}, "roots": {"listChanged": true}})
}

impl RawClient {
    fn new(url: &str, token: &str, modern: bool) -> RawClient {
        RawClient {
            // One connection, kept: what a client making one call after another does.
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(1)
                .build()
                .unwrap(),
            url: url.to_string(),
            token: token.to_string(),
            session: None,
            modern,
            next: 1,
            notifications: Vec::new(),
        }
    }

    /// A 2026-07-28 client: no session.
    pub fn modern(url: &str, token: &str) -> RawClient {
        RawClient::new(url, token, true)
    }

    /// A legacy client, its session opened (`initialize`, then `notifications/initialized`).
    pub async fn legacy(url: &str, token: &str) -> RawClient {
        let mut client = RawClient::new(url, token, false);
        let params = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities(),
            "clientInfo": {"name": "raw-client", "version": "1"},
        });
        let answer = client.request("initialize", params).await;
        assert!(answer.get("result").is_some(), "initialize: {answer}");
        client.notify("notifications/initialized").await;
        client
    }

    /// Sends `method` with `params`; the JSON-RPC response (`result` or `error`).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let mut params = params;
        if self.modern {
            let meta = params
                .as_object_mut()
                .unwrap()
                .entry("_meta")
                .or_insert_with(|| json!({}));
            meta["io.modelcontextprotocol/protocolVersion"] = json!(MODERN);
            meta["io.modelcontextprotocol/clientInfo"] =
                json!({"name": "raw-client", "version": "1"});
            meta["io.modelcontextprotocol/clientCapabilities"] = capabilities();
        }
        let name = params
            .get("name")
            .or_else(|| params.get("uri"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut request = self.post(body).header("Mcp-Method", method);
        if let (true, Some(name)) = (self.modern, name) {
            request = request.header("Mcp-Name", name);
        }
        let response = request.send().await.unwrap();
        if let Some(session) = response.headers().get("mcp-session-id") {
            self.session = Some(session.to_str().unwrap().to_string());
        }
        let status = response.status();
        let is_sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let text = response.text().await.unwrap();
        assert!(status.is_success(), "{method}: {status}: {text}");
        let messages: Vec<Value> = match is_sse {
            true => text
                .split("\n\n")
                .filter_map(|event| {
                    let data: String = event
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:"))
                        .map(str::trim_start)
                        .collect();
                    serde_json::from_str(&data).ok()
                })
                .collect(),
            false => vec![serde_json::from_str(&text).unwrap()],
        };
        let mut answer = None;
        for message in messages {
            if message.get("id") == Some(&json!(id)) {
                answer = Some(message);
            } else {
                self.notifications.push(message);
            }
        }
        answer.unwrap_or_else(|| panic!("{method}: no answer in {text}"))
    }

    /// Sends the notification `method`.
    pub async fn notify(&mut self, method: &str) {
        let body = json!({"jsonrpc": "2.0", "method": method});
        let response = self.post(body).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 202, "{method}");
    }

    fn post(&self, body: Value) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(&self.url)
            .header("Authorization", format!("Bearer {}", self.token))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(body.to_string());
        if self.modern {
            request = request.header("Mcp-Protocol-Version", MODERN);
        }
        if let Some(session) = &self.session {
            request = request.header("Mcp-Session-Id", session);
        }
        request
    }
}
