//! The stable C API of mcpmux (`libmcpmux.so`, `libmcpmux.a`, `include/mcpmux.h`).
//!
//! No behaviour lives here: every export checks its arguments, turns C strings and JSON into
//! core types, calls `mcpmux_core` on the library's own tokio runtime and turns the outcome
//! back into a status code, a JSON string or a callback. The header is generated from these
//! sources by `build.rs` (cbindgen), so the doc comments on exports are the C documentation.

#![allow(non_camel_case_types, reason = "C names follow C conventions")]
#![allow(
    clippy::missing_safety_doc,
    reason = "the safety contract of every export is the header's conventions section"
)]

mod api;
mod bodies;
mod calls;
mod error;
mod handles;
mod host;
mod rt;

use std::ffi::{c_char, c_void};

pub use api::{
    agents::*, conversations::*, events::*, host_requests::*, host_tools::*, library::*, oauth::*,
    pool::*, prompts::*, providers::*, recipes::*, requests::*, resources::*, roots::*, servers::*,
    tools::*,
};

/// Result of every call. Numbers are stable: they are never renumbered nor reused, and
/// new ones are only added.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum mcpmux_status {
    /// Success.
    MCPMUX_OK = 0,
    /// An argument is unusable: invalid UTF-8, invalid JSON, wrong JSON shape, bad value.
    MCPMUX_ERR_INVALID_ARGUMENT = 1,
    /// A required pointer argument is NULL.
    MCPMUX_ERR_NULL_ARGUMENT = 2,
    /// The handle was closed, never existed, or is of another kind.
    MCPMUX_ERR_INVALID_HANDLE = 3,
    /// A server, tool, resource, prompt, request or subscription that does not exist
    /// (or, for mcpmux_cancel(), a request that already finished).
    MCPMUX_ERR_NOT_FOUND = 4,
    /// A server could not be reached, or its connection died.
    MCPMUX_ERR_CONNECTION = 5,
    /// No answer within the allowed time.
    MCPMUX_ERR_TIMEOUT = 6,
    /// The request was cancelled with mcpmux_cancel().
    MCPMUX_ERR_CANCELLED = 7,
    /// A server broke the protocol or answered with a JSON-RPC error.
    MCPMUX_ERR_PROTOCOL = 8,
    /// A tool call was answered with a JSON-RPC error (a result with isError is a success).
    MCPMUX_ERR_TOOL = 9,
    /// The pool is closing and takes no new work; work still running when the drain
    /// deadline passed ends with this status.
    MCPMUX_ERR_SHUTTING_DOWN = 10,
    /// A file or process operation failed.
    MCPMUX_ERR_IO = 11,
    /// The library panicked; the message says where. The library stays usable.
    MCPMUX_ERR_PANIC = 12,
    /// The config file exists but cannot be used (it is left untouched).
    MCPMUX_ERR_INVALID_CONFIG = 13,
    /// The caller's buffer is too small; the message was truncated.
    MCPMUX_ERR_BUFFER_TOO_SMALL = 14,
    /// A server sent a message larger than the pool accepts (the pool option
    /// maxMessageBytes, 16 MiB by default); its connection was closed and reopens on next use.
    MCPMUX_ERR_MESSAGE_TOO_LARGE = 15,
    /// A server needs the user to open a URL first (URL mode elicitation, JSON-RPC error
    /// -32042): mcpmux_last_error_data() (or the completion's "data") gives
    /// {"elicitations": [{"elicitationId", "url", "message"}]}. Show each URL, open it if the
    /// user agrees, and retry once the "elicitation:complete" event names its elicitationId.
    MCPMUX_ERR_URL_ELICITATION_REQUIRED = 16,
    /// A tool's result does not match the tool's outputSchema (its structuredContent is
    /// missing or does not validate); mcpmux_last_error_data() (or the completion's "data")
    /// gives {"problems": ["/path: what is wrong"]}. The call option {"validate": false}
    /// takes such results as they are.
    MCPMUX_ERR_INVALID_RESULT = 17,
}

