//! The tool catalog: the last known tools of every server, and what each said of itself when
//! it connected (its `ServerInfo`), saved beside the config so that search, discovery and a
//! host's server list work at start-up without connecting anything.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::record::now_ms;
use crate::config::store::{lock_beside, write_atomic};
use crate::error::{Error, Result};
use crate::pool::ServerInfo;
use crate::tools::ToolList;
use crate::tools::stored_tool::StoredTool;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    server_name: String,
    fetched_at: u64,
    /// The record's config key when the list was made (see `ServerRecord::config_key`);
    /// entries written before it existed have none, and count as stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    config_key: Option<String>,
    tools: Vec<StoredTool>,
}

/// A server's last known list, and the config it was made from.
struct Known {
    config_key: Option<String>,
    tools: ToolList,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CatalogFile {
    #[serde(default)]
    servers: HashMap<String, Entry>,
    /// What each server said of itself at its last connection.
    #[serde(default, skip_serializing_if = "HashMap::is_empty")]
    about: HashMap<String, ServerInfo>,
}

/// A change not yet written.
enum Change {
    /// A server's tools to save, or `None` to forget them.
    Tools(Option<Entry>),
    /// What a server said of itself.
    About(ServerInfo),
    /// A removed server: everything of it goes.
    Removed,
}

/// Changes not yet written, by server and kind (a later change of a kind replaces an earlier).
type Pending = HashMap<(String, bool), Change>;

/// The catalog of one config file.
pub(crate) struct Catalog {
    path: PathBuf,
    tools: RwLock<HashMap<String, Known>>,
    about: RwLock<HashMap<String, Arc<ServerInfo>>>,
    /// One writer at a time takes every change queued here: fifty servers listed at once
    /// make a couple of writes of the file, not fifty read-modify-writes racing for its lock.
    pending: Arc<Mutex<(Pending, bool)>>,
}

/// How long the writer waits for more changes before writing.
const COALESCE: Duration = Duration::from_millis(50);

impl Catalog {
    /// `servers.json` → `servers.tools.json`. A missing or unreadable catalog is empty: it is a
    /// cache, and never a reason to fail.
    pub fn open(config_path: &Path) -> Catalog {
        let stem = config_path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "servers".into());
        let path = config_path.with_file_name(format!("{stem}.tools.json"));
        let file = read(&path).unwrap_or_else(|e| {
            tracing::warn!("ignoring the tool catalog: {e}");
            CatalogFile::default()
        });
        let tools = file
            .servers
            .into_iter()
            .map(|(id, e)| {
                let known = Known {
                    config_key: e.config_key,
                    tools: Arc::new(e.tools),
                };
                (id, known)
            })
            .collect();
        let about = file
            .about
            .into_iter()
            .map(|(id, info)| (id, Arc::new(info)))
            .collect();
        Catalog {
            path,
            tools: RwLock::new(tools),
            about: RwLock::new(about),
            pending: Arc::default(),
        }
    }

    /// Queues a change and makes sure a writer will save it.
    fn save(&self, server_id: String, change: Change) {
        let start = {
            let mut pending = self.pending.lock().unwrap();
            let about = matches!(change, Change::About(_));
            if matches!(change, Change::Removed) {
                pending.0.remove(&(server_id.clone(), !about));
            }
            pending.0.insert((server_id, about), change);
            !std::mem::replace(&mut pending.1, true)
        };
        if !start {
            return;
        }
        let (path, pending) = (self.path.clone(), self.pending.clone());
        tokio::task::spawn_blocking(move || {
            loop {
                std::thread::sleep(COALESCE);
                let batch = {
                    let mut p = pending.lock().unwrap();
                    if p.0.is_empty() {
                        p.1 = false;
                        drop(p);
                        // Reading and rewriting the whole file left megabytes freed.
                        crate::memory::trim_now();
                        return;
                    }
                    std::mem::take(&mut p.0)
                };
                let result = update(&path, |file| {
                    for ((id, _), change) in batch {
                        match change {
                            Change::Tools(Some(e)) => {
                                file.servers.insert(id, e);
                            }
                            Change::Tools(None) => {
                                file.servers.remove(&id);
                            }
                            Change::About(info) => {
                                file.about.insert(id, info);
                            }
                            Change::Removed => {
                                file.servers.remove(&id);
                                file.about.remove(&id);
                            }
                        }
                    }
                });
                if let Err(e) = result {
                    tracing::warn!("cannot save the tool catalog: {e}");
                }
            }
        });
    }

