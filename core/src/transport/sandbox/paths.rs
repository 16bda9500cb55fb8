//! The paths a sandboxed server needs to run at all, found for it so that a record names only
//! what the server is for: the system's programs and libraries, the server's own program and
//! the runtime behind it (the folder it was installed into, a script's package, the
//! interpreter of a `#!` line), and the caches its launcher writes (npx, uv, pipx).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// Read by every program: the system's programs, libraries, settings and kernel views. A
/// server reads mcpmux's own `/proc` entries no more for it: Landlock keeps a sandboxed
/// process from looking into one outside its sandbox.
const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/etc",
    "/opt",
    "/nix/store",
    "/proc",
    "/sys",
    "/dev",
];

/// Written by every program: the devices a process writes to without meaning a disk.
const SYSTEM_WRITE: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/pts",
    "/dev/shm",
];

/// What a launcher writes to, under the home folder, by the launcher's file name.
const LAUNCHER_CACHES: &[(&[&str], &[&str])] = &[
    (&["npx", "npm", "node", "corepack"], &[".npm"]),
    (&["pnpm", "pnpx"], &[".local/share/pnpm", ".cache/pnpm"]),
    (&["bun", "bunx"], &[".bun"]),
    (&["uv", "uvx"], &[".cache/uv", ".local/share/uv"]),
    (
        &["pipx"],
        &[".local/pipx", ".local/share/pipx", ".cache/pipx"],
    ),
    (&["deno"], &[".cache/deno"]),
];

/// How a server is started, as far as finding its paths goes.
pub(super) struct Launch<'a> {
    pub command: &'a str,
    pub args: &'a [String],
    pub cwd: Option<&'a Path>,
    /// The environment it starts with (its `PATH` and `HOME` are the ones that count).
    pub env: &'a BTreeMap<OsString, OsString>,
}

/// The paths found for a server: read (and run) beneath `read`, write beneath `write`.
#[derive(Debug, Default)]
pub(super) struct Found {
    pub read: Vec<PathBuf>,
    pub write: Vec<PathBuf>,
}

/// The paths `launch` needs, beside what its record grants.
pub(super) fn needed(launch: &Launch) -> Found {
    let mut found = Found {
        read: SYSTEM_READ.iter().map(PathBuf::from).collect(),
        write: SYSTEM_WRITE.iter().map(PathBuf::from).collect(),
    };
    let home = launch.env.get(OsStr::new("HOME")).map(PathBuf::from);
    let program = resolve(launch.command, launch);
    if let Some(program) = &program {
        found.read.extend(install_roots(program, home.as_deref()));
        if let Some(interpreter) = interpreter_of(program).and_then(|i| resolve(&i, launch)) {
            found
                .read
                .extend(install_roots(&interpreter, home.as_deref()));
        }
    }
    found.read.extend(
        launch
            .args
            .iter()
            .filter_map(|arg| script_root(arg, launch)),
    );
    let launcher = Path::new(launch.command)
        .file_name()
        .and_then(OsStr::to_str);
    if let (Some(home), Some(launcher)) = (home, launcher) {
        found.write.extend(caches_of(launcher, &home));
    }
    found
}

/// `~` and `~/…` as the home folder of the server's environment.
pub(super) fn expand_home(path: &str, env: &BTreeMap<OsString, OsString>) -> PathBuf {
    let home = env.get(OsStr::new("HOME")).map(PathBuf::from);
    match (path.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(path),
    }
}

/// Where `command` is: as written when it names a path, else the first on the server's `PATH`.
fn resolve(command: &str, launch: &Launch) -> Option<PathBuf> {
    if command.contains('/') {
        let path = Path::new(command);
        return Some(match (path.is_relative(), launch.cwd) {
            (true, Some(cwd)) => cwd.join(path),
            _ => path.to_path_buf(),
        });
    }
    let path = launch.env.get(OsStr::new("PATH"))?;
    std::env::split_paths(path)
        .map(|dir| dir.join(command))
        .find(|candidate| candidate.is_file())
}

/// The folder a program was installed into, as found and behind its links: a `bin` folder's
/// parent (a virtualenv, a node version, a prefix), else the program's own folder. Not the
/// home folder nor `~/.local` (whose `share` holds the user's keyrings and histories): for a
/// program in `~/bin` or `~/.local/bin`, its folder alone.
fn install_roots(program: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let canonical = program.canonicalize().ok();
    let too_wide = |root: &Path| home.is_some_and(|h| root == h || root == h.join(".local"));
    [Some(program.to_path_buf()), canonical]
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let dir = p.parent()?;
            let root = match dir.file_name() == Some(OsStr::new("bin")) {
                true => dir.parent().filter(|root| root.parent().is_some()),
                false => None,
            };
            let root = root.filter(|root| !too_wide(root));
            Some(root.unwrap_or(dir).to_path_buf())
        })
        .collect()
}

