//! A host that traces with OpenTelemetry (through `tracing-opentelemetry`, mcpmux's `otel`
//! feature) gets one trace across mcpmux and its servers: the W3C `traceparent` of mcpmux's
//! span for a request, a child of the caller's span, is in the request's `_meta`. Without an
//! OpenTelemetry layer nothing is added.

use crate::common::*;
use opentelemetry::trace::{TraceContextExt, TracerProvider};
use serde_json::json;
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

/// The trace id and span id of a `traceparent`.
fn ids(traceparent: &str) -> (String, String) {
    let parts: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(parts.len(), 4, "{traceparent}");
    assert_eq!(parts[0], "00", "{traceparent}");
    (parts[1].to_string(), parts[2].to_string())
}

#[tokio::test]
async fn the_callers_trace_reaches_the_server() {
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("mcpmux-tests"));
    let subscriber = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));

    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    pool.list_tools(Some("t")).await.unwrap();
    // Other tests of this binary, on threads with no subscriber, may have registered the same
    // callsites (mcpmux's call span) while this test set its subscriber: a registration that
    // raced with it caches "never enabled", and mcpmux's span is then skipped here (seen once
    // in CI: the traceparent carried the caller's span). Asking every callsite again, after
    // the setup, closes that.
    tracing::callsite::rebuild_interest_cache();
    for with_progress in [false, true] {
        let host = tracing::info_span!("host request");
        let context = host.context();
        let trace = context.span().span_context().trace_id().to_string();
        let root = context.span().span_context().span_id().to_string();
        let options = mcpmux::CallOptions {
            on_progress: with_progress
                .then(|| std::sync::Arc::new(|_p: mcpmux::Progress| {}) as mcpmux::ProgressFn),
            ..Default::default()
        };
        let r = pool
            .call_tool("mcp__t__meta", json!({}), options)
            .instrument(host)
            .await
            .unwrap();
        let seen: serde_json::Value = serde_json::from_str(&text(&r)).unwrap();
        let (got_trace, got_span) = ids(seen["traceparent"].as_str().unwrap_or_default());
        assert_eq!(got_trace, trace, "progress {with_progress}: {seen}");
        // mcpmux's own span of the call, inside the caller's.
        assert_ne!(got_span, root);
    }
    // A caller's own traceparent wins.
    let mut meta = serde_json::Map::new();
    meta.insert(
        "traceparent".into(),
        json!("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
    );
    let options = mcpmux::CallOptions {
        meta: Some(meta),
        ..Default::default()
    };
    let r = pool
        .call_tool("mcp__t__meta", json!({}), options)
        .instrument(tracing::info_span!("host request"))
        .await
        .unwrap();
    let seen: serde_json::Value = serde_json::from_str(&text(&r)).unwrap();
    assert_eq!(
        seen["traceparent"],
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    );

    // Without an OpenTelemetry layer, nothing is added.
    drop(subscriber);
    let r = call_ok(&pool, "mcp__t__meta", json!({})).await;
    let seen: serde_json::Value = serde_json::from_str(&text(&r)).unwrap();
    assert!(seen.get("traceparent").is_none(), "{seen}");
    let _ = provider.shutdown();
}
