//! Recipes (registered widget descriptions) and the canvas.

use std::ffi::c_char;

use crate::bodies::{answer_json, clear, opt_out};
use crate::calls::pool_entry;
use crate::error::{FfiError, guard, str_arg, to_json};
use crate::mcpmux_pool;
use crate::mcpmux_status::{self, *};

/// Adds (or replaces) a recipe: markdown with YAML front matter (`widget` or `name`,
/// `description`, `schema`: a JSON Schema of the widget's parameters) and instructions
/// after it. The first recipe also registers the host tools `widget_display` and `canvas`.
/// `out_json` (may be NULL) receives `{"name": ..., "description": ..., "schema": {...},
/// "body": "..."}`. A malformed recipe is MCPMUX_ERR_INVALID_ARGUMENT.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_recipes_register(
    pool: mcpmux_pool,
    markdown: *const c_char,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    guard(|| {
        clear(out_json);
        let entry = pool_entry(pool)?;
        let markdown = unsafe { str_arg(markdown, "markdown") }?;
        let recipe = entry.pool.register_recipe(markdown)?;
        opt_out(out_json, || to_json(&recipe))
    })
}

/// Every recipe: `[{"name": ..., "description": ...}]`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_recipes_list(
    pool: mcpmux_pool,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    answer_json(out_json, || Ok(pool_entry(pool)?.pool.recipes().list()))
}

/// One recipe by name, like mcpmux_recipes_register() answers it. MCPMUX_ERR_NOT_FOUND
/// when there is none.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_recipes_get(
    pool: mcpmux_pool,
    name: *const c_char,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    answer_json(out_json, || {
        let name = unsafe { str_arg(name, "name") }?;
        let entry = pool_entry(pool)?;
        let recipe = entry.pool.recipes().get(name).ok_or_else(|| {
            FfiError::new(MCPMUX_ERR_NOT_FOUND, format!("there is no recipe '{name}'"))
        })?;
        Ok(recipe)
    })
}

/// Recipes ranked for `query` (name, description, parameter names), best first, at most
/// `limit` (0: not given, which is 10): a JSON array of `{"name": ..., "description": ..., "score": ...}`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_recipes_search(
    pool: mcpmux_pool,
    query: *const c_char,
    limit: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    answer_json(out_json, || {
        let query = unsafe { str_arg(query, "query") }?;
        let entry = pool_entry(pool)?;
        // C has no optional integers: 0 is "not given", and core says what that means.
        let limit = (limit != 0).then_some(limit as usize);
        Ok(entry.pool.search_recipes(query, limit)?)
    })
}

/// The pool's canvas (the widgets shown with `widget_display`) as JSON.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_canvas_get(
    pool: mcpmux_pool,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    answer_json(out_json, || Ok(pool_entry(pool)?.pool.canvas().to_json()))
}
