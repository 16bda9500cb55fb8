//! The tool catalog: the last known tools of every server, saved beside the config so that
//! search and discovery work at start-up without connecting anything.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::record::now_ms;
use crate::store::{lock_beside, write_atomic};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    server_name: String,
    fetched_at: u64,
    tools: Vec<Tool>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CatalogFile {
    #[serde(default)]
    servers: HashMap<String, Entry>,
}

/// The catalog of one config file.
pub(crate) struct Catalog {
    path: PathBuf,
    tools: RwLock<HashMap<String, Arc<Vec<Tool>>>>,
}

impl Catalog {
    /// `servers.json` → `servers.tools.json`. A missing or unreadable catalog is empty: it is a
    /// cache, and never a reason to fail.
    pub fn open(config_path: &Path) -> Catalog {
        let stem = config_path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "servers".into());
        let path = config_path.with_file_name(format!("{stem}.tools.json"));
        let tools = match read(&path) {
            Ok(file) => file
                .servers
                .into_iter()
                .map(|(id, e)| (id, Arc::new(e.tools)))
                .collect(),
            Err(e) => {
                tracing::warn!("ignoring the tool catalog: {e}");
                HashMap::new()
            }
        };
        Catalog {
            path,
            tools: RwLock::new(tools),
        }
    }

    pub fn get(&self, server_id: &str) -> Option<Arc<Vec<Tool>>> {
        self.tools.read().unwrap().get(server_id).cloned()
    }

    /// Records a server's fresh list; returns whether it differs from what was known, in
    /// which case the file is rewritten (in the background).
    pub fn put(&self, server_id: &str, server_name: &str, tools: Arc<Vec<Tool>>) -> bool {
        {
            let mut map = self.tools.write().unwrap();
            if map.get(server_id).is_some_and(|known| *known == tools) {
                return false;
            }
            map.insert(server_id.to_string(), tools.clone());
        }
        let path = self.path.clone();
        let (id, name) = (server_id.to_string(), server_name.to_string());
        tokio::task::spawn_blocking(move || {
            let result = update(&path, |file| {
                file.servers.insert(
                    id,
                    Entry {
                        server_name: name,
                        fetched_at: now_ms(),
                        tools: (*tools).clone(),
                    },
                );
            });
            if let Err(e) = result {
                tracing::warn!("cannot save the tool catalog: {e}");
            }
        });
        true
    }

    /// Forgets a removed server.
    pub fn remove(&self, server_id: &str) {
        if self.tools.write().unwrap().remove(server_id).is_none() {
            return;
        }
        let path = self.path.clone();
        let id = server_id.to_string();
        tokio::task::spawn_blocking(move || {
            if let Err(e) = update(&path, |file| {
                file.servers.remove(&id);
            }) {
                tracing::warn!("cannot save the tool catalog: {e}");
            }
        });
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
