//! Requests held for the end of an event loop's turn and written together (the bindings'
//! loops, `mcpmux serve --stdio`'s runtime).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::json;

/// `mcpmux serve --stdio`'s runtime (`event_loop::current_thread_runtime`): requests held
/// in a turn go out when the runtime runs out of ready tasks, and also while a task keeps it
/// busy for good (it still polls for I/O every few dozen tasks), or the two past the eighth
/// held request would wait forever.
#[test]
fn a_current_thread_runtime_ends_its_turns_idle_or_busy() {
    use mcpmux::event_loop;
    let runtime = event_loop::current_thread_runtime().unwrap();
    runtime.block_on(async {
        let pool = pool().await;
        // Not connected yet, as for a new user: the first ten calls start the server.
        add_test_server(&pool, "t", &[]).await;
        let ten = |round: &str| {
            let pool = pool.clone();
            let calls: Vec<_> = (0..10)
                .map(|i| {
                    let (pool, sent) = (pool.clone(), format!("{round}{i}"));
                    tokio::spawn(async move {
                        let answer = pool
                            .call_tool("mcp__t__echo", json!({"text": sent}), Default::default())
                            .await;
                        (sent, answer)
                    })
                })
                .collect();
            async move {
                let answers =
                    tokio::time::timeout(Duration::from_secs(5), futures::future::join_all(calls))
                        .await
                        .expect("held requests were never sent");
                for answer in answers {
                    let (sent, answer) = answer.unwrap();
                    assert_eq!(text(&answer.unwrap()), sent);
                }
            }
        };
        ten("idle").await;

        // A task that is always ready: the runtime never parks.
        let busy = tokio::spawn(std::future::poll_fn(|cx| {
            cx.waker().wake_by_ref();
            std::task::Poll::<()>::Pending
        }));
        ten("busy").await;
        busy.abort();
        event_loop::stop_batching_on_this_thread();
        pool.close().await;
    });
}

/// What a call polled once (as a loop's turn polls it) answers, once it has.
async fn answer_of<F: std::future::Future>(
    mut call: std::pin::Pin<Box<futures::future::MaybeDone<F>>>,
) -> F::Output {
    call.as_mut().await;
    call.as_mut().take_output().expect("the call answered once")
}

/// As a binding's event loop does (Node's): the first request of a turn is written at once,
/// the others of that turn are held and written together when it ends (or eight are held).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_held_for_the_end_of_a_loop_turn_are_sent_together() {
    use mcpmux::event_loop;
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    call_ok(&pool, "mcp__t__echo", json!({"text": "connected"})).await;
    let holds = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let told = holds.clone();
    event_loop::batch_writes_on_this_thread(move || {
        told.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    });
    let mut calls: Vec<_> = (0..10)
        .map(|i| {
            let arguments = json!({"text": format!("n{i}")});
            let call = pool.call_tool("mcp__t__echo", arguments, Default::default());
            Box::pin(futures::future::maybe_done(call))
        })
        .collect();
    for (i, call) in calls.iter_mut().enumerate() {
        let answered = futures::poll!(call.as_mut()).is_ready();
        // The first request of the turn, and the eighth held one with the buffer it fills,
        // are written as they are polled: a quick server may answer within that poll. The
        // others wait in the buffer, unanswered.
        assert!(
            !answered || i == 0 || i == 8,
            "call {i} was answered while held"
        );
    }
    let first = answer_of(calls.remove(0)).await.unwrap();
    assert_eq!(text(&first), "n0");
    // Eight held requests fill the buffer, which then goes without waiting for the turn.
    let mut last = calls.pop().unwrap();
    let eight = futures::future::join_all(calls.into_iter().map(answer_of));
    let eight = tokio::time::timeout(Duration::from_secs(5), eight)
        .await
        .expect("a full buffer was not sent");
    for (i, r) in eight.into_iter().enumerate() {
        assert_eq!(text(&r.unwrap()), format!("n{}", i + 1));
    }
    // The turn has not ended: the last is still held, so nothing answers it.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(futures::poll!(last.as_mut()).is_pending());
    event_loop::end_of_turn();
    assert_eq!(text(&answer_of(last).await.unwrap()), "n9");
    // The loop was told once that the turn held requests, when it first did.
    assert_eq!(holds.load(std::sync::atomic::Ordering::SeqCst), 1);

    // A held request given up on before its turn ends still reaches the server before its
    // cancellation: the server stops it (rather than running a cancellation it never knew).
    let first = pool.call_tool("mcp__t__echo", json!({"text": "a"}), Default::default());
    let mut first = Box::pin(futures::future::maybe_done(first));
    let _ = futures::poll!(first.as_mut());
    let mut held =
        Box::pin(pool.call_tool("mcp__t__sleep", json!({"ms": 10_000}), Default::default()));
    assert!(futures::poll!(held.as_mut()).is_pending());
    drop(held);
    assert_eq!(text(&answer_of(first).await.unwrap()), "a");
    // The loop stops batching (what follows is not polled in turns).
    event_loop::stop_batching_on_this_thread();
    let deadline = Instant::now() + Duration::from_secs(5);
    while text(&call_ok(&pool, "mcp__t__cancelled", json!({})).await) != "1" {
        assert!(Instant::now() < deadline, "the server saw no cancellation");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Held requests to a server that died get its error, not a hang.
    let pid = pid_of(&pool, "mcp__t__pid").await;
    event_loop::batch_writes_on_this_thread(|| {});
    let mut first =
        Box::pin(pool.call_tool("mcp__t__sleep", json!({"ms": 10_000}), Default::default()));
    assert!(futures::poll!(first.as_mut()).is_pending());
    let mut held =
        Box::pin(pool.call_tool("mcp__t__echo", json!({"text": "b"}), Default::default()));
    assert!(futures::poll!(held.as_mut()).is_pending());
    // SAFETY: kills the test's own child process.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    tokio::time::sleep(Duration::from_millis(100)).await;
    event_loop::end_of_turn();
    let (first, held) =
        tokio::time::timeout(Duration::from_secs(5), futures::future::join(first, held))
            .await
            .expect("the calls to a dead server hang");
    for err in [first.unwrap_err(), held.unwrap_err()] {
        assert!(err.to_string().contains("the server exited"), "{err}");
    }
    event_loop::stop_batching_on_this_thread();
    pool.close().await;
}
