//! mcpmux's benchmark harness: figures beside each language's floor. See bench/README.md.
//!
//! ```text
//! mcpmux-bench all [--quick] [--rounds R] [--k K] [--conc C] [--only a,b] [--no-scale]
//! mcpmux-bench client raw|rmcp|rmcp-ct|mcpmux|mcpmux-ct|mcpmux-serve|relay [--k K] [--conc C]
//! mcpmux-bench relay-front    # a byte relay, the floor of any front (`relay`)
//! mcpmux-bench scale connect|pool|search|agent [--servers N] [--tools T] [--turns N]
//! ```
//!
//! Every client and scale figure runs in a process of its own and prints one JSON line; `all`
//! runs them interleaved over several rounds and prints medians, ratios and the targets.

mod agent_turn;
mod clients;
#[path = "../../core/benches/support/corpus.rs"]
mod corpus;
mod driver;
mod scale;
mod serve;

use std::path::PathBuf;
use std::time::Duration;

/// Command-line flags after the subcommand words: `--name value` pairs and bare `--flag`s.
pub(crate) struct Flags(Vec<(String, Option<String>)>);

impl Flags {
    fn parse(args: &[String]) -> Flags {
        let mut out = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let name = args[i].trim_start_matches("--").to_string();
            let value = args.get(i + 1).filter(|v| !v.starts_with("--")).cloned();
            i += 1 + value.is_some() as usize;
            out.push((name, value));
        }
        Flags(out)
    }

    pub fn has(&self, name: &str) -> bool {
        self.0.iter().any(|(n, _)| n == name)
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    pub fn num(&self, name: &str, default: usize) -> usize {
        match self.get(name) {
            Some(v) => v
                .parse()
                .unwrap_or_else(|_| fail(&format!("--{name}: not a number"))),
            None => default,
        }
    }
}

pub(crate) fn fail(message: &str) -> ! {
    eprintln!("mcpmux-bench: {message}");
    std::process::exit(2);
}

/// The bench server binary, built beside this one.
pub(crate) fn server_path() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let server = exe.with_file_name("bench-server");
    if !server.exists() {
        fail(&format!(
            "{} is missing: build with `cargo build --release -p mcpmux-bench`",
            server.display()
        ));
    }
    server
}

/// The repository root (the bench reads the Python and Node clients and .deps/ from there).
pub(crate) fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("bench/ has a parent")
        .to_path_buf()
}

/// A numeric field of /proc/self/status (`Threads`; sizes are in kB).
pub(crate) fn proc_status(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .unwrap_or(f64::NAN)
}

/// A size of /proc/self/status in MB (`VmHWM` = peak RSS, `VmRSS` = current RSS).
pub(crate) fn proc_status_mb(field: &str) -> f64 {
    proc_status(field) / 1024.0
}

/// The `p` quantile (0..=1) of sorted samples.
pub(crate) fn quantile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let words: Vec<&str> = args
        .iter()
        .take_while(|a| !a.starts_with("--"))
        .map(String::as_str)
        .collect();
    let flags = Flags::parse(&args[words.len()..]);
    match words.as_slice() {
        ["all"] | [] => driver::all(&flags),
        ["client", name] => clients::run(name, &flags),
        ["scale", what] => scale::run(what, &flags),
        ["relay-front"] => serve::relay_front(),
        _ => fail(
            "usage: mcpmux-bench all [--quick] [--rounds R] [--k K] [--conc C] [--only a,b] [--no-scale]\n\
             \x20      mcpmux-bench client raw|rmcp|rmcp-ct|mcpmux|mcpmux-ct|mcpmux-serve|relay [--k K] [--conc C]\n\
             \x20      mcpmux-bench scale connect|pool|search [--servers N] [--tools T]",
        ),
    }
}
