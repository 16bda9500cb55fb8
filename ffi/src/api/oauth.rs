//! OAuth for HTTP servers: how a user authorizes (a host request answered with the redirect
//! URL), where tokens live (host callbacks, a file, or memory), and logging out.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use mcpmux_core::auth::{
    AuthorizationPrompt, FileTokenStore, MemoryTokenStore, OAuthHandler, TokenStore,
};
use mcpmux_core::host::BoxFuture;
use serde_json::{Value, json};

use crate::bodies::{asynchronous, blocking_unit, work};
use crate::calls::{PoolEntry, Work, pool_entry};
use crate::error::{FfiError, FfiResult, guard, opt_str_arg, str_arg};
use crate::host::{CHandler, Pending, ask, required_handler};
use crate::mcpmux_status;
use crate::{
    mcpmux_completion_fn, mcpmux_free_fn, mcpmux_host_request_fn, mcpmux_pool, mcpmux_request_id,
};

/// A redirect URI or URL: a scheme (`http`, `https`, `com.example.app`...), a colon, and
/// the rest, without white space.
fn is_uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !rest.is_empty()
        && !text.chars().any(char::is_whitespace)
}

/// The host's answer to an authorization: the redirect URL as a JSON string, or bare.
pub(crate) fn redirect_of(text: &str) -> Result<String, String> {
    let url = match serde_json::from_str::<Value>(text) {
        Ok(Value::String(s)) => s,
        Ok(_) => String::new(),
        Err(_) => text.to_string(),
    };
    let url = url.trim();
    if is_uri(url) {
        Ok(url.to_string())
    } else {
        Err(format!(
            "an authorization's answer is the redirect URL (with its code and state) as a \
             JSON string, not {text}"
        ))
    }
}

/// How users of this pool authorize HTTP servers that ask for OAuth (answer 401).
///
/// `handler(user_data, request, json, len)` receives, on a library thread,
/// `{"serverId": ..., "serverName": ..., "authorizationUrl": ..., "redirectUri": ...}`:
/// the host takes the user to `authorizationUrl` (a browser, a web view...) and answers
/// `request` once, then or later, from any thread, with mcpmux_host_request_respond() and
/// the full URL the authorization server redirected to (it carries the code and state) as a
/// JSON string, or mcpmux_host_request_refuse() with a reason (the connection attempt then
/// fails with MCPMUX_ERR_CONNECTION). `redirect_uri` is the URI registered with the
/// authorization server, where it sends the user back (e.g.
/// `"http://localhost:3000/callback"`). A request nobody waits for any more (connect
/// cancelled or timed out, pool closed) is MCPMUX_ERR_NOT_FOUND to answer, and
/// mcpmux_host_request_waiting() says so.
///
/// NULL `handler` restores the default (then `redirect_uri`, `user_data` and
/// `free_user_data` are ignored): the system browser opens the authorization URL and a
/// one-shot listener on 127.0.0.1 receives the redirect. Servers with
/// `"oauth": {"grant": "client_credentials"}` in their config never ask the host.
/// `free_user_data` (may be NULL) runs once the handler is replaced or removed, or the pool
/// closed, and no call of it is running; it does not run when this call fails.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_pool_set_oauth_handler(
    pool: mcpmux_pool,
    redirect_uri: *const c_char,
    handler: mcpmux_host_request_fn,
    user_data: *mut c_void,
    free_user_data: mcpmux_free_fn,
) -> mcpmux_status {
    guard(|| {
        let entry = pool_entry(pool)?;
        let Some(f) = handler else {
            entry.pool.set_oauth_handler(None);
            return Ok(());
        };
        let redirect_uri = unsafe { str_arg(redirect_uri, "redirect_uri") }?;
        if !is_uri(redirect_uri) {
            return Err(FfiError::invalid(format!(
                "redirect_uri is not a URI: {redirect_uri:?}"
            )));
        }
        let h = CHandler::new(f, None, user_data, free_user_data, None);
        let authorize = Arc::new(move |prompt: AuthorizationPrompt| {
            let json = serde_json::to_string(&prompt).unwrap_or_default();
            let answer = ask(h.clone(), json, Pending::Authorize);
            Box::pin(async move {
                answer
                    .await
                    .unwrap_or_else(|| Err("the host did not answer".into()))
            }) as BoxFuture<Result<String, String>>
        });
        entry.pool.set_oauth_handler(Some(OAuthHandler {
            redirect_uri: redirect_uri.to_owned(),
            authorize,
        }));
        Ok(())
    })
}

/// A token store whose operations are host requests.
struct CTokenStore {
    load: Arc<CHandler>,
    save: Arc<CHandler>,
    clear: Arc<CHandler>,
}

fn unanswered<T>(answer: Option<Result<T, String>>) -> Result<T, String> {
    answer.unwrap_or_else(|| Err("the host did not answer".into()))
}

impl TokenStore for CTokenStore {
    fn load(&self, server_id: &str) -> BoxFuture<Result<Option<Value>, String>> {
        let json = json!({ "serverId": server_id }).to_string();
        let answer = ask(self.load.clone(), json, Pending::TokenLoad);
        Box::pin(async move { unanswered(answer.await) })
    }

    fn save(&self, server_id: &str, credentials: Value) -> BoxFuture<Result<(), String>> {
        let json = json!({ "serverId": server_id, "credentials": credentials }).to_string();
        let answer = ask(self.save.clone(), json, Pending::TokenDone);
        Box::pin(async move { unanswered(answer.await) })
    }