/// The interpreter a `#!` script names (`#!/usr/bin/env node` names `node`).
fn interpreter_of(program: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(program).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = std::str::from_utf8(line.split(|b| *b == b'\n').next()?).ok()?;
    let mut words = line.split_whitespace();
    let first = words.next()?;
    match first.ends_with("/env") {
        true => words.find(|w| !w.starts_with('-')).map(str::to_owned),
        false => Some(first.to_owned()),
    }
}

/// For an argument naming a script file: the package it belongs to (the folder holding its
/// outermost `node_modules`, so that its imports resolve), else its folder. A folder given as
/// an argument is what a server is to work on: the record grants it, or not.
fn script_root(arg: &str, launch: &Launch) -> Option<PathBuf> {
    let path = match (Path::new(arg).is_relative(), launch.cwd) {
        (true, Some(cwd)) => cwd.join(arg),
        _ => PathBuf::from(arg),
    };
    if !path.is_file() {
        return None;
    }
    let outermost_modules = path
        .ancestors()
        .filter(|a| a.file_name() == Some(OsStr::new("node_modules")))
        .last();
    outermost_modules
        .and_then(Path::parent)
        .or_else(|| path.parent())
        .map(Path::to_path_buf)
}

fn caches_of(launcher: &str, home: &Path) -> Vec<PathBuf> {
    LAUNCHER_CACHES
        .iter()
        .filter(|(names, _)| names.contains(&launcher))
        .flat_map(|(_, caches)| caches.iter().map(|c| home.join(c)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<OsString, OsString> {
        pairs.iter().map(|(k, v)| (k.into(), v.into())).collect()
    }

    #[test]
    fn a_program_in_a_bin_folder_is_read_from_its_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("venv/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("server"), "#!/usr/bin/env python3\n").unwrap();
        let env = env(&[("PATH", bin.to_str().unwrap()), ("HOME", "/home/u")]);
        let launch = Launch {
            command: "server",
            args: &[],
            cwd: None,
            env: &env,
        };
        let found = needed(&launch);
        assert!(found.read.contains(&dir.path().join("venv")), "{found:?}");
        // Not the folder above the prefix, nor the home folder.
        assert!(!found.read.contains(&dir.path().to_path_buf()), "{found:?}");
        assert!(!found.read.iter().any(|p| p.starts_with("/home/u")));
    }

    #[test]
    fn a_program_in_the_users_own_bin_folder_is_read_from_that_folder_alone() {
        let home = tempfile::tempdir().unwrap();
        let bin = home.path().join(".local/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("uvx"), "").unwrap();
        let path = bin.display().to_string();
        let home_path = home.path().display().to_string();
        let env = env(&[("PATH", path.as_str()), ("HOME", home_path.as_str())]);
        let launch = Launch {
            command: "uvx",
            args: &[],
            cwd: None,
            env: &env,
        };
        let found = needed(&launch);
        assert!(found.read.contains(&bin), "{found:?}");
        let local = home.path().join(".local");
        assert!(
            !found.read.iter().any(|p| *p == local || p == home.path()),
            "{found:?}"
        );
        assert!(
            found.write.contains(&home.path().join(".cache/uv")),
            "{found:?}"
        );
    }

    #[test]
    fn a_script_in_node_modules_is_read_with_its_whole_package_tree() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("app/node_modules/@scope/pkg/dist/index.js");
        std::fs::create_dir_all(script.parent().unwrap()).unwrap();
        std::fs::write(&script, "").unwrap();
        let env = env(&[("HOME", "/home/u")]);
        let args = [
            script.display().to_string(),
            dir.path().display().to_string(),
        ];
        let launch = Launch {
            command: "npx",
            args: &args,
            cwd: None,
            env: &env,
        };
        let found = needed(&launch);
        assert!(found.read.contains(&dir.path().join("app")), "{found:?}");
        // A folder argument is what the server works on: granted by the record, not here.
        assert!(!found.read.contains(&dir.path().to_path_buf()), "{found:?}");
        assert!(found.write.contains(&PathBuf::from("/home/u/.npm")));
    }

    #[test]
    fn the_home_folder_is_the_servers() {
        let env = env(&[("HOME", "/home/u")]);
        assert_eq!(expand_home("~/notes", &env), PathBuf::from("/home/u/notes"));
        assert_eq!(expand_home("~", &env), PathBuf::from("/home/u"));
        assert_eq!(expand_home("~other/x", &env), PathBuf::from("~other/x"));
        assert_eq!(expand_home("/srv", &env), PathBuf::from("/srv"));
    }
}
