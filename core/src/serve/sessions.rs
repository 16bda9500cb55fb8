//! Legacy sessions any replica can serve, without a shared store. A client older than
//! 2026-07-28 holds a session: rmcp keeps it in the memory of the process that answered its
//! `initialize`, so behind a round-robin balancer its next request would meet a replica that
//! never heard of it. Here the `Mcp-Session-Id` a client sees is sealed (encrypted and
//! authenticated with a key the replicas share) around rmcp's own id and the client's
//! `initialize` parameters; a replica that does not hold the session opens the id and hands
//! the parameters to rmcp's session restore, which replays the handshake in its memory.
//! Upstream sessions need no carrying: every replica keeps its own connections to the
//! upstreams, and a server's request of the client rides the stream of the call that made it,
//! on the replica running that call.

use std::collections::HashMap;
use std::sync::Mutex;

use aws_lc_rs::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use aws_lc_rs::digest::{SHA256, digest};
use aws_lc_rs::rand::{SecureRandom, SystemRandom};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::transport::streamable_http_server::session::{
    SessionState, SessionStore, SessionStoreError,
};

use crate::error::{Error, Result};

/// The header a legacy session travels in.
pub(super) const SESSION_HEADER: &str = "mcp-session-id";

/// Fewest characters a shared session key may have: it stands between anyone who can reach a
/// replica and every session's client parameters.
pub const MIN_SESSION_KEY_LEN: usize = 16;

/// What a sealed session id carries: rmcp's id of the session and the client's handshake.
#[derive(serde::Serialize, serde::Deserialize)]
struct Carried {
    id: String,
    init: rmcp::model::InitializeRequestParams,
}

/// Seals and opens session ids with the replicas' shared key.
pub(super) struct SessionSeal {
    key: LessSafeKey,
    random: SystemRandom,
}

impl SessionSeal {
    /// A seal keyed by `secret` (the same on every replica), or by a random key when there is
    /// none: then only this process can open its ids, as with plain in-memory sessions.
    pub(super) fn new(secret: Option<&str>) -> Result<SessionSeal> {
        let random = SystemRandom::new();
        let mut key = [0u8; 32];
        match secret {
            Some(secret) => {
                check_key(secret)?;
                let derived = digest(
                    &SHA256,
                    [b"mcpmux serve session key\0", secret.as_bytes()]
                        .concat()
                        .as_slice(),
                );
                key.copy_from_slice(derived.as_ref());
            }
            None => random.fill(&mut key).map_err(|_| {
                Error::invalid("the system has no random numbers for a session key")
            })?,
        }
        let key = UnboundKey::new(&CHACHA20_POLY1305, &key)
            .map_err(|_| Error::invalid("a session key of the wrong length"))?;
        Ok(SessionSeal {
            key: LessSafeKey::new(key),
            random,
        })
    }

    /// The id a client sees for rmcp's session `id` of a client that sent `state`.
    fn seal(&self, id: &str, state: &SessionState) -> Option<String> {
        let carried = Carried {
            id: id.to_string(),
            init: state.initialize_params.clone(),
        };
        let mut sealed = serde_json::to_vec(&carried).ok()?;
        let mut nonce = [0u8; NONCE_LEN];
        self.random.fill(&mut nonce).ok()?;
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::empty(),
                &mut sealed,
            )
            .ok()?;
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        Some(URL_SAFE_NO_PAD.encode(bytes))
    }

    /// rmcp's session id and the client's handshake, if this key sealed `outer`.
    fn open(&self, outer: &str) -> Option<(String, SessionState)> {
        let bytes = URL_SAFE_NO_PAD.decode(outer).ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let (nonce, sealed) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut sealed = sealed.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::empty(), &mut sealed)
            .ok()?;
        let carried: Carried = serde_json::from_slice(plain).ok()?;
        Some((carried.id, SessionState::new(carried.init)))
    }
}

/// Refuses a shared key too short to keep sessions apart.
pub fn check_key(secret: &str) -> Result<()> {
    if secret.chars().count() < MIN_SESSION_KEY_LEN {
        return Err(Error::invalid(format!(
            "the session key has fewer than {MIN_SESSION_KEY_LEN} characters: give every \
             replica the same long random secret (e.g. the output of `openssl rand -hex 32`)"
        )));
    }
    Ok(())
}

/// rmcp's session store, filled from the ids themselves: a session's handshake until its id is
/// sealed, and the sessions that requests in flight name, in case this replica must restore one.
#[derive(Default)]
pub(super) struct CarriedSessions {
    /// Handshakes just finished here, by rmcp's session id, until the answer's id is sealed.
    handshakes: Mutex<HashMap<String, SessionState>>,
    /// Sessions named by requests being answered, with how many of them name each.
    named: Mutex<HashMap<String, (SessionState, usize)>>,
}

impl CarriedSessions {
    /// Makes `state` available to a restore of session `id` while the returned guard lives.
    fn name(&self, id: &str, state: SessionState) -> Named<'_> {
        let mut named = self.named.lock().unwrap();
        named.entry(id.to_string()).or_insert((state, 0)).1 += 1;
        Named {
            sessions: self,
            id: id.to_string(),
        }
    }
}

/// A request's hold on the session it names.
pub(super) struct Named<'a> {
    sessions: &'a CarriedSessions,
    id: String,
}

impl Drop for Named<'_> {
    fn drop(&mut self) {
        let mut named = self.sessions.named.lock().unwrap();
        if let Some(entry) = named.get_mut(&self.id) {
            entry.1 -= 1;
            if entry.1 == 0 {
                named.remove(&self.id);
            }
        }
    }
}

