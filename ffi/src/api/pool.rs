//! Opening and closing a pool.

use std::ffi::c_char;

use mcpmux_core::{Pool, PoolOptions};

use crate::calls::{POOLS, PoolEntry, close_pool, pool_entry};
use crate::error::{guard, json_arg, opt_str_arg, out_arg};
use crate::mcpmux_pool;
use crate::mcpmux_status;
use crate::rt::block_on;

/// Opens a pool over a config file; nothing connects yet. `options_json` (NULL for the
/// defaults) is a JSON object such as
/// `{"configPath": "/path/servers.json", "requestTimeoutMs": 30000, "shutdownTimeoutMs": 5000}`
/// (fields: configPath, projectPath, requestTimeoutMs, connectTimeoutMs, toolsTtlMs,
/// healthCheckIntervalMs, healthCheckIdleMs, autoReconnect, maxReconnectAttempts,
/// connectConcurrency, shutdownTimeoutMs, connectOnAdd, clientName, maxMessageBytes,
/// maxInputRounds, logLevel, idleStopMs, apps; an unknown field is an error). Without configPath,
/// $MCPMUX_CONFIG or the platform's default file is used. logLevel ("debug" … "emergency",
/// unset by default) asks servers for their log messages from that level up (`log` events).
/// idleStopMs (0 by default: never) stops a server's connection after that long without a
/// request; the next request starts it again. apps (`{}`, or `{"mimeTypes": [...]}`; unset
/// by default) declares that the host renders MCP Apps' views.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_pool_open(
    options_json: *const c_char,
    out_pool: *mut mcpmux_pool,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_pool, "out_pool")?;
        *out = 0;
        let options: PoolOptions = match unsafe { opt_str_arg(options_json, "options_json") }? {
            Some(text) => json_arg(text, "options_json")?,
            None => PoolOptions::default(),
        };
        let pool = block_on(Pool::open(options))?;
        *out = POOLS.insert(PoolEntry::new(pool));
        Ok(())
    })
}

/// Closes a pool and invalidates its handle at once (a second close is
/// MCPMUX_ERR_INVALID_HANDLE). Requests in flight get up to `drain_timeout_ms` to finish
/// (negative: the pool's shutdownTimeoutMs); those still running then end with
/// MCPMUX_ERR_SHUTTING_DOWN. Then every connection closes (stdio servers are stopped) and
/// every event subscription ends (finalizers run). From a host thread it returns when all
/// that is done and no callback of this pool is running any more; from inside a callback it
/// returns at once and the close completes in the background.
#[unsafe(no_mangle)]
pub extern "C" fn mcpmux_pool_close(pool: mcpmux_pool, drain_timeout_ms: i64) -> mcpmux_status {
    guard(|| close_pool(pool, drain_timeout_ms))
}

/// Number of requests in flight in the pool (calls counted by the core pool).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpmux_pool_in_flight(
    pool: mcpmux_pool,
    out_count: *mut usize,
) -> mcpmux_status {
    guard(|| {
        let out = out_arg(out_count, "out_count")?;
        *out = pool_entry(pool)?.pool.in_flight();
        Ok(())
    })
}
