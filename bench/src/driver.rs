//! `mcpmux-bench all`: every client and scale figure in its own process, interleaved over
//! several rounds; medians, ratios to the floor and to each language's anchor, peak RSS, and
//! the speed targets (bench/README.md) with pass/fail.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{Flags, fail, repo_root, server_path};

/// One client of the comparison.
struct Client {
    name: &'static str,
    lang: &'static str,
    /// What it is, for the table.
    what: &'static str,
}

const CLIENTS: &[Client] = &[
    Client {
        name: "raw",
        lang: "rust",
        what: "raw pipe, preformatted lines (floor)",
    },
    Client {
        name: "raw-tokio",
        lang: "rust",
        what: "raw pipe on tokio's default runtime: reader task, oneshot per request (tokio's floor)",
    },
    Client {
        name: "rmcp",
        lang: "rust",
        what: "rmcp 3.11, multi-thread runtime (Rust anchor)",
    },
    Client {
        name: "rmcp-ct",
        lang: "rust",
        what: "rmcp 3.11, current-thread runtime",
    },
    Client {
        name: "mcpmux",
        lang: "rust",
        what: "mcpmux Pool, multi-thread runtime",
    },
    Client {
        name: "mcpmux-ct",
        lang: "rust",
        what: "mcpmux Pool, current-thread runtime",
    },
    Client {
        name: "mcpmux-serve",
        lang: "rust",
        what: "rmcp 3.11 through `mcpmux serve --stdio` (what the front adds to `rmcp`)",
    },
    Client {
        name: "relay",
        lang: "rust",
        what: "rmcp 3.11 through a process that only copies bytes (the floor of any front)",
    },
    Client {
        name: "mcpmux-serve-http",
        lang: "rust",
        what: "rmcp 3.11's Streamable HTTP client through `mcpmux serve --http` on 127.0.0.1",
    },
    Client {
        name: "python-pipe",
        lang: "python",
        what: "asyncio on raw pipes, no parsing (Python's floor)",
    },
    Client {
        name: "python-pipe-json",
        lang: "python",
        what: "the same plus `json.dumps` of the arguments and `json.loads` of each reply (Python's floor for parsed results)",
    },
    Client {
        name: "python-sdk",
        lang: "python",
        what: "official Python SDK `mcp` (Python anchor)",
    },
    Client {
        name: "mcpmux-python",
        lang: "python",
        what: "mcpmux Python binding",
    },
    Client {
        name: "node-pipe",
        lang: "node",
        what: "child_process pipes, no parsing (Node's floor)",
    },
    Client {
        name: "node-pipe-json",
        lang: "node",
        what: "the same plus `JSON.stringify` of the arguments and `JSON.parse` of each reply (Node's floor for parsed results)",
    },
    Client {
        name: "ts-sdk",
        lang: "node",
        what: "official TypeScript SDK (Node anchor)",
    },
    Client {
        name: "mcpmux-node",
        lang: "node",
        what: "mcpmux Node binding",
    },
];

fn anchor(lang: &str) -> &'static str {
    match lang {
        "python" => "python-sdk",
        "node" => "ts-sdk",
        _ => "rmcp",
    }
}

struct Paths {
    python: PathBuf,
    node_addon: PathBuf,
    ts_sdk: PathBuf,
    clients: PathBuf,
}

impl Paths {
    fn new() -> Paths {
        let root = repo_root();
        Paths {
            python: std::env::var_os("MCPMUX_BENCH_PYTHON")
                .map(PathBuf::from)
                .unwrap_or_else(|| root.join(".deps/bench-venv/bin/python")),
            node_addon: root.join(".deps/bench-node/mcpmux.linux-x64-gnu.node"),
            ts_sdk: root.join("bench/node_modules/@modelcontextprotocol/sdk"),
            clients: root.join("bench/clients"),
        }
    }

