//! W3C trace context in requests' `_meta` (`traceparent`, `tracestate`), as MCP carries it, so
//! a server's spans join the trace of the host's request. With the `otel` feature, the
//! context of the current `tracing` span is taken through `tracing-opentelemetry` (a host
//! that exports its spans with that layer gets one trace across mcpmux and its servers);
//! without the feature, or outside an OpenTelemetry span, nothing is added. Keys a caller
//! put in the `_meta` itself win. List requests are not stamped: one fill of a shared list
//! cache serves every caller waiting on it, so no one caller's trace owns it.

use rmcp::model::RequestMetaObject;
use serde_json::Value;

/// The `traceparent` and `tracestate` of the current span, if it belongs to a trace.
#[cfg(feature = "otel")]
fn current() -> Option<(String, String)> {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    let context = tracing::Span::current().context();
    let span = context.span();
    let span = span.span_context();
    if !span.is_valid() {
        return None;
    }
    let parent = format!(
        "00-{}-{}-{:02x}",
        span.trace_id(),
        span.span_id(),
        span.trace_flags().to_u8()
    );
    Some((parent, span.trace_state().header()))
}

#[cfg(not(feature = "otel"))]
fn current() -> Option<(String, String)> {
    None
}

/// Adds the current trace context to a request's `_meta`, unless it has one (a request
/// outside a trace keeps its `_meta` as it was).
pub(crate) fn stamp(meta: &mut Option<RequestMetaObject>) {
    if meta.as_ref().is_some_and(|m| m.contains_key("traceparent")) {
        return;
    }
    let Some((parent, state)) = current() else {
        return;
    };
    let meta = meta.get_or_insert_default();
    meta.insert("traceparent".into(), Value::String(parent));
    if !state.is_empty() {
        meta.insert("tracestate".into(), Value::String(state));
    }
}

/// [`stamp`] for a request mcpmux knows by name only: into its params' `_meta`.
pub(crate) fn stamp_params(params: &mut Option<rmcp::model::JsonObject>) {
    let Some((parent, state)) = current() else {
        return;
    };
    let params = params.get_or_insert_default();
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Default::default()));
    let Value::Object(meta) = meta else {
        return;
    };
    if meta.contains_key("traceparent") {
        return;
    }
    meta.insert("traceparent".into(), Value::String(parent));
    if !state.is_empty() {
        meta.insert("tracestate".into(), Value::String(state));
    }
}
