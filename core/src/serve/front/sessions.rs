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

use rmcp::transport::streamable_http_server::session::{
    SessionState, SessionStore, SessionStoreError,
};

use crate::error::Result;
use crate::serve::relay::seal::Seal;

/// The header a legacy session travels in.
pub(in crate::serve) const SESSION_HEADER: &str = "mcp-session-id";

/// What a sealed session id carries: rmcp's id of the session, the client's handshake, and,
/// behind OAuth, whose token opened it.
#[derive(serde::Serialize, serde::Deserialize)]
struct Carried {
    id: String,
    init: rmcp::model::InitializeRequestParams,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
}

/// The purpose a session id is sealed for (no other sealed text opens as one).
const SESSION: &[u8] = b"session id";

/// rmcp's session store, filled from the ids themselves: a session's handshake until its id is
/// sealed, and the sessions that requests in flight name, in case this replica must restore one.
#[derive(Default)]
pub(in crate::serve) struct CarriedSessions {
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
pub(in crate::serve) struct Named<'a> {
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
pub(in crate::serve) struct SealedSessions {
    seal: std::sync::Arc<Seal>,
    store: std::sync::Arc<CarriedSessions>,
    /// Sessions a client ended here (DELETE), newest last: their ids still open, so they are
    /// refused by name. Bounded; a replica that did not see the DELETE does not know of it.
    ended: Mutex<Ended>,
}

/// The most ended sessions remembered.
const ENDED_KEPT: usize = 10_000;

#[derive(Default)]
struct Ended {
    ids: std::collections::HashSet<String>,
    order: std::collections::VecDeque<String>,
}

/// What a request's session id turned out to be.
pub(in crate::serve) enum Opened<'a> {
    /// No session id: an `initialize`, or a 2026-07-28 request.
    None,
    /// A session this key sealed: the request now names rmcp's id.
    Session { outer: String, _named: Named<'a> },
    /// An id this key did not seal (another key, another server, or tampered with).
    Foreign,
    /// A session its client ended.
    Ended,
    /// A session opened with another user's token.
    NotOwned,
}

impl SealedSessions {
    pub(in crate::serve) fn new(secret: Option<&str>) -> Result<SealedSessions> {
        Ok(SealedSessions {
            seal: std::sync::Arc::new(Seal::new(secret)?),
            store: Default::default(),
            ended: Default::default(),
        })
    }

    /// The seal, for what else the server hands out to carry back (request states).
    pub(in crate::serve) fn seal(&self) -> std::sync::Arc<Seal> {
        self.seal.clone()
    }

    /// The store rmcp restores sessions from.
    pub(in crate::serve) fn store(&self) -> std::sync::Arc<CarriedSessions> {
        self.store.clone()
    }

    /// Replaces the sealed id of `headers` by rmcp's own, for a request made by `owner`
    /// (behind OAuth; else None).
    pub(in crate::serve) fn open(
        &self,
        headers: &mut http::HeaderMap,
        owner: Option<&str>,
    ) -> Opened<'_> {
        let Some(outer) = headers.get(SESSION_HEADER) else {
            return Opened::None;
        };
        let outer = outer.to_str().unwrap_or_default().to_string();
        if self.ended.lock().unwrap().ids.contains(&outer) {
            return Opened::Ended;
        }
        let Some(Carried {
            id,
            init,
            owner: opener,
        }) = self.seal.open(SESSION, &outer)
        else {
            return Opened::Foreign;
        };
        if opener.as_deref() != owner {
            return Opened::NotOwned;
        }
        let state = SessionState::new(init);
        let Ok(value) = http::HeaderValue::from_str(&id) else {
            return Opened::Foreign;
        };
        headers.insert(SESSION_HEADER, value);
        Opened::Session {
            outer,
            _named: self.store.name(&id, state),
        }
    }

    /// Remembers that the client of `opened` ended its session.
    pub(in crate::serve) fn end(&self, opened: &Opened<'_>) {
        let Opened::Session { outer, .. } = opened else {
            return;
        };
        let mut ended = self.ended.lock().unwrap();
        if ended.ids.insert(outer.clone()) {
            ended.order.push_back(outer.clone());
        }
        while ended.order.len() > ENDED_KEPT {
            if let Some(oldest) = ended.order.pop_front() {
                ended.ids.remove(&oldest);
            }
        }
    }

    /// Puts the client's id back in an answer's headers: the one it sent, or for a new
    /// session, rmcp's id sealed with the handshake that made it and its `owner`.
    pub(in crate::serve) fn close(
        &self,
        opened: &Opened<'_>,
        headers: &mut http::HeaderMap,
        owner: Option<&str>,
    ) {
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
                state.and_then(|state| {
                    let carried = Carried {
                        id: id.clone(),
                        init: state.initialize_params,
                        owner: owner.map(str::to_string),
                    };
                    self.seal.seal(SESSION, &carried)
                })
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

    #[tokio::test]
    async fn a_named_session_is_restorable_only_while_a_request_names_it() {
        let sessions = SealedSessions::new(Some("a shared secret of some length")).unwrap();
        let carried = Carried {
            id: "rmcp-id".into(),
            init: state().initialize_params,
            owner: None,
        };
        let outer = sessions.seal.seal(SESSION, &carried).unwrap();
        let mut headers = http::HeaderMap::new();
        headers.insert(SESSION_HEADER, outer.parse().unwrap());
        let store = sessions.store();
        {
            let opened = sessions.open(&mut headers, None);
            assert!(matches!(opened, Opened::Session { .. }));
            assert_eq!(headers[SESSION_HEADER], "rmcp-id");
            assert!(store.load("rmcp-id").await.unwrap().is_some());
            sessions.close(&opened, &mut headers, None);
            assert_eq!(headers[SESSION_HEADER], outer.as_str());
        }
        assert!(store.load("rmcp-id").await.unwrap().is_none());

        // Ended by its client: the id still opens, but is refused by name.
        let opened = sessions.open(&mut headers, None);
        sessions.end(&opened);
        drop(opened);
        headers.insert(SESSION_HEADER, outer.parse().unwrap());
        assert!(matches!(sessions.open(&mut headers, None), Opened::Ended));
    }

    #[test]
    fn a_session_opened_with_a_token_is_only_its_owners() {
        let sessions = SealedSessions::new(None).unwrap();
        sessions
            .store
            .handshakes
            .lock()
            .unwrap()
            .insert("rmcp-id".into(), state());
        let mut answer = http::HeaderMap::new();
        answer.insert(SESSION_HEADER, "rmcp-id".parse().unwrap());
        sessions.close(&Opened::None, &mut answer, Some("alice"));
        let outer = answer[SESSION_HEADER].clone();

        let mut request = http::HeaderMap::new();
        request.insert(SESSION_HEADER, outer.clone());
        assert!(matches!(
            sessions.open(&mut request, Some("mallory")),
            Opened::NotOwned
        ));
        assert!(matches!(
            sessions.open(&mut request, None),
            Opened::NotOwned
        ));
        request.insert(SESSION_HEADER, outer);
        assert!(matches!(
            sessions.open(&mut request, Some("alice")),
            Opened::Session { .. }
        ));
    }
}
