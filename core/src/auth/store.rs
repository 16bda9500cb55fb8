//! Where OAuth tokens live: a [`TokenStore`] the host may implement (keychain, database...),
//! a 0600 file next to the config by default, and the adapter rmcp's authorization manager
//! uses for one server.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde_json::Value;

use crate::boxed_future::BoxFuture;
use crate::config::store::{lock_beside, write_atomic};

/// Keeps each server's OAuth credentials (an opaque JSON document per server id). Errors
/// are messages; the credentials are secrets and must not be logged.
pub trait TokenStore: Send + Sync {
    fn load(&self, server_id: &str) -> BoxFuture<Result<Option<Value>, String>>;
    fn save(&self, server_id: &str, credentials: Value) -> BoxFuture<Result<(), String>>;
    fn clear(&self, server_id: &str) -> BoxFuture<Result<(), String>>;
}

/// Credentials in a JSON file (mode 0600, written atomically under a cross-process lock),
/// by default `<config>.tokens.json`.
#[derive(Debug, Clone)]
pub struct FileTokenStore {
    path: PathBuf,
}

impl FileTokenStore {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileTokenStore { path: path.into() }
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    fn read(&self) -> Result<BTreeMap<String, Value>, String> {
        match std::fs::read(&self.path) {
            Ok(bytes) if bytes.is_empty() => Ok(BTreeMap::new()),
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| format!("token file {} is not valid: {e}", self.path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(format!("cannot read {}: {e}", self.path.display())),
        }
    }

    /// Read, change and write back under the lock, so two processes lose nothing.
    fn update(&self, f: impl FnOnce(&mut BTreeMap<String, Value>)) -> Result<(), String> {
        let _lock = lock_beside(&self.path).map_err(|e| e.to_string())?;
        let mut all = self.read()?;
        f(&mut all);
        let bytes = serde_json::to_vec_pretty(&all).map_err(|e| e.to_string())?;
        write_atomic(&self.path, &bytes).map_err(|e| e.to_string())
    }
}

impl TokenStore for FileTokenStore {
    fn load(&self, server_id: &str) -> BoxFuture<Result<Option<Value>, String>> {
        let result = self.read().map(|mut all| all.remove(server_id));
        Box::pin(async move { result })
    }

    fn save(&self, server_id: &str, credentials: Value) -> BoxFuture<Result<(), String>> {
        let id = server_id.to_string();
        let result = self.update(|all| {
            all.insert(id, credentials);
        });
        Box::pin(async move { result })
    }

    fn clear(&self, server_id: &str) -> BoxFuture<Result<(), String>> {
        let result = self.update(|all| {
            all.remove(server_id);
        });
        Box::pin(async move { result })
    }
}

/// Credentials kept in memory only (lost when the process ends).
#[derive(Debug, Default, Clone)]
pub struct MemoryTokenStore {
    tokens: Arc<Mutex<HashMap<String, Value>>>,
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, server_id: &str) -> BoxFuture<Result<Option<Value>, String>> {
        let v = self.tokens.lock().unwrap().get(server_id).cloned();
        Box::pin(async move { Ok(v) })
    }

    fn save(&self, server_id: &str, credentials: Value) -> BoxFuture<Result<(), String>> {
        self.tokens
            .lock()
            .unwrap()
            .insert(server_id.to_string(), credentials);
        Box::pin(async { Ok(()) })
    }

    fn clear(&self, server_id: &str) -> BoxFuture<Result<(), String>> {
        self.tokens.lock().unwrap().remove(server_id);
        Box::pin(async { Ok(()) })
    }
}

/// One server's slot of a [`TokenStore`], as rmcp's authorization manager sees it.
/// The member of a server's entry in the token store that holds its DPoP key, beside rmcp's
/// credentials (rmcp ignores it).
const DPOP_KEY: &str = "dpopKey";

