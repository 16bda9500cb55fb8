//! The Rust clients: a raw pipe (the floor), the same on tokio (`raw-tokio`), rmcp directly and
//! mcpmux, each on a multi-thread (default) or current-thread tokio runtime. Each spawns the bench server, connects, makes
//! K sequential calls and K calls with C in flight, and prints one JSON line.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;

use crate::{Flags, fail, proc_status_mb, quantile, server_path};

/// What every client measures.
pub(crate) struct Figures {
    pub connect: Duration,
    /// Each sequential call's latency.
    pub seq: Vec<Duration>,
    pub seq_total: Duration,
    pub conc_total: Duration,
}

pub(crate) fn warmup_calls(k: usize) -> usize {
    (k / 10).clamp(20, 500)
}

pub(crate) fn print(client: &str, k: usize, conc: usize, mut f: Figures) {
    f.seq.sort();
    let line = json!({
        "client": client,
        "lang": "rust",
        "k": k,
        "conc": conc,
        "connect_ms": f.connect.as_secs_f64() * 1e3,
        "seq_calls_per_s": k as f64 / f.seq_total.as_secs_f64(),
        "p50_us": quantile(&f.seq, 0.5).as_secs_f64() * 1e6,
        "p99_us": quantile(&f.seq, 0.99).as_secs_f64() * 1e6,
        "conc_calls_per_s": k as f64 / f.conc_total.as_secs_f64(),
        "peak_rss_mb": proc_status_mb("VmHWM"),
    });
    println!("{line}");
}

pub(crate) fn run(name: &str, flags: &Flags) {
    let k = flags.num("k", 5000).max(1);
    let conc = flags.num("conc", 32).max(1);
    let figures = match name {
        "raw" => raw(k, conc),
        "raw-tokio" => multi_thread().block_on(raw_tokio(k, conc)),
        "rmcp" => multi_thread().block_on(rmcp_client(k, conc)),
        "rmcp-ct" => current_thread().block_on(rmcp_client(k, conc)),
        "mcpmux" => multi_thread().block_on(mcpmux_client(k, conc)),
        "mcpmux-ct" => current_thread().block_on(mcpmux_client(k, conc)),
        "mcpmux-serve" => multi_thread().block_on(crate::serve::client(k, conc)),
        "relay" => multi_thread().block_on(crate::serve::relay_client(k, conc)),
        "mcpmux-serve-http" => multi_thread().block_on(crate::serve::http_client(k, conc)),
        other => fail(&format!("unknown client {other}")),
    };
    print(name, k, conc, figures);
}

/// What `#[tokio::main]` builds: one worker per core.
pub(crate) fn multi_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Warm-up, K timed sequential calls, then K calls with `conc` in flight.
pub(crate) async fn measure<F, Fut>(
    k: usize,
    conc: usize,
    call: F,
) -> (Vec<Duration>, Duration, Duration)
where
    F: Fn() -> Fut,
    Fut: Future<Output = ()>,
{
    for _ in 0..warmup_calls(k) {
        call().await;
    }
    let mut seq = Vec::with_capacity(k);
    let started = Instant::now();
    for _ in 0..k {
        let t = Instant::now();
        call().await;
        seq.push(t.elapsed());
    }
    let seq_total = started.elapsed();
    let started = Instant::now();
    futures::stream::iter(0..k)
        .map(|_| call())
        .buffer_unordered(conc)
        .for_each(|()| async {})
        .await;
    (seq, seq_total, started.elapsed())
}

fn call_line(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hello"}}}}}}"#
    ) + "\n"
}