    fn clear(&self, server_id: &str) -> BoxFuture<Result<(), String>> {
        let json = json!({ "serverId": server_id }).to_string();
        let answer = ask(self.clear.clone(), json, Pending::TokenDone);
        Box::pin(async move { unanswered(answer.await) })
    }
}

/// Keeps this pool's OAuth credentials with the host, instead of the default file
/// `<config>.tokens.json` (mode 0600). Each operation is a host request, received on a
/// library thread and answered once, then or later, from any thread:
/// - `load` gets `{"serverId": "..."}` and answers (mcpmux_host_request_respond()) the
///   credentials saved for that server, exactly as save received them, or `null`;
/// - `save` gets `{"serverId": "...", "credentials": {...}}` and answers any JSON (`null`)
///   once they are kept;
/// - `clear` gets `{"serverId": "..."}` and answers any JSON (`null`) once they are gone.
///
/// mcpmux_host_request_refuse() fails the operation with its reason (a failed load or save
/// fails the connection attempt with MCPMUX_ERR_CONNECTION). The credentials are opaque
/// secrets (access and refresh tokens, the client registration): keep them safe and never
/// log them. All three callbacks are required and share `user_data`; `free_user_data` (may
/// be NULL) runs once the store is replaced or the pool closed and no call of it is
/// running; it does not run when this call fails. Set the store before connecting.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_pool_set_token_store(
    pool: mcpmux_pool,
    load: mcpmux_host_request_fn,
    save: mcpmux_host_request_fn,
    clear: mcpmux_host_request_fn,
    user_data: *mut c_void,
    free_user_data: mcpmux_free_fn,
) -> mcpmux_status {
    guard(|| {
        let entry = pool_entry(pool)?;
        let load = required_handler(load, "load")?;
        let save = required_handler(save, "save")?;
        let clear = required_handler(clear, "clear")?;
        let owner = CHandler::new(load, None, user_data, free_user_data, None);
        let store = CTokenStore {
            save: CHandler::sharing(save, &owner),
            clear: CHandler::sharing(clear, &owner),
            load: owner,
        };
        entry.pool.set_token_store(Arc::new(store));
        Ok(())
    })
}

/// Keeps this pool's OAuth credentials in the JSON file `path` (mode 0600, written
/// atomically under a lock, so several processes may share it), created when first
/// needed; NULL restores the default, `<config>.tokens.json` beside the pool's config file.
/// Set it before connecting.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_pool_set_token_store_file(
    pool: mcpmux_pool,
    path: *const c_char,
) -> mcpmux_status {
    guard(|| {
        let entry = pool_entry(pool)?;
        let path = match unsafe { opt_str_arg(path, "path") }? {
            Some("") => return Err(FfiError::invalid("path is empty")),
            Some(p) => std::path::PathBuf::from(p),
            None => {
                let config = entry.pool.config_path();
                let mut name = config.file_name().unwrap_or_default().to_os_string();
                name.push(".tokens.json");
                config.with_file_name(name)
            }
        };
        entry
            .pool
            .set_token_store(Arc::new(FileTokenStore::new(path)));
        Ok(())
    })
}

/// Keeps this pool's OAuth credentials in memory only: users authorize again in every
/// process. Set it before connecting.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_pool_set_token_store_memory(pool: mcpmux_pool) -> mcpmux_status {
    guard(|| {
        let entry = pool_entry(pool)?;
        entry
            .pool
            .set_token_store(Arc::new(MemoryTokenStore::default()));
        Ok(())
    })
}

fn logout_work(e: &Arc<PoolEntry>, server: *const c_char) -> FfiResult<Work> {
    let server = unsafe { str_arg(server, "server") }?.to_owned();
    let p = e.pool.clone();
    Ok(work(async move { p.logout(&server).await }))
}

/// Forgets the OAuth credentials of `server` (id or name) in the pool's token store and
/// disconnects it: its next use authorizes again. MCPMUX_ERR_NOT_FOUND for an unknown
/// server; MCPMUX_ERR_CONNECTION when the token store cannot clear them. `timeout_ms`: 0
/// for none.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_pool_logout(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
) -> mcpmux_status {
    blocking_unit(pool, timeout_ms, |e| logout_work(e, server))
}

/// Asynchronous mcpmux_pool_logout(); the callback's JSON is `null`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_pool_logout_async(
    pool: mcpmux_pool,
    server: *const c_char,
    timeout_ms: u32,
    callback: mcpmux_completion_fn,
    user_data: *mut c_void,
    out_request_id: *mut mcpmux_request_id,
) -> mcpmux_status {
    asynchronous(pool, timeout_ms, callback, user_data, out_request_id, |e| {
        logout_work(e, server)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_answers_are_urls() {
        let url = "http://localhost:3000/callback?code=c&state=s";
        assert_eq!(redirect_of(&format!("\"{url}\"")).unwrap(), url);
        assert_eq!(redirect_of(url).unwrap(), url);
        assert_eq!(
            redirect_of("\"com.example.app:/cb?code=1\"").unwrap(),
            "com.example.app:/cb?code=1"
        );
        assert!(redirect_of("\"\"").is_err());
        assert!(redirect_of("{}").is_err());
        assert!(redirect_of("42").is_err());
        assert!(redirect_of("not a url").is_err());
        assert!(redirect_of("\"1http://x\"").is_err());
    }

    #[test]
    fn redirect_uris_need_a_scheme() {
        assert!(is_uri("http://localhost:3000/callback"));
        assert!(is_uri("com.example.app:/oauth"));
        assert!(!is_uri("localhost/callback"));
        assert!(!is_uri("http:"));
        assert!(!is_uri("http://a b"));
        assert!(!is_uri(""));
    }
}
