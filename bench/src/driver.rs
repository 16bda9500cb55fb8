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
        name: "python-pipe",
        lang: "python",
        what: "asyncio on raw pipes, no parsing (Python's floor)",
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
            "node-pipe" => Ok(script(Path::new("node"), "node_pipe.js")),
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
    struct Target {
        what: &'static str,
        measured: f64,
        /// The same ratio with the raw pipe in mcpmux's place: what a client with no cost of
        /// its own would score. A goal the raw pipe misses cannot be met on this machine.
        raw: f64,
        /// The same ratio with the language's bare pipe client in mcpmux's place (for Rust,
        /// `raw-tokio`): what a client costing nothing on that event loop would score.
        lang_floor: f64,
        goal: &'static str,
        pass: bool,
    }
    let ratio = |a: f64, b: f64| a / b;
    let mut targets = Vec::new();
    let mut push = |what, measured: f64, raw: f64, lang_floor: f64, goal, pass: bool| {
        targets.push(Target {
            what,
            measured,
            raw,
            lang_floor,
            goal,
            pass: measured.is_finite() && pass,
        })
    };
    let mp50 = get("mcpmux", "p50_us");
    let r = ratio(mp50, floor_p50);
    push(
        "Rust: mcpmux p50 / raw pipe p50",
        r,
        1.0,
        ratio(get("raw-tokio", "p50_us"), floor_p50),
        "≤ 4",
        r <= 4.0,
    );
    let r = ratio(mp50, get("rmcp", "p50_us"));
    let raw = ratio(floor_p50, get("rmcp", "p50_us"));
    push(
        "Rust: mcpmux p50 / rmcp p50",
        r,
        raw,
        ratio(get("raw-tokio", "p50_us"), get("rmcp", "p50_us")),
        "≤ 0.5",
        r <= 0.5,
    );
    // Calls/s ratios: the binding's, and the raw pipe's, over the anchor's.
    let versus = |client: &str, anchor: &str, what: &str| {
        (
            ratio(get(client, what), get(anchor, what)),
            ratio(get("raw", what), get(anchor, what)),
        )
    };
    let floor_of =
        |floor: &str, anchor: &str, what: &str| ratio(get(floor, what), get(anchor, what));
    let (r, raw) = versus("mcpmux", "rmcp", "conc_calls_per_s");
    push(
        "Rust: mcpmux / rmcp, in-flight calls/s",
        r,
        raw,
        ratio(
            get("raw-tokio", "conc_calls_per_s"),
            get("rmcp", "conc_calls_per_s"),
        ),
        "≥ 2",
        r >= 2.0,
    );
    // Each binding against its language's floor: what is left between them is mcpmux's own
    // cost. The raw column is the raw pipe in mcpmux's place, as everywhere.
    let p50_of = |client: &str, floor: &str| {
        (
            ratio(get(client, "p50_us"), get(floor, "p50_us")),
            ratio(floor_p50, get(floor, "p50_us")),
        )
    };
    let (r, raw) = p50_of("mcpmux", "raw-tokio");
    push(
        "Rust: mcpmux p50 / tokio's floor p50",
        r,
        raw,
        1.0,
        "≤ 1.1",
        r <= 1.1,
    );
    let (r, raw) = versus("mcpmux", "raw", "conc_calls_per_s");
    push(
        "Rust: mcpmux / raw pipe, in-flight calls/s",
        r,
        raw,
        floor_of("raw-tokio", "raw", "conc_calls_per_s"),
        "≥ 0.6",
        r >= 0.6,
    );
    let bindings = [
        (
            "mcpmux-python",
            "python-pipe",
            ["Python: binding p50 / asyncio's floor p50", "≤ 1.3"],
            1.3,
            "Python: binding / asyncio's floor, in-flight calls/s",
        ),
        (
            "mcpmux-node",
            "node-pipe",
            ["Node: binding p50 / Node's floor p50", "≤ 1.2"],
            1.2,
            "Node: binding / Node's floor, in-flight calls/s",
        ),
    ];
    for (client, floor, [p50_what, p50_goal], p50_max, conc_what) in bindings {
        let (r, raw) = p50_of(client, floor);
        push(p50_what, r, raw, 1.0, p50_goal, r <= p50_max);
        let (r, raw) = versus(client, floor, "conc_calls_per_s");
        push(conc_what, r, raw, 1.0, "≥ 0.8", r >= 0.8);
    }
    let (r, raw) = versus("mcpmux-python", "python-sdk", "seq_calls_per_s");
    push(
        "Python: binding / Python SDK, sequential calls/s",
        r,
        raw,
        floor_of("python-pipe", "python-sdk", "seq_calls_per_s"),
        "≥ 10",
        r >= 10.0,
    );
    let (r, raw) = versus("mcpmux-python", "python-sdk", "conc_calls_per_s");
    push(
        "Python: binding / Python SDK, in-flight calls/s",
        r,
        raw,
        floor_of("python-pipe", "python-sdk", "conc_calls_per_s"),
        "≥ 20",
        r >= 20.0,
    );
    let (r, raw) = versus("mcpmux-node", "ts-sdk", "seq_calls_per_s");
    push(
        "Node: binding / TypeScript SDK, sequential calls/s",
        r,
        raw,
        floor_of("node-pipe", "ts-sdk", "seq_calls_per_s"),
        "≥ 3",
        r >= 3.0,
    );
    let (r, raw) = versus("mcpmux-node", "ts-sdk", "conc_calls_per_s");
    push(
        "Node: binding / TypeScript SDK, in-flight calls/s",
        r,
        raw,
        floor_of("node-pipe", "ts-sdk", "conc_calls_per_s"),
        "≥ 2",
        r >= 2.0,
    );
    // What `mcpmux serve` adds: the same rmcp client through the front, over direct.
    // Here the floor column is `relay`: the same client through a front that only copies
    // bytes, so what any front must add (a process and two pipes) is in it.
    let r = ratio(get("mcpmux-serve", "p50_us"), get("rmcp", "p50_us"));
    push(
        "Serve: p50 through `mcpmux serve` / rmcp direct p50",
        r,
        ratio(floor_p50, get("rmcp", "p50_us")),
        ratio(get("relay", "p50_us"), get("rmcp", "p50_us")),
        "≤ 1.5",
        r <= 1.5,
    );
    let (r, raw) = versus("mcpmux-serve", "rmcp", "conc_calls_per_s");
    push(
        "Serve: in-flight calls/s through `mcpmux serve` / rmcp direct",
        r,
        raw,
        floor_of("relay", "rmcp", "conc_calls_per_s"),
        "≥ 0.7",
        r >= 0.7,
    );
    let r = ratio(
        sget("connect-50", "connect_ms"),
        sget("connect-1", "connect_ms"),
    );
    let raw = ratio(
        sget("connect-raw-50", "connect_ms"),
        sget("connect-raw-1", "connect_ms"),
    );
    push(
        "Scale: connect 50 servers / connect 1",
        r,
        raw,
        f64::NAN,
        "≤ 3",
        r <= 3.0,
    );
    let r = sget("search-10k", "search_p50_us");
    push(
        "Scale: search over 10,000 tools, p50 µs",
        r,
        f64::NAN,
        f64::NAN,
        "≤ 100",
        r <= 100.0,
    );
    let r = sget("pool-50x100", "list_p50_ms");
    push(
        "Scale: list_tools over 5,000 cached tools, p50 ms",
        r,
        f64::NAN,
        f64::NAN,
        "≤ 3",
        r <= 3.0,
    );
    let r = sget("agent-50x100", "turn_p50_us") / 1e3;
    push(
        "Agent: own cost of a turn over 5,000 known tools, p50 ms",
        r,
        f64::NAN,
        sget("agent-50x100", "model_rtt_p50_us") / 1e3,
        "≤ 1",
        r <= 1.0,
    );
    let r = sget("pool-50x100", "idle_rss_mb");
    push(
        "Scale: idle pool of 50 connections, client RSS MB",
        r,
        f64::NAN,
        f64::NAN,
        "≤ 30",
        r <= 30.0,
    );

    println!();
    println!("Targets:");
    println!();
    println!(
        "| target | measured | raw pipe in mcpmux's place | the language's bare pipe (serve: a byte relay) in mcpmux's place | goal | |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | --- |");
    for t in &targets {
        let verdict = if !t.measured.is_finite() {
            "not measured"
        } else if t.pass {
            "pass"
        } else {
            "FAIL"
        };
        println!(
            "| {} | {} | {} | {} | {} | {verdict} |",
            t.what,
            fmt(t.measured, 2),
            fmt(t.raw, 2),
            fmt(t.lang_floor, 2),
            t.goal
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
        "targets": targets.iter().map(|t| json!({
            "target": t.what, "measured": t.measured, "goal": t.goal, "pass": t.pass,
            "raw_pipe": t.raw.is_finite().then_some(t.raw),
            "language_floor": t.lang_floor.is_finite().then_some(t.lang_floor),
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
