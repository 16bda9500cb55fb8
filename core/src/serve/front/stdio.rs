//! This process's stdin and stdout as a served client's transport. tokio's `stdin()` and
//! `stdout()` hand every read and write to a blocking thread (a terminal or a file cannot be
//! polled), which costs two thread hops per message each way; when the client started us on
//! pipes, as every MCP client does, the pipes are polled on the event loop instead.

use std::os::fd::AsFd;
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

/// The reading half of a served client's transport.
pub type StdinReader = Pin<Box<dyn AsyncRead + Send>>;
/// The writing half of a served client's transport.
pub type StdoutWriter = Pin<Box<dyn AsyncWrite + Send>>;

/// stdin and stdout, polled on the event loop when they are pipes.
pub fn stdio() -> (StdinReader, StdoutWriter) {
    let reader: StdinReader = match polled_stdin() {
        Some(pipe) => Box::pin(pipe),
        None => Box::pin(tokio::io::stdin()),
    };
    let writer: StdoutWriter = match polled_stdout() {
        Some(pipe) => Box::pin(pipe),
        None => Box::pin(tokio::io::stdout()),
    };
    (reader, writer)
}

/// A copy of stdin's descriptor as an event-loop pipe, if stdin is a pipe. tokio makes it
/// non-blocking, which is shared with fd 0 itself: nothing else in the process reads it.
fn polled_stdin() -> Option<tokio::net::unix::pipe::Receiver> {
    let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    tokio::net::unix::pipe::Receiver::from_file(std::fs::File::from(fd)).ok()
}

/// As [`polled_stdin`], for stdout. Only the served client's messages go to stdout.
fn polled_stdout() -> Option<tokio::net::unix::pipe::Sender> {
    let fd = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    tokio::net::unix::pipe::Sender::from_file(std::fs::File::from(fd)).ok()
}