/// The floor: blocking writes and reads of preformatted JSON-RPC lines on the child's pipes,
/// no parsing. In flight: a window of `conc` requests kept full.
fn raw(k: usize, conc: usize) -> Figures {
    let started = Instant::now();
    let mut child = Command::new(server_path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| fail(&format!("spawn: {e}")));
    let mut w = BufWriter::new(child.stdin.take().unwrap());
    let mut r = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    fn exchange(w: &mut impl Write, r: &mut impl BufRead, line: &mut String, text: &str) {
        w.write_all(text.as_bytes()).unwrap();
        w.flush().unwrap();
        line.clear();
        r.read_line(line).unwrap();
    }
    exchange(
        &mut w,
        &mut r,
        &mut line,
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"0\"}}}\n",
    );
    w.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .unwrap();
    let connect = started.elapsed();
    let mut id = 1;
    for _ in 0..warmup_calls(k) {
        exchange(&mut w, &mut r, &mut line, &call_line(id));
        assert!(line.contains("hello"), "unexpected answer: {line}");
        id += 1;
    }
    let mut seq = Vec::with_capacity(k);
    let t0 = Instant::now();
    for _ in 0..k {
        let t = Instant::now();
        exchange(&mut w, &mut r, &mut line, &call_line(id));
        seq.push(t.elapsed());
        id += 1;
    }
    let seq_total = t0.elapsed();
    let t0 = Instant::now();
    let (mut sent, mut received) = (0, 0);
    while sent < k.min(conc) {
        w.write_all(call_line(id + sent).as_bytes()).unwrap();
        sent += 1;
    }
    w.flush().unwrap();
    while received < k {
        line.clear();
        r.read_line(&mut line).unwrap();
        received += 1;
        if sent < k {
            w.write_all(call_line(id + sent).as_bytes()).unwrap();
            w.flush().unwrap();
            sent += 1;
        }
    }
    let conc_total = t0.elapsed();
    drop(w);
    let _ = child.wait();
    Figures {
        connect,
        seq,
        seq_total,
        conc_total,
    }
}

/// The bench server as a tokio child with piped stdin and stdout, killed when dropped.
fn spawn_server() -> tokio::process::Child {
    tokio::process::Command::new(server_path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| fail(&format!("spawn: {e}")))
}

/// The floor of a tokio client on the default runtime: the child's pipes, a reader task that
/// matches each reply line to its request by id (no other parsing), one oneshot per request,
/// the caller under `block_on`. What any client built this way pays, whatever it does besides.
async fn raw_tokio(k: usize, conc: usize) -> Figures {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    use tokio::sync::oneshot;

    type Waiting = Arc<Mutex<HashMap<usize, oneshot::Sender<String>>>>;
    let started = Instant::now();
    let mut child = spawn_server();
    let stdin = Arc::new(tokio::sync::Mutex::new(child.stdin.take().unwrap()));
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let waiting: Waiting = Arc::default();
    let reader = {
        let waiting = waiting.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                // The bench server writes `{"id":N,...` or `{"jsonrpc":"2.0","id":N,...`.
                let Some(at) = line.find("\"id\":") else {
                    continue;
                };
                let rest = &line[at + 5..];
                let end = rest.find(',').unwrap_or(rest.len());
                let Ok(id) = rest[..end].parse::<usize>() else {
                    continue;
                };
                if let Some(tx) = waiting.lock().unwrap().remove(&id) {
                    let _ = tx.send(line);
                }
            }
        })
    };
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(1));
    let request = |id: usize, text: String| {
        let (stdin, waiting) = (stdin.clone(), waiting.clone());
        async move {
            let (tx, rx) = oneshot::channel();
            waiting.lock().unwrap().insert(id, tx);
            {
                let mut w = stdin.lock().await;
                w.write_all(text.as_bytes()).await.unwrap();
                w.flush().await.unwrap();
            }
            rx.await.expect("reply")
        }
    };
    request(
        0,
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw-tokio\",\"version\":\"0\"}}}\n".into(),
    )
    .await;
    stdin
        .lock()
        .await
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .unwrap();
    let connect = started.elapsed();
    let (seq, seq_total, conc_total) = measure(k, conc, || {
        let id = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let call = request(id, call_line(id));
        async move {
            let line = call.await;
            assert!(line.contains("hello"), "unexpected answer: {line}");
        }
    })
    .await;
    drop(stdin);
    reader.abort();
    let _ = child.wait().await;
    Figures {
        connect,
        seq,
        seq_total,
        conc_total,
    }
}