    /// The server's last known list, if it was made from the config whose key is `config_key`
    /// (a list made from another config is stale: it is never answered from).
    pub fn get(&self, server_id: &str, config_key: &str) -> Option<ToolList> {
        let map = self.tools.read().unwrap();
        let known = map.get(server_id)?;
        (known.config_key.as_deref() == Some(config_key)).then(|| known.tools.clone())
    }

    /// Records a server's fresh list, made from the config whose key is `config_key`; returns
    /// whether it differs from what was known, in which case the file is rewritten (in the
    /// background). A list that is not `shareable` (the server marked it private to this
    /// user) is known to this pool only: the file, which other processes read, drops the
    /// server's entry instead.
    pub fn put(
        &self,
        server_id: &str,
        server_name: &str,
        config_key: &str,
        tools: ToolList,
        shareable: bool,
    ) -> bool {
        {
            let mut map = self.tools.write().unwrap();
            if map.get(server_id).is_some_and(|known| {
                known.tools == tools && known.config_key.as_deref() == Some(config_key)
            }) {
                return false;
            }
            let known = Known {
                config_key: Some(config_key.to_string()),
                tools: tools.clone(),
            };
            map.insert(server_id.to_string(), known);
        }
        let entry = shareable.then(|| Entry {
            server_name: server_name.to_string(),
            fetched_at: now_ms(),
            config_key: Some(config_key.to_string()),
            tools: (*tools).clone(),
        });
        self.save(server_id.to_string(), Change::Tools(entry));
        true
    }

    /// What the server said of itself at its last connection, if it ever connected.
    pub fn about(&self, server_id: &str) -> Option<Arc<ServerInfo>> {
        self.about.read().unwrap().get(server_id).cloned()
    }

    /// Records what a server said of itself when it connected; the file is rewritten (in the
    /// background) when it differs from what was known.
    pub fn set_about(&self, server_id: &str, info: ServerInfo) -> Arc<ServerInfo> {
        let mut about = self.about.write().unwrap();
        if let Some(known) = about.get(server_id).filter(|k| ***k == info) {
            return known.clone();
        }
        let info = Arc::new(info);
        about.insert(server_id.to_string(), info.clone());
        drop(about);
        self.save(server_id.to_string(), Change::About((*info).clone()));
        info
    }

    /// Waits, up to `limit`, until every change queued so far is written: a pool that closed
    /// leaves the file complete for the next one to open.
    pub async fn flush(&self, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        while self.pending.lock().unwrap().1 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Forgets a removed server.
    pub fn remove(&self, server_id: &str) {
        let had_tools = self.tools.write().unwrap().remove(server_id).is_some();
        let had_about = self.about.write().unwrap().remove(server_id).is_some();
        if had_tools || had_about {
            self.save(server_id.to_string(), Change::Removed);
        }
    }
}

fn read(path: &Path) -> Result<CatalogFile> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| Error::InvalidConfig {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(CatalogFile::default()),
        Err(e) => Err(Error::io(format!("cannot read {}", path.display()), e)),
    }
}

