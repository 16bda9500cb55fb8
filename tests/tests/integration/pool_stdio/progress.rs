//! Progress notifications reach a call's callback, all of them, before the call returns.

use crate::common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_sent_right_before_the_reply_reaches_the_callback_before_the_call_returns() {
    // rmcp hands notifications to spawned tasks: without routing them as they are read, the
    // last updates could land after the reply (and the call's callback) were gone.
    let pool = pool().await;
    add_test_server(&pool, "t", &[]).await;
    for round in 0..40 {
        let burst = json!({"ms": 0, "burst": 5});
        let (r, seen) = call_with_progress(&pool, "mcp__t__sleep", burst, Default::default()).await;
        assert_eq!(text(&r), "slept");
        let seen: Vec<f64> = seen.iter().map(|p| p.progress).collect();
        assert_eq!(seen, vec![1.0, 2.0, 3.0, 4.0, 5.0], "round {round}");
    }
    pool.close().await;
}
