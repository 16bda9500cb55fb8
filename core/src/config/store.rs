//! The persistent server list: one JSON file, written atomically and locked across processes.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind as IoKind, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::record::ServerRecord;
use crate::error::{Error, Result};

/// Environment variable that overrides the default config path.
pub const CONFIG_ENV: &str = "MCPMUX_CONFIG";

/// The on-disk document. Unknown top-level keys are kept so that a newer or foreign writer loses nothing.
#[derive(Serialize, Deserialize, Default)]
struct StoreFile {
    #[serde(rename = "mcpServers", default)]
    servers: Vec<ServerRecord>,
    #[serde(flatten)]
    extra: serde_json::Map<String, serde_json::Value>,
}

/// A handle on the config file; cheap to clone. All methods block: async callers use `spawn_blocking`.
#[derive(Debug, Clone)]
pub struct ConfigStore {
    path: PathBuf,
}

impl ConfigStore {
    /// A store at `path` (the file need not exist yet).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        ConfigStore { path: path.into() }
    }

    /// `$MCPMUX_CONFIG`, else `<platform config dir>/mcpmux/servers.json`.
    pub fn default_path() -> Result<PathBuf> {
        if let Some(p) = std::env::var_os(CONFIG_ENV).filter(|p| !p.is_empty()) {
            return Ok(PathBuf::from(p));
        }
        dirs::config_dir()
            .map(|d| d.join("mcpmux").join("servers.json"))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "no platform config directory; set {CONFIG_ENV} or pass a config path"
                ))
            })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads every record. A missing file is an empty list; a malformed one is an error naming
    /// the file and the position. No lock is needed: writers replace the file atomically.
    pub fn load(&self) -> Result<Vec<ServerRecord>> {
        Ok(self.read()?.servers)
    }

    /// Runs `f` on the records under an exclusive cross-process lock and writes the result
    /// atomically. If `f` fails, or the file on disk cannot be parsed, nothing is written;
    /// nor when `f` changed nothing (other processes watching the file are not woken).
    pub fn update<R>(&self, f: impl FnOnce(&mut Vec<ServerRecord>) -> Result<R>) -> Result<R> {
        let _lock = self.lock()?;
        let mut doc = self.read()?;
        let before = doc.servers.clone();
        let out = f(&mut doc.servers)?;
        if doc.servers == before {
            return Ok(out);
        }
        let mut bytes = serde_json::to_vec_pretty(&doc)
            .map_err(|e| Error::invalid(format!("cannot serialize config: {e}")))?;
        bytes.push(b'\n');
        write_atomic(&self.path, &bytes)?;
        Ok(out)
    }

    fn read(&self) -> Result<StoreFile> {
        let bytes = match fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == IoKind::NotFound => return Ok(StoreFile::default()),
            Err(e) => {
                return Err(Error::io(
                    format!("cannot read config file {}", self.path.display()),
                    e,
                ));
            }
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(StoreFile::default());
        }
        let invalid = |message: String| Error::InvalidConfig {
            path: self.path.clone(),
            message,
        };
        let file: StoreFile = serde_json::from_slice(&bytes)
            .map_err(|e| invalid(foreign_form(&bytes).unwrap_or_else(|| e.to_string())))?;
        // VS Code's form parses (its `servers` is an unknown key), but as no servers at all.
        if file.servers.is_empty()
            && file.extra.get("servers").is_some_and(|s| s.is_object())
            && let Some(message) = foreign_form(&bytes)
        {
            return Err(invalid(message));
        }
        Ok(file)
    }

    /// The lock lives in a side file because the data file itself is replaced on every write.
    fn lock(&self) -> Result<File> {
        lock_beside(&self.path)
    }
}

/// Why a file that is not mcpmux's config fails to load, when it is another host's: Claude
/// Desktop and Cursor keep `mcpServers`, and VS Code `servers`, as an object of servers by
/// name, where mcpmux keeps a list of records. Pointing the config at such a file is a natural
/// first try, and serde's "expected a sequence" does not say what to do instead.
fn foreign_form(bytes: &[u8]) -> Option<String> {
    let doc: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let (key, hosts) = match (doc.get("mcpServers"), doc.get("servers")) {
        (Some(servers), _) if servers.is_object() => ("mcpServers", "Claude Desktop and Cursor"),
        (None, Some(servers)) if servers.is_object() => ("servers", "VS Code"),
        _ => return None,
    };
    Some(format!(
        "`{key}` is an object of servers by name, as {hosts} write it, not mcpmux's list of \
         server records. Keep this file as it is, give mcpmux a config of its own (another \
         path, or the default), and import these servers into it: `mcpmux servers import \
         FILE`, or a pool's `add_json` (`addJson` in Node) with this file's text"
    ))
}

/// Takes an exclusive cross-process lock on `<path>.lock`, creating the folder (0700) and the
/// lock file (0600) if needed. Held until the returned file is dropped.
pub(crate) fn lock_beside(path: &Path) -> Result<File> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    let lock_path = sibling(path, ".lock");
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&lock_path)
        .map_err(|e| Error::io(format!("cannot open {}", lock_path.display()), e))?;
    file.lock()
        .map_err(|e| Error::io(format!("cannot lock {}", lock_path.display()), e))?;
    Ok(file)
}