/// Read, change, write under the lock, so two processes refreshing different servers both
/// keep their entries.
fn update(path: &Path, f: impl FnOnce(&mut CatalogFile)) -> Result<()> {
    let _lock = lock_beside(path)?;
    let mut file = read(path).unwrap_or_default();
    f(&mut file);
    let bytes = serde_json::to_vec(&file)
        .map_err(|e| Error::invalid(format!("cannot serialize the tool catalog: {e}")))?;
    write_atomic(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> StoredTool {
        serde_json::from_value(serde_json::json!({
            "name": name, "inputSchema": {"type": "object"}
        }))
        .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_changes_at_once_are_all_saved() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("servers.json");
        let catalog = Catalog::open(&config);
        for i in 0..50 {
            let tools = Arc::new(vec![tool(&format!("t{i}"))]);
            assert!(catalog.put(&format!("s{i}"), "n", "k", tools, true));
        }
        catalog.remove("s7");
        let saved = || read(&dir.path().join("servers.tools.json")).unwrap_or_default();
        for _ in 0..100 {
            if saved().servers.len() == 49 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let file = saved();
        assert_eq!(file.servers.len(), 49);
        assert!(!file.servers.contains_key("s7"));
        // A new catalog on the same file knows them all, for the config they were made from.
        let again = Catalog::open(&config);
        assert_eq!(again.get("s42", "k").unwrap()[0].name(), "t42");
        assert!(again.get("s42", "other").is_none());
    }

    #[tokio::test]
    async fn an_entry_without_a_config_key_is_stale() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("servers.json");
        let old = r#"{"servers": {"s1": {"serverName": "n", "fetchedAt": 1,
            "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}}}"#;
        std::fs::write(dir.path().join("servers.tools.json"), old).unwrap();
        let catalog = Catalog::open(&config);
        assert!(catalog.get("s1", "k").is_none());
        // The same list again, now with its key, is a change worth saving.
        let tools = Arc::new(vec![tool("t")]);
        assert!(catalog.put("s1", "n", "k", tools.clone(), true));
        assert!(!catalog.put("s1", "n", "k", tools, true));
        assert_eq!(catalog.get("s1", "k").unwrap()[0].name(), "t");
    }

    #[tokio::test]
    async fn what_a_server_said_of_itself_is_kept_for_the_next_pool() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("servers.json");
        let catalog = Catalog::open(&config);
        let info = ServerInfo {
            server_info: Some(serde_json::json!({"name": "files", "version": "1"})),
            instructions: Some("Read before you write.".into()),
            capabilities: serde_json::json!({"tools": {}}),
            protocol_version: "2026-07-28".into(),
        };
        let first = catalog.set_about("s1", info.clone());
        assert!(Arc::ptr_eq(&first, &catalog.set_about("s1", info.clone())));
        assert!(catalog.put("s1", "files", "k", Arc::new(vec![tool("t")]), true));
        catalog.flush(Duration::from_secs(5)).await;
        let again = Catalog::open(&config);
        assert_eq!(*again.about("s1").unwrap(), info);
        again.remove("s1");
        again.flush(Duration::from_secs(5)).await;
        let file = read(&dir.path().join("servers.tools.json")).unwrap();
        assert!(file.about.is_empty() && file.servers.is_empty());
    }

    #[tokio::test]
    async fn a_private_list_is_known_to_the_pool_but_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("servers.json");
        let catalog = Catalog::open(&config);
        assert!(catalog.put("public", "p", "k", Arc::new(vec![tool("a")]), true));
        // A server whose list was public once, then private: its entry leaves the file.
        assert!(catalog.put("mine", "m", "k", Arc::new(vec![tool("b")]), true));
        assert!(catalog.put("mine", "m", "k", Arc::new(vec![tool("c")]), false));
        catalog.flush(Duration::from_secs(5)).await;
        assert_eq!(catalog.get("mine", "k").unwrap()[0].name(), "c");
        let file = read(&dir.path().join("servers.tools.json")).unwrap();
        assert!(file.servers.contains_key("public"));
        assert!(
            !file.servers.contains_key("mine"),
            "{:?}",
            file.servers.keys()
        );
        assert!(Catalog::open(&config).get("mine", "k").is_none());
    }
}