pub(crate) struct ServerCredentials {
    pub store: Arc<dyn TokenStore>,
    pub server_id: String,
    /// The server's DPoP state: its key is kept in the entry with the tokens it binds, and
    /// each token saved says whether it is bound.
    pub dpop: Arc<super::dpop::Dpop>,
}

impl ServerCredentials {
    /// Reads the server's DPoP key and the type of its current token, if it has them.
    pub async fn load_dpop_key(&self) -> Result<(), AuthError> {
        let Some(entry) = self
            .store
            .load(&self.server_id)
            .await
            .map_err(store_error)?
        else {
            return Ok(());
        };
        if let Some(text) = entry.get(DPOP_KEY).and_then(Value::as_str) {
            // A key that cannot be read is as good as none: tokens it bound are useless, and
            // the next authorization makes a new one.
            if let Ok(key) = super::dpop::DpopKey::from_stored(text) {
                self.dpop.set_key(Arc::new(key));
            }
        }
        if let Some(kind) = entry
            .pointer("/token_response/token_type")
            .and_then(Value::as_str)
        {
            self.dpop.token_issued(kind);
        }
        Ok(())
    }
}

fn store_error(message: String) -> AuthError {
    AuthError::CredentialStoreError(message)
}

#[async_trait::async_trait]
impl CredentialStore for ServerCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        match self
            .store
            .load(&self.server_id)
            .await
            .map_err(store_error)?
        {
            None => Ok(None),
            // Unreadable credentials are as good as none: the user authorizes again.
            Some(v) => Ok(serde_json::from_value(v).ok()),
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let mut v = serde_json::to_value(&credentials).map_err(|e| store_error(e.to_string()))?;
        if let Some(key) = self.dpop.key() {
            v[DPOP_KEY] = key.to_stored().into();
        }
        if let Some(kind) = v
            .pointer("/token_response/token_type")
            .and_then(Value::as_str)
        {
            self.dpop.token_issued(kind);
        }
        self.store
            .save(&self.server_id, v)
            .await
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.store.clear(&self.server_id).await.map_err(store_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::os::unix::fs::PermissionsExt;

    #[tokio::test]
    async fn the_file_store_keeps_each_server_apart_with_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileTokenStore::new(dir.path().join("servers.json.tokens.json"));
        assert_eq!(store.load("a").await.unwrap(), None);
        store.save("a", json!({"t": 1})).await.unwrap();
        store.save("b", json!({"t": 2})).await.unwrap();
        assert_eq!(store.load("a").await.unwrap(), Some(json!({"t": 1})));
        store.clear("a").await.unwrap();
        assert_eq!(store.load("a").await.unwrap(), None);
        assert_eq!(store.load("b").await.unwrap(), Some(json!({"t": 2})));
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // A corrupt file is an error, never silently replaced.
        std::fs::write(store.path(), "{oops").unwrap();
        assert!(store.load("b").await.unwrap_err().contains("not valid"));
        assert!(store.save("c", json!(1)).await.is_err());
        assert_eq!(std::fs::read_to_string(store.path()).unwrap(), "{oops");
    }

    /// Writers at once (each a store of its own, as two processes are) lose nothing: every
    /// save is read, changed and written back under the file's lock.
    #[tokio::test]
    async fn stores_saving_at_once_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("servers.json.tokens.json");
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let store = FileTokenStore::new(&path);
                std::thread::spawn(move || {
                    for i in 0..25 {
                        let id = format!("server-{w}-{i}");
                        futures::executor::block_on(store.save(&id, json!({"w": w, "i": i})))
                            .unwrap();
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        let store = FileTokenStore::new(&path);
        let all = store.read().unwrap();
        assert_eq!(all.len(), 100, "{:?}", all.keys().collect::<Vec<_>>());
        for w in 0..4 {
            for i in 0..25 {
                let id = format!("server-{w}-{i}");
                assert_eq!(all.get(&id), Some(&json!({"w": w, "i": i})), "{id}");
            }
        }
    }
}