pub(crate) fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// Temp file in the same directory, fsync, rename over, fsync the directory: a reader sees the
/// old or the new document, never a half-written one, even if this process is killed.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = sibling(
        path,
        &format!(".tmp-{}-{:08x}", std::process::id(), rand::random::<u32>()),
    );
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && let Ok(d) = File::open(dir)
        {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    result.map_err(|e: std::io::Error| {
        let _ = fs::remove_file(&tmp);
        Error::io(format!("cannot write config file {}", path.display()), e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::record::{ServerConfig, ServerInput};
    use std::os::unix::fs::PermissionsExt;

    fn rec(name: &str) -> ServerRecord {
        ServerInput {
            name: name.into(),
            config: ServerConfig {
                command: Some("x".into()),
                ..Default::default()
            },
            ..Default::default()
        }
        .into_record()
        .unwrap()
    }

    #[test]
    fn missing_file_is_empty_and_writes_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let store = ConfigStore::new(dir.path().join("sub/servers.json"));
        assert!(store.load().unwrap().is_empty());
        store
            .update(|s| {
                s.push(rec("a"));
                Ok(())
            })
            .unwrap();
        let mode = fs::metadata(store.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(store.load().unwrap()[0].name, "a");
        let text = fs::read_to_string(store.path()).unwrap();
        assert!(text.contains("\"mcpServers\""));
    }

    #[test]
    fn an_update_that_changes_nothing_leaves_the_file_alone() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let store = ConfigStore::new(dir.path().join("servers.json"));
        store.update(|_| Ok(())).unwrap();
        assert!(!store.path().exists(), "an empty update created the file");
        store
            .update(|s| {
                s.push(rec("a"));
                Ok(())
            })
            .unwrap();
        // Every write replaces the file (a new inode): the same one means none was made.
        let inode = fs::metadata(store.path()).unwrap().ino();
        store.update(|s| Ok(s.len())).unwrap();
        assert_eq!(fs::metadata(store.path()).unwrap().ino(), inode);
    }

    /// A store whose file did not load must refuse every update, so the file stays as it is.
    fn update_is_refused(store: &ConfigStore) -> bool {
        store
            .update(|s| {
                s.push(rec("a"));
                Ok(())
            })
            .is_err()
    }

    #[test]
    fn malformed_file_is_reported_and_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("servers.json");
        fs::write(&path, "{\n  \"mcpServers\": [\n    {oops}\n  ]\n}\n").unwrap();
        let store = ConfigStore::new(&path);
        let err = store.load().unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(path.to_str().unwrap()), "{msg}");
        assert!(msg.contains("line 3"), "{msg}");
        assert_eq!(err.kind(), crate::error::ErrorKind::InvalidConfig);
        assert!(update_is_refused(&store));
        assert!(fs::read_to_string(&path).unwrap().contains("{oops}"));
    }

    #[test]
    fn another_hosts_config_is_named_as_such_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("claude_desktop_config.json");
        let theirs = r#"{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}"#;
        fs::write(&path, theirs).unwrap();
        let store = ConfigStore::new(&path);
        let err = store.load().unwrap_err();
        assert_eq!(err.kind(), crate::error::ErrorKind::InvalidConfig);
        let msg = err.to_string();
        assert!(msg.contains(path.to_str().unwrap()), "{msg}");
        assert!(msg.contains("Claude Desktop"), "{msg}");
        assert!(msg.contains("mcpmux servers import"), "{msg}");
        assert!(update_is_refused(&store));
        assert_eq!(fs::read_to_string(&path).unwrap(), theirs);

        let vs_code = r#"{"servers": {"time": {"type": "stdio", "command": "uvx"}}}"#;
        fs::write(&path, vs_code).unwrap();
        let msg = store.load().unwrap_err().to_string();
        assert!(msg.contains("VS Code"), "{msg}");
        assert_eq!(fs::read_to_string(&path).unwrap(), vs_code);
    }

    #[test]
    fn failed_update_writes_nothing_and_unknown_keys_survive() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("servers.json");
        fs::write(&path, r#"{"mcpServers": [], "theirSetting": 7}"#).unwrap();
        let store = ConfigStore::new(&path);
        let r: Result<()> = store.update(|s| {
            s.push(rec("a"));
            Err(Error::invalid("no"))
        });
        assert!(r.is_err());
        assert!(store.load().unwrap().is_empty());
        store
            .update(|s| {
                s.push(rec("b"));
                Ok(())
            })
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_eq!(v["theirSetting"], 7);
    }

    #[test]
    fn threads_adding_concurrently_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = ConfigStore::new(dir.path().join("servers.json"));
        std::thread::scope(|s| {
            for t in 0..4 {
                let store = store.clone();
                s.spawn(move || {
                    for i in 0..25 {
                        store
                            .update(|v| {
                                v.push(rec(&format!("t{t}-{i}")));
                                Ok(())
                            })
                            .unwrap();
                    }
                });
            }
        });
        assert_eq!(store.load().unwrap().len(), 100);
    }
}
