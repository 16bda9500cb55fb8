//! The config store across processes: concurrent writers lose nothing, and a writer killed
//! mid-write never leaves a half-written file. The workers are this test binary re-run with
//! an environment variable telling it which job to do.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use mcpmux::{ConfigStore, ServerConfig, ServerInput};

const WORKER_ENV: &str = "MCPMUX_STORE_WORKER";
const PATH_ENV: &str = "MCPMUX_STORE_WORKER_PATH";

fn record(name: String) -> mcpmux::ServerRecord {
    ServerInput {
        name,
        config: ServerConfig {
            command: Some("true".into()),
            // Padding makes each write long enough to be caught by a kill.
            args: vec!["x".repeat(4096)],
            ..Default::default()
        },
        ..Default::default()
    }
    .into_record()
    .unwrap()
}

/// The worker: runs only when re-executed by the tests below.
#[test]
#[ignore = "run as a child process by the other tests"]
fn store_worker() {
    let Ok(job) = std::env::var(WORKER_ENV) else {
        return;
    };
    let store = ConfigStore::new(std::env::var(PATH_ENV).unwrap());
    match job.split_once(':') {
        Some(("add", prefix)) => {
            for i in 0..50 {
                store
                    .update(|records| {
                        records.push(record(format!("{prefix}-{i}")));
                        Ok(())
                    })
                    .unwrap();
            }
        }
        _ if job == "forever" => {
            for i in 0.. {
                store
                    .update(|records| {
                        records.push(record(format!("w-{i}")));
                        if records.len() > 40 {
                            records.drain(..20);
                        }
                        Ok(())
                    })
                    .unwrap();
            }
        }
        _ => panic!("unknown job {job}"),
    }
}

/// The worker's name as the test harness knows it: its path below the test crate's root.
fn worker_test_name() -> String {
    match module_path!().split_once("::") {
        Some((_crate, module)) => format!("{module}::store_worker"),
        None => "store_worker".to_owned(),
    }
}

fn worker(job: &str, path: &Path) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        &worker_test_name(),
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(WORKER_ENV, job)
    .env(PATH_ENV, path)
    .stdout(Stdio::null())
    .stderr(Stdio::inherit());
    cmd
}

#[test]
fn two_processes_adding_fifty_servers_each_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("servers.json");
    let mut a = worker("add:a", &path).spawn().unwrap();
    let mut b = worker("add:b", &path).spawn().unwrap();
    assert!(a.wait().unwrap().success());
    assert!(b.wait().unwrap().success());
    let records = ConfigStore::new(&path).load().unwrap();
    assert_eq!(records.len(), 100);
    let mut names: Vec<_> = records.iter().map(|r| r.name.clone()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 100);
}

#[test]
fn a_writer_killed_mid_write_leaves_a_file_that_parses() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("servers.json");
    for round in 0..6u64 {
        let mut child = worker("forever", &path).spawn().unwrap();
        // Killed while it writes: once its first write is in (a loaded machine may take a
        // while to start it), then at a different point of its loop each round.
        let started = std::time::Instant::now();
        while !path.exists() && started.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(50 + round * 37));
        child.kill().unwrap();
        child.wait().unwrap();
        let records = ConfigStore::new(&path)
            .load()
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert!(!records.is_empty(), "round {round}: nothing written");
    }
    // And the store still takes writes afterwards (the lock died with the process).
    ConfigStore::new(&path)
        .update(|r| {
            r.clear();
            Ok(())
        })
        .unwrap();
}
