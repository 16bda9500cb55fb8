//! Scale figures, each in a process of its own so RSS means one thing:
//! - `connect`: a pool connecting N bench servers at once (`connect_concurrency` = N);
//! - `pool`: N servers × T tools connected and listed, then the idle client RSS, then
//!   `list_tools` over all of them from the cache;
//! - `search`: `search_tools` over N × T tools (index built on first use, then queries).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::clients::{multi_thread, open_pool, server_input};
use crate::{Flags, fail, proc_status_mb, quantile};

const QUERIES: &[&str] = &[
    "create an issue",
    "list files in a directory",
    "weather forecast",
    "send email to contact",
    "delete deployment",
    "export report as csv",
    "calend",
    "query table rows by owner",
];

pub(crate) fn run(what: &str, flags: &Flags) {
    let servers = flags.num("servers", 50).max(1);
    let tools = flags.num("tools", 100).max(1);
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
                tokio::time::sleep(Duration::from_secs(1)).await;
                line["connected_rss_mb"] = json!(proc_status_mb("VmRSS"));
                let listed = pool.list_tools(None).await.unwrap();
                assert_eq!(listed.len(), servers * tools);
                drop(listed);
                tokio::time::sleep(Duration::from_secs(1)).await;
                line["idle_rss_mb"] = json!(proc_status_mb("VmRSS"));
                line["threads"] = json!(proc_status_mb("Threads") * 1024.0);
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
                let t = Instant::now();
                let hits = pool.search_tools(QUERIES[0], 10);
                line["index_build_ms"] = json!(t.elapsed().as_secs_f64() * 1e3);
                assert!(!hits.is_empty());
                let mut samples = Vec::new();
                for _ in 0..250 {
                    for q in QUERIES {
                        let t = Instant::now();
                        let hits = pool.search_tools(q, 10);
                        samples.push(t.elapsed());
                        std::hint::black_box(hits);
                    }
                }
                samples.sort();
                line["search_p50_us"] = json!(quantile(&samples, 0.5).as_secs_f64() * 1e6);
                line["search_p99_us"] = json!(quantile(&samples, 0.99).as_secs_f64() * 1e6);
            }
            other => fail(&format!("unknown scale figure {other}")),
        }
        line["peak_rss_mb"] = json!(proc_status_mb("VmHWM"));
        pool.close().await;
        line
    });
    println!("{line}");
}
