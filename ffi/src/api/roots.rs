//! Roots: what servers see from `roots/list`.

use std::ffi::c_char;

use crate::bodies::{answer_json, blocking_unit, work};
use crate::calls::pool_entry;
use crate::error::{FfiResult, json_arg, opt_str_arg, str_arg};
use crate::mcpmux_pool;
use crate::mcpmux_status;

#[allow(
    deprecated,
    reason = "roots are deprecated by SEP-2577 but servers still ask for them"
)]
/// Roots as every binding reads them (`mcpmux_core::host::answers::roots`).
fn roots_arg(text: &str, name: &str) -> FfiResult<Vec<mcpmux_core::model::Root>> {
    let value: serde_json::Value = json_arg(text, name)?;
    mcpmux_core::host::answers::roots(value)
        .map_err(|e| crate::error::FfiError::invalid(format!("{name}: {e}")))
}

/// Replaces the roots every server sees unless it has its own, a JSON array
/// `[{"uri": "file:///home/me/project", "name": "project"}]` (a root may also be just its URI,
/// `["file:///home/me/project"]`); connected servers are told
/// the list changed. Set them before connecting for servers that read roots only once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_roots_set(
    pool: mcpmux_pool,
    roots_json: *const c_char,
) -> mcpmux_status {
    blocking_unit(pool, 0, |e| {
        let roots = roots_arg(unsafe { str_arg(roots_json, "roots_json") }?, "roots_json")?;
        let p = e.pool.clone();
        Ok(work(async move {
            p.set_roots(roots).await;
            Ok(())
        }))
    })
}

/// The roots of the pool (not a server's own) as a JSON array.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_roots_get(
    pool: mcpmux_pool,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    answer_json(out_json, || Ok(pool_entry(pool)?.pool.roots()))
}

/// Gives one server (id or name) its own roots, a JSON array like mcpmux_roots_set()'s;
/// `roots_json` NULL gives it the pool's roots again. The server is told if connected.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_roots_set_for_server(
    pool: mcpmux_pool,
    server: *const c_char,
    roots_json: *const c_char,
) -> mcpmux_status {
    blocking_unit(pool, 0, |e| {
        let server = unsafe { str_arg(server, "server") }?.to_owned();
        let roots = match unsafe { opt_str_arg(roots_json, "roots_json") }? {
            Some(text) => Some(roots_arg(text, "roots_json")?),
            None => None,
        };
        let p = e.pool.clone();
        Ok(work(
            async move { p.set_server_roots(&server, roots).await },
        ))
    })
}
