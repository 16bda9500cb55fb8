//! What the HTTP providers share: one client, a model that can be switched while agents hold
//! the provider, requests retried with backoff, and the `Provider` impl itself.

use std::future::Future;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use super::{ChatRequest, Provider, cancellable};
use serde::ser::{Serialize, SerializeSeq, Serializer};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::host::BoxFuture;
use crate::message::Response;

/// The HTTP side of a provider: its client, the model it asks for, how often it retries.
#[derive(Clone)]
pub struct HttpService {
    name: &'static str,
    client: reqwest::Client,
    model: Arc<RwLock<String>>,
    max_retries: u32,
}

impl HttpService {
    pub(crate) fn new(name: &'static str, model: &str, max_retries: u32) -> Result<Self> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| Error::invalid(format!("cannot build the HTTP client: {e}")))?;
        Ok(HttpService {
            name,
            client,
            model: Arc::new(RwLock::new(model.to_string())),
            max_retries,
        })
    }

    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    pub(crate) fn model(&self) -> String {
        self.model.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set_model(&self, model: &str) {
        *self.model.write().unwrap_or_else(|p| p.into_inner()) = model.to_string();
    }

    /// A JSON POST of `body` to `url`, with the API's own headers added by `headers`, sent
    /// with retries.
    pub(crate) async fn post_json(
        &self,
        url: &str,
        body: &[u8],
        headers: impl Fn(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response> {
        self.send_with_retries(|| {
            headers(
                self.client
                    .post(url)
                    .header("content-type", "application/json")
                    .body(body.to_vec()),
            )
        })
        .await
    }

    /// Sends a request, retrying HTTP 429, 5xx and connection failures with backoff
    /// (honouring `Retry-After`, at most 10 s); after `max_retries` the error says what
    /// happened.
    async fn send_with_retries(
        &self,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response> {
        let mut attempt = 0;
        loop {
            let (retryable, wait, failure) = match build().send().await {
                Ok(r) if r.status().is_success() => return Ok(r),
                Ok(r) => {
                    let status = r.status();
                    let wait = retry_after(&r);
                    let text: String = r
                        .text()
                        .await
                        .unwrap_or_default()
                        .chars()
                        .take(300)
                        .collect();
                    (
                        status.as_u16() == 429 || status.is_server_error(),
                        wait,
                        format!("HTTP {status}: {text}"),
                    )
                }
                Err(e) => (
                    e.is_connect() || e.is_timeout(),
                    None,
                    crate::error::with_causes(&e),
                ),
            };
            if !retryable || attempt >= self.max_retries {
                return Err(Error::connection(
                    self.name,
                    match attempt {
                        0 => format!("{failure} (after 1 attempt)"),
                        n => format!("{failure} (after {} attempts)", n + 1),
                    },
                ));
            }
            let backoff = Duration::from_millis(250 << attempt.min(5));
            tokio::time::sleep(wait.unwrap_or(backoff)).await;
            attempt += 1;
        }
    }
}

fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let secs: f64 = response
        .headers()
        .get("retry-after")?
        .to_str()
        .ok()?
        .parse()
        .ok()?;
    Some(Duration::from_secs_f64(secs.clamp(0.0, 10.0)))
}

/// One HTTP API's settings, and how to speak it: what makes an [`HttpProvider`] of it.
pub trait Api: Clone + Send + Sync + 'static {
    /// The provider's name in errors and events (`openai`, ...).
    const NAME: &'static str;
    /// The chat endpoint, under the base URL.
    const PATH: &'static str;
    /// The base URL, the model asked for until the agent switches it, and the retries.
    fn settings(&self) -> (&str, &str, u32);
    /// The request body of one chat request.
    fn body(model: &str, request: &ChatRequest) -> Value;
    /// [`Api::body`] as the bytes sent. The built-in dialects write the tools from their
    /// stored schema text here (`write_body`): an agent's turn offers hundreds of tools,
    /// and a `Value` of the body parsed every schema again on every turn.
    fn body_bytes(model: &str, request: &ChatRequest) -> Vec<u8> {
        serde_json::to_vec(&Self::body(model, request)).unwrap_or_default()
    }
    /// Adds the API's own headers (its key, its version).
    fn headers(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        builder
    }
    /// Reads the (streamed) answer.
    fn read(
        &self,
        response: reqwest::Response,
        request: &ChatRequest,
    ) -> impl Future<Output = Result<Response>> + Send;
}

/// A provider that speaks one HTTP API (OpenAI-compatible, Anthropic, Ollama).
#[derive(Clone)]
pub struct HttpProvider<A: Api> {
    api: A,
    http: HttpService,
}

impl<A: Api> HttpProvider<A> {
    pub fn new(api: A) -> Result<Self> {
        let (_, model, max_retries) = api.settings();
        let http = HttpService::new(A::NAME, model, max_retries)?;
        Ok(HttpProvider { api, http })
    }

    async fn send(&self, request: ChatRequest) -> Result<Response> {
        let (base_url, _, _) = self.api.settings();
        let url = format!("{}{}", base_url.trim_end_matches('/'), A::PATH);
        let body = A::body_bytes(&self.http.model(), &request);
        let response = self
            .http
            .post_json(&url, &body, |b| self.api.headers(b))
            .await?;
        self.api.read(response, &request).await
    }
}

impl<A: Api> Provider for HttpProvider<A> {
    fn name(&self) -> &str {
        self.http.name()
    }

    fn model(&self) -> String {
        self.http.model()
    }

    fn set_model(&self, model: &str) {
        self.http.set_model(model);
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<Result<Response>> {
        let this = self.clone();
        let cancel = request.cancel.clone();
        Box::pin(async move { cancellable(cancel, this.send(request)).await })
    }
}

/// How a dialect writes one tool of a request.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ToolShape {
    /// `{"type": "function", "function": {"name", "description", "parameters"}}` (OpenAI's
    /// Chat Completions, Ollama).
    Function,
    /// `{"name", "description", "input_schema"}` (Anthropic's Messages).
    Anthropic,
}

/// A request's tools in a dialect's shape, serialized from the stored schema text as it is.
pub(crate) struct ToolsJson<'a> {
    pub(crate) shape: ToolShape,
    pub(crate) tools: &'a [crate::pool::ToolDef],
}

#[derive(serde::Serialize)]
struct FunctionTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(serde::Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a crate::shared_json::SharedJson,
}

#[derive(serde::Serialize)]
struct AnthropicTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a crate::shared_json::SharedJson,
}

