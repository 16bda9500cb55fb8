//! Scale figures, each in a process of its own so RSS means one thing:
//! - `connect`: a pool connecting N bench servers at once (`connect_concurrency` = N);
//! - `pool`: N servers × T tools connected and listed, then the idle client RSS, then
//!   `list_tools` over all of them from the cache;
//! - `search`: `search_tools` over N × T tools (index built on first use, then queries);
//! - `agent`: an agent's turn over N × T known tools (src/agent_turn.rs).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::clients::{multi_thread, open_pool, server_input};
use crate::{Flags, fail, proc_status, proc_status_mb, quantile};

use crate::corpus::QUERIES;

pub(crate) fn run(what: &str, flags: &Flags) {
    let servers = flags.num("servers", 50).max(1);
    let tools = flags.num("tools", 100).max(1);
    if what == "connect-raw" {
        return connect_raw(servers, tools);
    }
    let line = multi_thread().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let pool = open_pool(
            dir.path(),
            mcpmux::PoolOptions {
                connect_concurrency: servers,
                ..Default::default()
            },
        )
        .await;
        for i in 0..servers {
            let args = [
                "--tools".into(),
                tools.to_string(),
                "--seed".into(),
                i.to_string(),
            ];
            pool.add_server(server_input(&format!("s{i}"), &args))
                .await
                .unwrap_or_else(|e| fail(&format!("add_server: {e}")));
        }
        let started = Instant::now();
        let states = pool.connect_all().await;
        let connect = started.elapsed();
        let connected = states
            .iter()
            .filter(|s| s.state == mcpmux::ConnectionState::Connected)
            .count();
        if connected != servers {
            fail(&format!("{connected} of {servers} servers connected"));
        }
        let mut line = json!({
            "scale": what,
            "servers": servers,
            "tools": servers * tools,
            "connect_ms": connect.as_secs_f64() * 1e3,
        });
        match what {
            "connect" => {}
            "pool" => {
                let listed = pool.list_tools(None).await.unwrap();
                assert_eq!(listed.len(), servers * tools);
                drop(listed);
                let (wall, cpu) = settle().await;
                line["settle_ms"] = json!(wall.as_secs_f64() * 1e3);
                line["settle_cpu_ms"] = json!(cpu.as_secs_f64() * 1e3);
                line["idle_rss_mb"] = json!(proc_status_mb("VmRSS"));
                line["threads"] = json!(proc_status("Threads"));
                let mut samples = Vec::new();
                for _ in 0..100 {
                    let t = Instant::now();
                    let listed = pool.list_tools(None).await.unwrap();
                    samples.push(t.elapsed());
                    assert_eq!(listed.len(), servers * tools);
                }
                samples.sort();
                line["list_p50_ms"] = json!(quantile(&samples, 0.5).as_secs_f64() * 1e3);
                line["list_p99_ms"] = json!(quantile(&samples, 0.99).as_secs_f64() * 1e3);
            }
            "search" => {
                pool.list_tools(None).await.unwrap();
                let (wall, cpu) = settle().await;
                line["settle_ms"] = json!(wall.as_secs_f64() * 1e3);
                line["settle_cpu_ms"] = json!(cpu.as_secs_f64() * 1e3);
                let t = Instant::now();
                let hits = pool.search_tools(QUERIES[0], Some(10)).await.unwrap();
                line["index_build_ms"] = json!(t.elapsed().as_secs_f64() * 1e3);
                assert!(!hits.is_empty());
                let mut samples = Vec::new();
                for _ in 0..250 {
                    for q in QUERIES {
                        let t = Instant::now();
                        let hits = pool.search_tools(q, Some(10)).await.unwrap();
                        samples.push(t.elapsed());
                        std::hint::black_box(hits);
                    }
                }
                samples.sort();
                line["search_p50_us"] = json!(quantile(&samples, 0.5).as_secs_f64() * 1e6);
                line["search_p99_us"] = json!(quantile(&samples, 0.99).as_secs_f64() * 1e6);
            }
            "agent" => {
                pool.list_tools(None).await.unwrap();
                settle().await;
                let turns = flags.num("turns", 200).max(1);
                crate::agent_turn::measure(&pool, turns, &mut line).await;
            }
            other => fail(&format!("unknown scale figure {other}")),
        }
        line["peak_rss_mb"] = json!(proc_status_mb("VmHWM"));
        pool.close().await;
        line
    });
    println!("{line}");
}

/// The floor of `connect`: spawn N servers, send each `initialize` and read every answer, on
/// plain pipes.
fn connect_raw(servers: usize, tools: usize) {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    let started = Instant::now();
    let mut children: Vec<_> = (0..servers)
        .map(|i| {
            Command::new(crate::server_path())
                .args(["--tools", &tools.to_string(), "--seed", &i.to_string()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| fail(&format!("spawn: {e}")))
        })
        .collect();
    let init = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"0\"}}}\n";
    for c in &mut children {
        c.stdin
            .as_mut()
            .unwrap()
            .write_all(init.as_bytes())
            .unwrap();
    }
    for c in &mut children {
        let mut line = String::new();
        BufReader::new(c.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
    }
    let connect = started.elapsed();
    for mut c in children {
        drop(c.stdin.take());
        let _ = c.wait();
    }
    let line = json!({
        "scale": "connect-raw",
        "servers": servers,
        "connect_ms": connect.as_secs_f64() * 1e3,
        "peak_rss_mb": proc_status_mb("VmHWM"),
    });
    println!("{line}");
}

/// CPU time of this process (user + system), from /proc/self/stat.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses): utime and stime are 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<u64> = rest
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let ticks = fields.get(11).unwrap_or(&0) + fields.get(12).unwrap_or(&0);
    // CLK_TCK is 100 on Linux.
    Duration::from_millis(ticks * 10)
}

/// Waits until the pool's background work (tool lists fetched after connecting, the catalog
/// written beside the config) is done: until the process uses under 2 % CPU for 300 ms, at
/// most 60 s. Returns the wall time and the CPU time it took, which are figures of their own.
async fn settle() -> (Duration, Duration) {
    let (started, cpu0) = (Instant::now(), cpu_time());
    let mut last = cpu0;
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = cpu_time();
        let quiet = now.saturating_sub(last) <= Duration::from_millis(6);
        last = now;
        if quiet || started.elapsed() > Duration::from_secs(60) {
            return (started.elapsed(), now.saturating_sub(cpu0));
        }
    }
}
