//! What a binding's event loop needs from core, and all that it may touch of the transports:
//! the only public door into them. Python's asyncio and Node's libuv poll calls on their own
//! thread; two things let them do it at the cost a client written for that loop pays.
//!
//! **Reading replies on the loop** ([`noting_readers`], [`StdoutReader`], [`Pumped`]). Run
//! the code that starts calls inside [`noting_readers`] with the loop's non-zero id: it
//! returns the stdout pipes of the stdio servers those calls wrote to that no loop watches
//! yet. For each, [`StdoutReader::claim`] it, watch [`StdoutReader::fd`] for readability,
//! and [`StdoutReader::pump`] when it is readable: a reply to a call reaches its caller
//! without waking a runtime thread first. [`Pumped::Drained`] means wait for readability
//! again; [`Pumped::Full`] and [`Pumped::Ended`] mean stop watching and
//! [`StdoutReader::release`] it. Release every pipe when the loop goes away.
//!
//! **Writing one turn's requests at once** ([`batch_writes_on_this_thread`],
//! [`end_of_turn`], [`stop_batching_on_this_thread`]). On the loop's thread, call
//! [`batch_writes_on_this_thread`] once and [`end_of_turn`] at the end of every turn (before
//! the loop waits for I/O): the requests a turn sends to a server go out as one write. Call
//! [`stop_batching_on_this_thread`] when the loop's environment goes away. A Rust program
//! that drives a current-thread runtime itself gets the same from
//! [`current_thread_runtime`] (as `mcpmux serve --stdio` does).
//!
//! All of these are called inside the tokio runtime's context (`Runtime::enter`).

pub use crate::transport::stdout_reader::{Pumped, StdoutReader, noting_readers};
pub use crate::transport::write_batch::{
    batch_writes_on_this_thread, current_thread_runtime, end_of_turn, stop_batching_on_this_thread,
};
