//! Skills (the Skills extension, SEP-2640): listing what servers offer, loading a skill and
//! reading its files, each checked against the listing.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use crate::bodies::{asynchronous, blocking, work};
use crate::calls::{PoolEntry, Work};
use crate::error::{FfiResult, opt_str_arg, str_arg};
use crate::mcpmux_status;
use crate::{mcpmux_completion_fn, mcpmux_pool, mcpmux_request_id};

/// What to do with one server's skill.
enum SkillOp {
    Load,
    ReadFile(String),
}

fn list_work(e: &Arc<PoolEntry>, server: *const c_char) -> FfiResult<Work> {
    let p = e.pool.clone();
    let server = unsafe { opt_str_arg(server, "server") }?.map(str::to_owned);
    Ok(work(async move { p.list_skills(server.as_deref()).await }))
}

fn skill_work(
    e: &Arc<PoolEntry>,
    server: *const c_char,
    skill: *const c_char,
    op: SkillOp,
) -> FfiResult<Work> {
    let p = e.pool.clone();
    let server = unsafe { str_arg(server, "server") }?.to_owned();
    let skill = unsafe { str_arg(skill, "skill") }?.to_owned();
    Ok(match op {
        SkillOp::ReadFile(uri) => {
            work(async move { p.read_skill_file(&server, &skill, &uri).await })
        }
        SkillOp::Load => work(async move { p.load_skill(&server, &skill).await }),
    })
}

/// The skills of every server that offers them, or of one (NULL for all), read from no file:
/// `[{"serverId": ..., "serverName": ..., "name": ..., "description": ..., "uri": ...,
/// "frontmatter": {...}, "files": [{"uri": ..., "digest": "sha256:...", "size": N}]}]`
/// (`files` null when the server says they change). The pool keeps this listing: loads and
/// reads are checked against it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_skills_list(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| list_work(e, server))
}

/// Asynchronous mcpmux_skills_list().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_skills_list_async(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        list_work(e, server)
    })
}

/// Loads a skill of one server (id or name) by its name or its SKILL.md URI: `{"skill":
/// {...as listed}, "instructions": "..."}`, once SKILL.md's size, digest and front matter
/// are the listing's. A mismatch is MCPMUX_ERR_PROTOCOL saying what differs; an unknown skill
/// MCPMUX_ERR_NOT_FOUND.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_skills_load(
    pool: mcpmux_pool,
    server: *const c_char,
    skill: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| {
        skill_work(e, server, skill, SkillOp::Load)
    })
}

/// Asynchronous mcpmux_skills_load().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_skills_load_async(
    pool: mcpmux_pool,
    server: *const c_char,
    skill: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        skill_work(e, server, skill, SkillOp::Load)
    })
}

fn read_file_work(
    e: &Arc<PoolEntry>,
    server: *const c_char,
    skill: *const c_char,
    uri: *const c_char,
) -> FfiResult<Work> {
    let uri = unsafe { str_arg(uri, "uri") }?.to_owned();
    skill_work(e, server, skill, SkillOp::ReadFile(uri))
}

/// Reads one file of a skill (a URI its listing names), checked like mcpmux_skills_load():
/// `{"uri": ..., "mimeType": ..., "text": ...}` (`blob`, base64, for a binary file).
/// A URI the listing does not name is MCPMUX_ERR_INVALID_ARGUMENT.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_skills_read_file(
    pool: mcpmux_pool,
    server: *const c_char,
    skill: *const c_char,
    uri: *const c_char,
    timeout_ms: u32,
    out_json: *mut *mut c_char,
) -> mcpmux_status {
    blocking(pool, timeout_ms, out_json, |e| {
        read_file_work(e, server, skill, uri)
    })
}

/// Asynchronous mcpmux_skills_read_file().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_skills_read_file_async(
    pool: mcpmux_pool,
    server: *const c_char,
    skill: *const c_char,
    uri: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        read_file_work(e, server, skill, uri)
    })
}
