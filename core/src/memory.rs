//! Hands freed heap back to the system after bulk work.
//!
//! Listing thousands of tools or rewriting the tool catalog allocates tens of megabytes that
//! are freed moments later. glibc keeps freed memory in its arenas (and raises its trim
//! threshold after large frees), so an idle pool would go on holding it: twice its live size
//! with 50 servers of 100 tools each. A trim shortly after such work returns it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Long enough for the caller to have dropped what it was handed.
const DELAY: Duration = Duration::from_millis(250);

static SCHEDULED: AtomicBool = AtomicBool::new(false);

/// Clears the flag however the scheduled task ends, including with its runtime.
struct Unschedule;

impl Drop for Unschedule {
    fn drop(&mut self) {
        SCHEDULED.store(false, Ordering::SeqCst);
    }
}

/// Trims once, a moment from now; calls in the meantime join that one trim.
pub(crate) fn trim_soon() {
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    if SCHEDULED.swap(true, Ordering::SeqCst) {
        return;
    }
    let guard = Unschedule;
    rt.spawn(async move {
        tokio::time::sleep(DELAY).await;
        drop(guard);
        let _ = tokio::task::spawn_blocking(trim_now).await;
    });
}

/// Returns free heap pages to the system (glibc only; other allocators do it themselves).
pub(crate) fn trim_now() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}