    /// The command that runs `client`, or why it cannot run here.
    fn command(&self, client: &str, k: usize, conc: usize) -> Result<Command, String> {
        let server = server_path();
        let script = |interpreter: &Path, file: &str| {
            let mut c = Command::new(interpreter);
            c.arg(self.clients.join(file))
                .arg(&server)
                .arg(k.to_string())
                .arg(conc.to_string());
            c
        };
        let need = |path: &Path| {
            if path.exists() {
                Ok(())
            } else {
                Err(format!(
                    "{} is missing (run `bash bench/setup.sh`)",
                    path.display()
                ))
            }
        };
        match client {
            "python-sdk" => {
                need(&self.python)?;
                Ok(script(&self.python, "python_sdk.py"))
            }
            "mcpmux-python" => {
                need(&self.python)?;
                Ok(script(&self.python, "mcpmux_python.py"))
            }
            "python-pipe" => {
                need(&self.python)?;
                Ok(script(&self.python, "python_pipe.py"))
            }
            "python-pipe-json" => {
                need(&self.python)?;
                let mut c = script(&self.python, "python_pipe.py");
                c.arg("--json");
                Ok(c)
            }
            "node-pipe" => Ok(script(Path::new("node"), "node_pipe.js")),
            "node-pipe-json" => {
                let mut c = script(Path::new("node"), "node_pipe.js");
                c.arg("--json");
                Ok(c)
            }
            "ts-sdk" => {
                need(&self.ts_sdk)?;
                Ok(script(Path::new("node"), "ts_sdk.mjs"))
            }
            "mcpmux-node" => {
                need(&self.node_addon)?;
                Ok(script(Path::new("node"), "mcpmux_node.js"))
            }
            rust => {
                let mut c = Command::new(std::env::current_exe().unwrap());
                c.args(["client", rust, "--k", &k.to_string(), "--conc"])
                    .arg(conc.to_string());
                Ok(c)
            }
        }
    }
}