/// rmcp 3.11 as its README shows it: `().serve(transport)` (the `initialize` handshake) over the
/// child's pipes, then `Peer::call_tool`.
async fn rmcp_client(k: usize, conc: usize) -> Figures {
    let started = Instant::now();
    let mut child = spawn_server();
    let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    rmcp_calls(started, transport, "echo", k, conc).await
}

/// rmcp's client over `transport` (a child's stdout and stdin, or Streamable HTTP), started
/// at `started`: the handshake, then `k` sequential and `conc` concurrent calls of `tool`
/// with `{"text": "hello"}`.
pub(crate) async fn rmcp_calls<T, E, A>(
    started: Instant,
    transport: T,
    tool: &'static str,
    k: usize,
    conc: usize,
) -> Figures
where
    T: rmcp::transport::IntoTransport<rmcp::RoleClient, E, A> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;

    let client =
        ().serve(transport)
            .await
            .unwrap_or_else(|e| fail(&format!("rmcp handshake: {e}")));
    let connect = started.elapsed();
    let args = json!({"text": "hello"}).as_object().unwrap().clone();
    let params = CallToolRequestParams::new(tool).with_arguments(args);
    let peer = client.peer().clone();
    let (seq, seq_total, conc_total) = measure(k, conc, || {
        let (peer, params) = (peer.clone(), params.clone());
        async move {
            let r = peer.call_tool(params).await.expect("rmcp call");
            assert!(r.is_error != Some(true), "{r:?}");
        }
    })
    .await;
    let _ = client.cancel().await;
    Figures {
        connect,
        seq,
        seq_total,
        conc_total,
    }
}

/// A pool over a temporary config with one stdio server named `name`.
pub(crate) async fn open_pool(dir: &std::path::Path, options: mcpmux::PoolOptions) -> mcpmux::Pool {
    mcpmux::Pool::open(mcpmux::PoolOptions {
        config_path: Some(dir.join("servers.json")),
        connect_on_add: false,
        ..options
    })
    .await
    .unwrap_or_else(|e| fail(&format!("Pool::open: {e}")))
}

pub(crate) fn server_input(name: &str, args: &[String]) -> mcpmux::ServerInput {
    mcpmux::ServerInput {
        name: name.into(),
        config: mcpmux::ServerConfig {
            command: Some(server_path().to_string_lossy().into_owned()),
            args: args.to_vec(),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// mcpmux as an application uses it: a pool with default options, `connect`, `call_tool` by
/// the pool's tool id.
async fn mcpmux_client(k: usize, conc: usize) -> Figures {
    let dir = tempfile::tempdir().unwrap();
    let pool = open_pool(dir.path(), mcpmux::PoolOptions::default()).await;
    pool.add_server(server_input("bench", &[]))
        .await
        .unwrap_or_else(|e| fail(&format!("add_server: {e}")));
    let started = Instant::now();
    pool.connect("bench")
        .await
        .unwrap_or_else(|e| fail(&format!("connect: {e}")));
    let connect = started.elapsed();
    let tools = pool.list_tools(None).await.unwrap();
    assert!(tools.iter().any(|t| t.id == "mcp__bench__echo"));
    let (seq, seq_total, conc_total) = measure(k, conc, || {
        let pool = pool.clone();
        async move {
            let r = pool
                .call_tool(
                    "mcp__bench__echo",
                    json!({"text": "hello"}),
                    mcpmux::CallOptions::default(),
                )
                .await
                .expect("mcpmux call");
            assert!(r.is_error != Some(true));
        }
    })
    .await;
    pool.close().await;
    Figures {
        connect,
        seq,
        seq_total,
        conc_total,
    }
}