#[async_trait::async_trait]
impl SessionStore for CarriedSessions {
    async fn load(&self, id: &str) -> std::result::Result<Option<SessionState>, SessionStoreError> {
        Ok(self.named.lock().unwrap().get(id).map(|(s, _)| s.clone()))
    }

    async fn store(
        &self,
        id: &str,
        state: &SessionState,
    ) -> std::result::Result<(), SessionStoreError> {
        self.handshakes
            .lock()
            .unwrap()
            .insert(id.to_string(), state.clone());
        Ok(())
    }

    async fn delete(&self, id: &str) -> std::result::Result<(), SessionStoreError> {
        self.handshakes.lock().unwrap().remove(id);
        Ok(())
    }
}

/// Sealed sessions in front of rmcp's service: opens the id a request carries, and seals the
/// id an `initialize` answer names.
pub(super) struct SealedSessions {
    seal: SessionSeal,
    store: std::sync::Arc<CarriedSessions>,
}

/// What a request's session id turned out to be.
pub(super) enum Opened<'a> {
    /// No session id: an `initialize`, or a 2026-07-28 request.
    None,
    /// A session this key sealed: the request now names rmcp's id.
    Session { outer: String, _named: Named<'a> },
    /// An id this key did not seal (another key, another server, or tampered with).
    Foreign,
}

impl SealedSessions {
    pub(super) fn new(secret: Option<&str>) -> Result<SealedSessions> {
        Ok(SealedSessions {
            seal: SessionSeal::new(secret)?,
            store: Default::default(),
        })
    }

    /// The store rmcp restores sessions from.
    pub(super) fn store(&self) -> std::sync::Arc<CarriedSessions> {
        self.store.clone()
    }

    /// Replaces the sealed id of `headers` by rmcp's own.
    pub(super) fn open(&self, headers: &mut http::HeaderMap) -> Opened<'_> {
        let Some(outer) = headers.get(SESSION_HEADER) else {
            return Opened::None;
        };
        let outer = outer.to_str().unwrap_or_default().to_string();
        let Some((id, state)) = self.seal.open(&outer) else {
            return Opened::Foreign;
        };
        let Ok(value) = http::HeaderValue::from_str(&id) else {
            return Opened::Foreign;
        };
        headers.insert(SESSION_HEADER, value);
        Opened::Session {
            outer,
            _named: self.store.name(&id, state),
        }
    }

    /// Puts the client's id back in an answer's headers: the one it sent, or for a new
    /// session, rmcp's id sealed with the handshake that made it.
    pub(super) fn close(&self, opened: &Opened<'_>, headers: &mut http::HeaderMap) {
        let Some(id) = headers
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
        else {
            return;
        };
        let outer = match opened {
            Opened::Session { outer, .. } => Some(outer.clone()),
            _ => {
                let state = self.store.handshakes.lock().unwrap().remove(&id);
                state.and_then(|state| self.seal.seal(&id, &state))
            }
        };
        match outer.and_then(|o| http::HeaderValue::from_str(&o).ok()) {
            Some(value) => {
                headers.insert(SESSION_HEADER, value);
            }
            // Never hand out an id another replica could not open.
            None => {
                headers.remove(SESSION_HEADER);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> SessionState {
        let init: rmcp::model::InitializeRequestParams =
            serde_json::from_value(serde_json::json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"sampling": {}},
                "clientInfo": {"name": "a client", "version": "1.0"}
            }))
            .unwrap();
        SessionState::new(init)
    }

    #[test]
    fn replicas_with_one_key_open_each_others_ids() {
        let key = "a shared secret of some length";
        let a = SessionSeal::new(Some(key)).unwrap();
        let b = SessionSeal::new(Some(key)).unwrap();
        let outer = a.seal("rmcp-id", &state()).unwrap();
        assert!(outer.bytes().all(|c| (0x21..=0x7e).contains(&c)), "{outer}");
        let (id, opened) = b.open(&outer).unwrap();
        assert_eq!(id, "rmcp-id");
        assert_eq!(opened.initialize_params.client_info.name, "a client");
    }

    #[test]
    fn other_keys_and_altered_ids_open_nothing() {
        let a = SessionSeal::new(Some("a shared secret of some length")).unwrap();
        let other = SessionSeal::new(Some("another secret of some length")).unwrap();
        let random = SessionSeal::new(None).unwrap();
        let outer = a.seal("rmcp-id", &state()).unwrap();
        assert!(other.open(&outer).is_none());
        assert!(random.open(&outer).is_none());
        let mut altered = outer.into_bytes();
        let last = altered.len() - 3;
        altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
        assert!(a.open(std::str::from_utf8(&altered).unwrap()).is_none());
        assert!(a.open("not-sealed").is_none());
        assert!(a.open("").is_none());
    }

    #[test]
    fn a_short_key_is_refused_with_what_to_use() {
        let error = SessionSeal::new(Some("short")).err().unwrap().to_string();
        assert!(error.contains("openssl rand -hex 32"), "{error}");
    }

    #[tokio::test]
    async fn a_named_session_is_restorable_only_while_a_request_names_it() {
        let sessions = SealedSessions::new(Some("a shared secret of some length")).unwrap();
        let outer = sessions.seal.seal("rmcp-id", &state()).unwrap();
        let mut headers = http::HeaderMap::new();
        headers.insert(SESSION_HEADER, outer.parse().unwrap());
        let store = sessions.store();
        {
            let opened = sessions.open(&mut headers);
            assert!(matches!(opened, Opened::Session { .. }));
            assert_eq!(headers[SESSION_HEADER], "rmcp-id");
            assert!(store.load("rmcp-id").await.unwrap().is_some());
            sessions.close(&opened, &mut headers);
            assert_eq!(headers[SESSION_HEADER], outer.as_str());
        }
        assert!(store.load("rmcp-id").await.unwrap().is_none());
    }
}