/// A pool of MCP server connections: an opaque handle from mcpmux_pool_open().
pub type mcpmux_pool = u64;

/// Identifies an asynchronous request, for mcpmux_cancel(). Never reused in a process.
pub type mcpmux_request_id = u64;

/// Identifies an event subscription, for mcpmux_events_unsubscribe(). Never reused.
pub type mcpmux_subscription_id = u64;

/// Completion of an asynchronous call, called exactly once for every call that returned
/// MCPMUX_OK (never when the call itself failed), on a library thread.
///
/// On success `json` is the result as JSON. On failure it is
/// `{"status": <number>, "code": "<name>", "message": "<text>"}`, and
/// mcpmux_last_error_message() called inside the callback gives the same message.
/// `json` is NUL-terminated, `len` excludes the NUL, and it is valid only during the call.
pub type mcpmux_completion_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        status: mcpmux_status,
        json: *const c_char,
        len: usize,
    ),
>;

/// Receives one pool event as JSON (`{"type": "tool:called", ...}`), on a library thread.
/// Events of one subscription arrive one at a time, in order. `json` is valid only during
/// the call.
pub type mcpmux_event_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, json: *const c_char, len: usize)>;

/// Receives one progress notification of a call as JSON
/// (`{"progress": 100, "total": 500, "message": "..."}`; total and message may be null), on
/// a library thread. `json` is valid only during the call.
pub type mcpmux_progress_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, json: *const c_char, len: usize)>;

/// Identifies a server's request to the host (sampling, elicitation), for
/// mcpmux_host_request_respond() and mcpmux_host_request_refuse(). Never reused.
pub type mcpmux_host_request_id = u64;

/// Receives a server's request to the host as JSON, on a library thread; the host answers
/// `request` exactly once, now or later, from any thread.
pub type mcpmux_host_request_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        request: mcpmux_host_request_id,
        json: *const c_char,
        len: usize,
    ),
>;

/// Frees a `user_data`; called once, after the last callback that receives it.
pub type mcpmux_free_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// Learns that a host request is no longer awaited (the call or run was cancelled, timed out,
/// or the pool closed) before the host answered it: the host may stop working on it; an
/// answer given later is MCPMUX_ERR_NOT_FOUND. Called on a library thread, at most once per
/// request, never after the request was answered.
pub type mcpmux_host_cancel_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, request: mcpmux_host_request_id)>;

/// Receives a piece of streamed text (`text` is NUL-terminated, `len` excludes the NUL,
/// valid only during the call), on a library thread or on the thread that called
/// mcpmux_host_request_token().
pub type mcpmux_token_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, text: *const c_char, len: usize)>;

/// A model provider: an opaque handle from mcpmux_provider_create() or
/// mcpmux_provider_new_host(), freed with mcpmux_provider_free().
pub type mcpmux_provider = u64;

/// An agent over a pool and a provider: an opaque handle from mcpmux_agent_new(), freed
/// with mcpmux_agent_free().
pub type mcpmux_agent = u64;

/// A conversation's view of the pool's tools (discovery tools, lazy activation): an opaque
/// handle from mcpmux_conversation_new(), freed with mcpmux_conversation_free().
pub type mcpmux_conversation = u64;

/// A pool served as one MCP server over HTTP: an opaque handle from
/// mcpmux_pool_serve_http(), stopped and freed with mcpmux_http_server_free().
pub type mcpmux_http_server = u64;

/// The host's end of one rendered MCP App view: an opaque handle from
/// mcpmux_app_bridge_new(), freed with mcpmux_app_bridge_free().
pub type mcpmux_app_bridge = u64;

/// A tool call followed in the background: an opaque handle from mcpmux_task_start(),
/// freed with mcpmux_task_free().
pub type mcpmux_task_run = u64;