/// Runs a command that prints one JSON line last; `None` (and the reason on stderr) if it
/// fails or outlives `timeout`.
fn run_json(mut cmd: Command, label: &str, timeout: Duration) -> Option<Value> {
    let mut child = match cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("  {label}: cannot start: {e}");
            return None;
        }
    };
    // Drain both pipes in threads so a chatty child never blocks.
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => break None,
        }
    };
    let (out, err) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    let parsed = out
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .and_then(|l| serde_json::from_str::<Value>(l).ok());
    match (status, parsed) {
        (Some(s), Some(v)) if s.success() => Some(v),
        (status, _) => {
            let why = match status {
                None => format!("no answer within {timeout:?}"),
                Some(s) => format!("exited with {s}"),
            };
            let tail: Vec<&str> = err.lines().rev().take(8).collect();
            eprintln!("  {label}: {why}");
            for l in tail.into_iter().rev() {
                eprintln!("    {l}");
            }
            None
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Medians of every numeric field over rounds.
fn medians(runs: &[Value]) -> BTreeMap<String, f64> {
    let mut fields: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for run in runs {
        for (k, v) in run.as_object().into_iter().flatten() {
            if let Some(x) = v.as_f64() {
                fields.entry(k.clone()).or_default().push(x);
            }
        }
    }
    fields.into_iter().map(|(k, v)| (k, median(v))).collect()
}

fn fmt(x: f64, digits: usize) -> String {
    if x.is_finite() {
        format!("{x:.digits$}")
    } else {
        "-".into()
    }
}

pub(crate) fn all(flags: &Flags) {
    let quick = flags.has("quick");
    let rounds = flags.num("rounds", if quick { 1 } else { 5 }).max(1);
    let k = flags.num("k", if quick { 300 } else { 5000 }).max(1);
    let conc = flags.num("conc", 32).max(1);
    let only: Option<Vec<&str>> = flags.get("only").map(|s| s.split(',').collect());
    let timeout = Duration::from_secs(flags.num("timeout", 300) as u64);
    let paths = Paths::new();
    let _ = server_path();

    let clients: Vec<&Client> = CLIENTS
        .iter()
        .filter(|c| only.as_ref().is_none_or(|o| o.contains(&c.name)))
        .collect();
    if clients.is_empty() {
        fail("--only names no client");
    }
    let mut runs: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    let mut skipped: BTreeMap<&str, String> = BTreeMap::new();
    eprintln!(
        "mcpmux-bench: {} clients × {rounds} rounds, K = {k} calls, {conc} in flight",
        clients.len()
    );
    for round in 0..rounds {
        // Rotate the order each round, so no client always runs first (or last).
        for i in 0..clients.len() {
            let client = clients[(i + round) % clients.len()];
            if skipped.contains_key(client.name) {
                continue;
            }
            let cmd = match paths.command(client.name, k, conc) {
                Ok(c) => c,
                Err(why) => {
                    eprintln!("  {}: skipped: {why}", client.name);
                    skipped.insert(client.name, why);
                    continue;
                }
            };
            let label = format!("round {}/{rounds} {}", round + 1, client.name);
            if let Some(v) = run_json(cmd, &label, timeout) {
                eprintln!("  {label}: {v}");
                runs.entry(client.name).or_default().push(v);
            }
        }
    }

    let mut scale: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    if !flags.has("no-scale") && only.is_none() {
        let scale_rounds = rounds.min(3);
        let figures: [(&str, &[&str]); 7] = [
            ("connect-raw-1", &["scale", "connect-raw", "--servers", "1"]),
            (
                "connect-raw-50",
                &["scale", "connect-raw", "--servers", "50"],
            ),
            ("connect-1", &["scale", "connect", "--servers", "1"]),
            ("connect-50", &["scale", "connect", "--servers", "50"]),
            ("pool-50x100", &["scale", "pool", "--servers", "50"]),
            ("search-10k", &["scale", "search", "--servers", "100"]),
            ("agent-50x100", &["scale", "agent", "--servers", "50"]),
        ];
        for round in 0..scale_rounds {
            for (name, args) in figures {
                let mut cmd = Command::new(std::env::current_exe().unwrap());
                cmd.args(args);
                let label = format!("scale round {}/{scale_rounds} {name}", round + 1);
                if let Some(v) = run_json(cmd, &label, timeout) {
                    eprintln!("  {label}: {v}");
                    scale.entry(name).or_default().push(v);
                }
            }
        }
    }

    report(&clients, &runs, &skipped, &scale, rounds, k, conc);
}

fn report(
    clients: &[&Client],
    runs: &BTreeMap<&str, Vec<Value>>,
    skipped: &BTreeMap<&str, String>,
    scale: &BTreeMap<&str, Vec<Value>>,
    rounds: usize,
    k: usize,
    conc: usize,
) {
    let med: BTreeMap<&str, BTreeMap<String, f64>> =
        runs.iter().map(|(n, r)| (*n, medians(r))).collect();
    let get = |client: &str, field: &str| {
        med.get(client)
            .and_then(|m| m.get(field))
            .copied()
            .unwrap_or(f64::NAN)
    };
    let floor_p50 = get("raw", "p50_us");

    println!();
    println!(
        "Stdio, trivial echo server, {k} sequential calls and {k} calls {conc} in flight; medians of {rounds} round(s)."
    );
    println!(
        "×floor = p50 / raw pipe p50 (lower is better); ×anchor = calls/s / the language anchor's calls/s (higher is better)."
    );
    println!();
    println!(
        "| client | seq calls/s | p50 µs | p99 µs | p50 ×floor | seq ×anchor | {conc}-in-flight calls/s | in-flight ×anchor | connect ms | peak RSS MB |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for c in clients {
        if let Some(why) = skipped.get(c.name) {
            println!("| {} | skipped: {why} |||||||||", c.name);
            continue;
        }
        if !med.contains_key(c.name) {
            println!("| {} | failed |||||||||", c.name);
            continue;
        }
        let a = anchor(c.lang);
        let seq = get(c.name, "seq_calls_per_s");
        let cc = get(c.name, "conc_calls_per_s");
        println!(
            "| {} ({}) | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            c.name,
            c.what,
            fmt(seq, 0),
            fmt(get(c.name, "p50_us"), 1),
            fmt(get(c.name, "p99_us"), 1),
            fmt(get(c.name, "p50_us") / floor_p50, 2),
            fmt(seq / get(a, "seq_calls_per_s"), 2),
            fmt(cc, 0),
            fmt(cc / get(a, "conc_calls_per_s"), 2),
            fmt(get(c.name, "connect_ms"), 1),
            fmt(get(c.name, "peak_rss_mb"), 1),
        );
    }

    let smed: BTreeMap<&str, BTreeMap<String, f64>> =
        scale.iter().map(|(n, r)| (*n, medians(r))).collect();
    let sget = |fig: &str, field: &str| {
        smed.get(fig)
            .and_then(|m| m.get(field))
            .copied()
            .unwrap_or(f64::NAN)
    };
    if !smed.is_empty() {
        println!();
        println!("Scale (mcpmux Rust, multi-thread runtime, bench servers with 100 tools each):");
        println!();
        println!("| figure | value |");
        println!("| --- | ---: |");
        let rows = [
            (
                "floor: spawn + initialize 1 server on raw pipes (ms)",
                sget("connect-raw-1", "connect_ms"),
                1,
            ),
            (
                "floor: spawn + initialize 50 servers on raw pipes (ms)",
                sget("connect-raw-50", "connect_ms"),
                1,
            ),
            ("connect 1 server (ms)", sget("connect-1", "connect_ms"), 1),
            (
                "connect 50 servers in parallel (ms)",
                sget("connect-50", "connect_ms"),
                1,
            ),
            (
                "list_tools, 50 × 100 tools from the cache, p50 (ms)",
                sget("pool-50x100", "list_p50_ms"),
                2,
            ),
            (
                "list_tools, 50 × 100 tools from the cache, p99 (ms)",
                sget("pool-50x100", "list_p99_ms"),
                2,
            ),
            (
                "search_tools over 10,000 tools, p50 (µs)",
                sget("search-10k", "search_p50_us"),
                1,
            ),
            (
                "search_tools over 10,000 tools, p99 (µs)",
                sget("search-10k", "search_p99_us"),
                1,
            ),
            (
                "search index build, 10,000 tools (ms)",
                sget("search-10k", "index_build_ms"),
                1,
            ),
            (
                "agent turn over 50 × 100 known tools, model answering at once, p50 (µs)",
                sget("agent-50x100", "turn_p50_us"),
                0,
            ),
            (
                "agent turn over 50 × 100 known tools, p99 (µs)",
                sget("agent-50x100", "turn_p99_us"),
                0,
            ),
            (
                "floor: the turn's HTTP exchange alone, p50 (µs)",
                sget("agent-50x100", "model_rtt_p50_us"),
                0,
            ),
            (
                "idle pool of 50 connections, client RSS (MB)",
                sget("pool-50x100", "idle_rss_mb"),
                1,
            ),
            (
                "idle pool of 50 connections, threads",
                sget("pool-50x100", "threads"),
                0,
            ),
            (
                "background work after listing 50 × 100 tools, CPU (ms)",
                sget("pool-50x100", "settle_cpu_ms"),
                0,
            ),
            (
                "background work after listing 100 × 100 tools, CPU (ms)",
                sget("search-10k", "settle_cpu_ms"),
                0,
            ),
            (
                "peak client RSS, 100 servers × 100 tools (MB)",
                sget("search-10k", "peak_rss_mb"),
                1,
            ),
        ];
        for (what, v, d) in rows {
            println!("| {what} | {} |", fmt(v, d));
        }
    }

    // The speed targets, as bench/README.md lists them.
    let ratio = |a: f64, b: f64| a / b;
    // Calls/s ratios: the client's, and the raw pipe's, over the anchor's.
    let versus = |client: &str, anchor: &str, what: &str| {
        (
            ratio(get(client, what), get(anchor, what)),
            ratio(get("raw", what), get(anchor, what)),
        )
    };
    let floor_of =
        |floor: &str, anchor: &str, what: &str| ratio(get(floor, what), get(anchor, what));
    // Each binding against its language's floor: what is left between them is mcpmux's own
    // cost. The raw column is the raw pipe in mcpmux's place, as everywhere.
    let p50_of = |client: &str, floor: &str| {
        (
            ratio(get(client, "p50_us"), get(floor, "p50_us")),
            ratio(floor_p50, get(floor, "p50_us")),
        )
    };
    let mp50 = get("mcpmux", "p50_us");
    let rmcp_p50 = get("rmcp", "p50_us");
    let conc_key = "conc_calls_per_s";
    let seq_key = "seq_calls_per_s";
    let (py_p50, py_p50_raw) = p50_of("mcpmux-python", "python-pipe");
    let (py_conc, py_conc_raw) = versus("mcpmux-python", "python-pipe", conc_key);
    let (node_p50, node_p50_raw) = p50_of("mcpmux-node", "node-pipe");
    let (node_conc, node_conc_raw) = versus("mcpmux-node", "node-pipe", conc_key);
    let (tokio_p50, tokio_p50_raw) = p50_of("mcpmux", "raw-tokio");
    let (rust_raw_conc, _) = versus("mcpmux", "raw", conc_key);
    let (rust_rmcp_conc, rust_rmcp_conc_raw) = versus("mcpmux", "rmcp", conc_key);
    let (py_sdk_seq, py_sdk_seq_raw) = versus("mcpmux-python", "python-sdk", seq_key);
    let (py_sdk_conc, py_sdk_conc_raw) = versus("mcpmux-python", "python-sdk", conc_key);
    let (ts_seq, ts_seq_raw) = versus("mcpmux-node", "ts-sdk", seq_key);
    let (ts_conc, ts_conc_raw) = versus("mcpmux-node", "ts-sdk", conc_key);
    let (serve_conc, serve_conc_raw) = versus("mcpmux-serve", "rmcp", conc_key);
    let none = f64::NAN;
    use Goal::{AtLeast, AtMost};
    // What, measured, the raw pipe in mcpmux's place, the language's floor in mcpmux's place
    // (for serve, `relay`: a front that only copies bytes), the language's floor for a client
    // that hands back parsed results (its JSON on the bare pipes) in mcpmux's place, and the
    // goal.
    let targets: [(&str, f64, f64, f64, f64, Goal); 20] = [
        (
            "Rust: mcpmux p50 / raw pipe p50",
            ratio(mp50, floor_p50),
            1.0,
            ratio(get("raw-tokio", "p50_us"), floor_p50),
            none,
            AtMost(4.0),
        ),
        (
            "Rust: mcpmux p50 / rmcp p50",
            ratio(mp50, rmcp_p50),
            ratio(floor_p50, rmcp_p50),
            ratio(get("raw-tokio", "p50_us"), rmcp_p50),
            none,
            AtMost(0.5),
        ),
        (
            "Rust: mcpmux / rmcp, in-flight calls/s",
            rust_rmcp_conc,
            rust_rmcp_conc_raw,
            floor_of("raw-tokio", "rmcp", conc_key),
            none,
            AtLeast(2.0),
        ),
        (
            "Rust: mcpmux p50 / tokio's floor p50",
            tokio_p50,
            tokio_p50_raw,
            1.0,
            none,
            AtMost(1.1),
        ),
        (
            "Rust: mcpmux / raw pipe, in-flight calls/s",
            rust_raw_conc,
            1.0,
            floor_of("raw-tokio", "raw", conc_key),
            none,
            AtLeast(0.6),
        ),
        (
            "Python: binding p50 / asyncio's floor p50",
            py_p50,
            py_p50_raw,
            1.0,
            ratio(
                get("python-pipe-json", "p50_us"),
                get("python-pipe", "p50_us"),
            ),
            AtMost(1.3),
        ),
        (
            "Python: binding / asyncio's floor, in-flight calls/s",
            py_conc,
            py_conc_raw,
            1.0,
            floor_of("python-pipe-json", "python-pipe", conc_key),
            AtLeast(0.8),
        ),
        (
            "Node: binding p50 / Node's floor p50",
            node_p50,
            node_p50_raw,
            1.0,
            ratio(get("node-pipe-json", "p50_us"), get("node-pipe", "p50_us")),
            AtMost(1.2),
        ),
        (
            "Node: binding / Node's floor, in-flight calls/s",
            node_conc,
            node_conc_raw,
            1.0,
            floor_of("node-pipe-json", "node-pipe", conc_key),
            AtLeast(0.8),
        ),
        (
            "Python: binding / Python SDK, sequential calls/s",
            py_sdk_seq,
            py_sdk_seq_raw,
            floor_of("python-pipe", "python-sdk", seq_key),
            none,
            AtLeast(10.0),
        ),
        (
            "Python: binding / Python SDK, in-flight calls/s",
            py_sdk_conc,
            py_sdk_conc_raw,
            floor_of("python-pipe", "python-sdk", conc_key),
            none,
            AtLeast(20.0),
        ),
        (
            "Node: binding / TypeScript SDK, sequential calls/s",
            ts_seq,
            ts_seq_raw,
            floor_of("node-pipe", "ts-sdk", seq_key),
            none,
            AtLeast(3.0),
        ),
        (
            "Node: binding / TypeScript SDK, in-flight calls/s",
            ts_conc,
            ts_conc_raw,
            floor_of("node-pipe", "ts-sdk", conc_key),
            none,
            AtLeast(2.0),
        ),
        (
            "Serve: p50 through `mcpmux serve` / rmcp direct p50",
            ratio(get("mcpmux-serve", "p50_us"), rmcp_p50),
            ratio(floor_p50, rmcp_p50),
            ratio(get("relay", "p50_us"), rmcp_p50),
            none,
            AtMost(1.5),
        ),
        (
            "Serve: in-flight calls/s through `mcpmux serve` / rmcp direct",
            serve_conc,
            serve_conc_raw,
            floor_of("relay", "rmcp", conc_key),
            none,
            AtLeast(0.7),
        ),
        (
            "Scale: connect 50 servers / connect 1",
            ratio(
                sget("connect-50", "connect_ms"),
                sget("connect-1", "connect_ms"),
            ),
            ratio(
                sget("connect-raw-50", "connect_ms"),
                sget("connect-raw-1", "connect_ms"),
            ),
            none,
            none,
            AtMost(3.0),
        ),
        (
            "Scale: search over 10,000 tools, p50 µs",
            sget("search-10k", "search_p50_us"),
            none,
            none,
            none,
            AtMost(100.0),
        ),
        (
            "Scale: list_tools over 5,000 cached tools, p50 ms",
            sget("pool-50x100", "list_p50_ms"),
            none,
            none,
            none,
            AtMost(3.0),
        ),
        (
            "Agent: own cost of a turn over 5,000 known tools, p50 ms",
            sget("agent-50x100", "turn_p50_us") / 1e3,
            none,
            sget("agent-50x100", "model_rtt_p50_us") / 1e3,
            none,
            AtMost(1.0),
        ),
        (
            "Scale: idle pool of 50 connections, client RSS MB",
            sget("pool-50x100", "idle_rss_mb"),
            none,
            none,
            none,
            AtMost(30.0),
        ),
    ];

    println!();
    println!("Targets:");
    println!();
    println!(
        "| target | measured | raw pipe in mcpmux's place | the language's bare pipe (serve: a byte relay) in mcpmux's place | the bare pipe and the language's JSON in mcpmux's place | goal | |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | --- |");
    for (what, measured, raw, lang_floor, parsed_floor, goal) in &targets {
        let verdict = if !measured.is_finite() {
            "not measured"
        } else if goal.met(*measured) {
            "pass"
        } else if parsed_floor.is_finite() && !goal.met(*parsed_floor) {
            // No client that returns parsed results meets it: the goal is past the floor.
            "FAIL (past the JSON floor)"
        } else {
            "FAIL"
        };
        println!(
            "| {what} | {} | {} | {} | {} | {goal} | {verdict} |",
            fmt(*measured, 2),
            fmt(*raw, 2),
            fmt(*lang_floor, 2),
            fmt(*parsed_floor, 2),
        );
    }

    let results = json!({
        "k": k,
        "conc": conc,
        "rounds": rounds,
        "clients": runs,
        "medians": med,
        "scale": scale,
        "scale_medians": smed,
        "targets": targets.iter().map(|(what, measured, raw, lang_floor, parsed_floor, goal)| json!({
            "target": what, "measured": measured, "goal": goal.to_string(),
            "pass": measured.is_finite() && goal.met(*measured),
            "raw_pipe": raw.is_finite().then_some(raw),
            "language_floor": lang_floor.is_finite().then_some(lang_floor),
            "language_json_floor": parsed_floor.is_finite().then_some(parsed_floor),
        })).collect::<Vec<_>>(),
    });
    let file = std::env::current_exe()
        .ok()
        .and_then(|e| Some(e.parent()?.parent()?.join("mcpmux-bench-results.json")));
    if let Some(file) = file
        && std::fs::write(&file, serde_json::to_vec_pretty(&results).unwrap()).is_ok()
    {
        println!();
        println!("Raw results: {}", file.display());
    }
}

/// A speed target's goal for its figure.
#[derive(Clone, Copy)]
enum Goal {
    AtMost(f64),
    AtLeast(f64),
}

impl Goal {
    fn met(self, measured: f64) -> bool {
        match self {
            Goal::AtMost(max) => measured <= max,
            Goal::AtLeast(min) => measured >= min,
        }
    }
}

impl std::fmt::Display for Goal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Goal::AtMost(max) => write!(f, "≤ {max}"),
            Goal::AtLeast(min) => write!(f, "≥ {min}"),
        }
    }
}
