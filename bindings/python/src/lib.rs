//! `mcpmux._native`: the marshalling layer between Python and mcpmux's Rust core. It has no
//! behaviour of its own; the hand-written `mcpmux` package builds the Python API on top.

mod agent;
mod apps;
mod callbacks;
#[cfg(unix)]
mod completion;
mod conversations;
mod convert;
mod errors;
mod events;
mod host;
mod oauth;
mod pool;
mod prompts;
mod requests;
mod resources;
mod runtime;
mod serve;
mod servers;
mod skills;
mod tasks;
mod tools;
mod widgets;

/// mimalloc, set up for a library in someone else's process (see `mcpmux::alloc`).
#[global_allocator]
static ALLOCATOR: mcpmux::alloc::Allocator = mcpmux::alloc::Allocator;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    runtime::watch_forks();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(errors::_register_errors, m)?)?;
    m.add_function(wrap_pyfunction!(convert::_register_result_types, m)?)?;
    m.add_function(wrap_pyfunction!(pool::open_pool, m)?)?;
    m.add_function(wrap_pyfunction!(pool::default_options, m)?)?;
    m.add_function(wrap_pyfunction!(host::read_host_answer, m)?)?;
    m.add("EVENT_NAMES", mcpmux::EVENT_NAMES.to_vec())?;
    // What the Python types mirror (fields, events, error codes), for the drift tests.
    m.add("MIRRORED", mcpmux::mirror::mirrored().to_string())?;
    m.add_function(wrap_pyfunction!(agent::create_provider, m)?)?;
    m.add_function(wrap_pyfunction!(agent::host_provider, m)?)?;
    m.add_class::<pool::NativePool>()?;
    m.add_class::<conversations::NativeConversation>()?;
    m.add_class::<tasks::NativeTaskRun>()?;
    m.add_class::<apps::NativeAppBridge>()?;
    m.add_class::<serve::NativeHttpServer>()?;
    m.add_class::<agent::NativeProvider>()?;
    m.add_class::<agent::NativeAgent>()?;
    m.add_class::<events::NativeEvents>()?;
    m.add_class::<events::NativeSubscription>()?;
    let exiting = wrap_pyfunction!(runtime::_interpreter_exiting, m)?;
    m.py()
        .import("atexit")?
        .call_method1("register", (exiting,))?;
    Ok(())
}