impl Serialize for ToolsJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.tools.len()))?;
        for t in self.tools {
            match self.shape {
                ToolShape::Function => seq.serialize_element(&FunctionTool {
                    kind: "function",
                    function: Function {
                        name: &t.name,
                        description: &t.description,
                        parameters: &t.input_schema,
                    },
                })?,
                ToolShape::Anthropic => seq.serialize_element(&AnthropicTool {
                    name: &t.name,
                    description: &t.description,
                    input_schema: &t.input_schema,
                })?,
            }
        }
        seq.end()
    }
}

/// [`Api::body`] and [`Api::body_bytes`] of a built-in dialect, from the `body_parts` of the
/// module it is used in. A macro rather than provided methods of `Api`: `Api` is public, and a
/// dialect of the crate's own builds [`BodyParts`], which holds what only the crate sees.
macro_rules! bodies_from_parts {
    () => {
        fn body(model: &str, request: &$crate::agent::providers::ChatRequest) -> serde_json::Value {
            $crate::agent::providers::http::join_body(body_parts(model, request))
        }

        fn body_bytes(model: &str, request: &$crate::agent::providers::ChatRequest) -> Vec<u8> {
            $crate::agent::providers::http::write_body(body_parts(model, request))
        }
    };
}
pub(crate) use bodies_from_parts;

/// A body as a dialect builds it: every field but the tools, then the tools, if any.
pub(crate) type BodyParts<'a> = (Value, Option<ToolsJson<'a>>);

/// [`BodyParts`] as one `Value` (what [`Api::body`] gives).
pub(crate) fn join_body((mut fields, tools): BodyParts<'_>) -> Value {
    if let Some(tools) = tools {
        fields["tools"] = serde_json::to_value(tools).unwrap_or_default();
    }
    fields
}

/// [`BodyParts`] as the bytes sent: the tools' schemas copied as they are stored.
pub(crate) fn write_body((fields, tools): BodyParts<'_>) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct Body<'a> {
        #[serde(flatten)]
        fields: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        tools: Option<ToolsJson<'a>>,
    }
    serde_json::to_vec(&Body {
        fields: &fields,
        tools,
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::Api;
    use crate::agent::providers::{ChatRequest, ToolChoice};
    use crate::agent::{AnthropicConfig, Message, OllamaConfig, OpenAiConfig};

    /// What each dialect sends must be its `body()` exactly, tools and all.
    fn sends_its_body<A: Api>(request: &ChatRequest) {
        let sent: Value = serde_json::from_slice(&A::body_bytes("m", request)).unwrap();
        assert_eq!(sent, A::body("m", request), "{}", A::NAME);
    }

    #[test]
    fn every_dialect_sends_the_body_it_builds() {
        let tool = |name: &str, schema: Value| crate::pool::ToolDef {
            name: name.into(),
            description: format!("{name} \"quoted\" \u{e9}"),
            input_schema: schema.into(),
        };
        let mut request = ChatRequest {
            messages: vec![Message::user("hi")],
            system: Some("be brief".into()),
            tools: vec![
                tool(
                    "a",
                    json!({"type": "object", "properties": {"q": {"type": "string"}}}),
                ),
                tool("b", json!({"type": "object"})),
            ],
            tool_choice: Some(ToolChoice::Required),
            max_tokens: Some(10),
            temperature: Some(0.5),
            ..Default::default()
        };
        for tools in [true, false] {
            if !tools {
                request.tools.clear();
            }
            sends_its_body::<OpenAiConfig>(&request);
            sends_its_body::<AnthropicConfig>(&request);
            sends_its_body::<OllamaConfig>(&request);
        }
        let openai = OpenAiConfig::body(
            "m",
            &ChatRequest {
                tools: vec![tool("a", json!({"type": "object"}))],
                ..Default::default()
            },
        );
        assert_eq!(
            openai["tools"][0]["function"]["parameters"],
            json!({"type": "object"})
        );
        assert_eq!(openai["tools"][0]["type"], "function");
        let anthropic = AnthropicConfig::body(
            "m",
            &ChatRequest {
                tools: vec![tool("a", json!({"type": "object"}))],
                ..Default::default()
            },
        );
        assert_eq!(
            anthropic["tools"][0]["input_schema"],
            json!({"type": "object"})
        );
    }
}
