//! What the HTTP providers share: one client, a model that can be switched while agents hold
//! the provider, requests retried with backoff, and the `Provider` impl itself.

use std::future::Future;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use super::{ChatRequest, Provider, cancellable};
use serde_json::Value;

use crate::agent::message::Response;
use crate::error::{Error, Result};
use crate::host::BoxFuture;

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
                Err(e) => (e.is_connect() || e.is_timeout(), None, e.to_string()),
            };
            if !retryable || attempt >= self.max_retries {
                return Err(Error::connection(
                    self.name,
                    format!("{failure} (after {} attempts)", attempt + 1),
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
        let body = serde_json::to_vec(&A::body(&self.http.model(), &request)).unwrap_or_default();
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
