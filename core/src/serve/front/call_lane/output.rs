//! The one writer of a lane's stream: the loop's messages and the lane's answers, in the order
//! they were made, with the backlog of answers the client has not read yet.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use rmcp::model::ServerJsonRpcMessage;
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// Past this many bytes of answers the client has not read yet, the lane stops reading too.
pub(super) const MAX_BACKLOG: u64 = 4 * 1024 * 1024;

/// The client's side of the stream: every message for it, from the loop or the lane, queued
/// in order and written by one task, which writes whatever has queued up in one go.
pub(in crate::serve) struct Output {
    state: Mutex<Queued>,
    /// Wakes the writer.
    queued: tokio::sync::Notify,
    /// How many bytes the writer has written so far; the loop's flush waits on it.
    written: tokio::sync::watch::Sender<u64>,
    /// Told when a lane call ends or a batch is written: the lane may be waiting for room.
    pub(super) room: tokio::sync::Notify,
}

#[derive(Default)]
pub(super) struct Queued {
    bytes: Vec<u8>,
    /// Bytes ever queued.
    total: u64,
    /// The writer stopped: the client's end is gone, or the session ended.
    closed: bool,
}

impl Output {
    /// An output writing to `writer` from a task of its own, until [`Output::close`].
    pub(in crate::serve) fn start<W>(writer: W) -> (Arc<Output>, tokio::task::JoinHandle<()>)
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let output = Arc::new(Output {
            state: Mutex::default(),
            queued: tokio::sync::Notify::new(),
            written: tokio::sync::watch::channel(0).0,
            room: tokio::sync::Notify::new(),
        });
        let task = tokio::spawn(output.clone().write_out(writer));
        (output, task)
    }

    /// Queues `message` as one line, written straight into the queue.
    pub(super) fn send(&self, message: &ServerJsonRpcMessage) {
        let mut state = self.state.lock().unwrap();
        if state.closed {
            return;
        }
        let start = state.bytes.len();
        if let Err(e) = crate::wire::answer_line::write(message, &mut state.bytes) {
            state.bytes.truncate(start);
            drop(state);
            tracing::error!("a served call's answer could not be written: {e}");
            return;
        }
        state.bytes.push(b'\n');
        state.total += (state.bytes.len() - start) as u64;
        drop(state);
        self.queued.notify_one();
    }

    /// Queues whole lines; returns the count of bytes queued so far, or `None` once closed.
    pub(super) fn queue(&self, lines: &[u8]) -> Option<u64> {
        let mut state = self.state.lock().unwrap();
        if state.closed {
            return None;
        }
        state.bytes.extend_from_slice(lines);
        state.total += lines.len() as u64;
        let total = state.total;
        drop(state);
        self.queued.notify_one();
        Some(total)
    }

    /// Bytes queued and not yet written to the client.
    pub(super) fn backlog(&self) -> u64 {
        let total = self.state.lock().unwrap().total;
        total.saturating_sub(*self.written.borrow())
    }

    /// Writes what is queued, once the lane and the loop are done with the session.
    pub(in crate::serve) fn close(&self) {
        self.state.lock().unwrap().closed = true;
        self.queued.notify_one();
    }

    pub(super) async fn write_out<W: AsyncWrite + Unpin>(self: Arc<Self>, mut writer: W) {
        let mut batch = Vec::new();
        let mut done = 0u64;
        loop {
            let closed = {
                let mut state = self.state.lock().unwrap();
                // The queue keeps the batch's allocation for what comes next.
                std::mem::swap(&mut batch, &mut state.bytes);
                state.closed
            };
            if batch.is_empty() {
                if closed {
                    break;
                }
                self.queued.notified().await;
                continue;
            }
            if writer.write_all(&batch).await.is_err() || writer.flush().await.is_err() {
                // The client is gone: nothing more can reach it.
                self.state.lock().unwrap().closed = true;
                break;
            }
            done += batch.len() as u64;
            self.written.send_replace(done);
            self.room.notify_one();
            batch.clear();
        }
        let _ = writer.shutdown().await;
        // Flushes waiting on bytes that will never be written end now (see `LoopWriter`), and
        // so does the lane's wait for room.
        self.written.send_replace(u64::MAX);
        self.room.notify_one();
    }
}

/// The loop's writer: what it writes joins the [`Output`] queue line by line, and its flush
/// returns once those lines are written, as the loop's writes to stdout did.
pub(in crate::serve) struct LoopWriter {
    output: Arc<Output>,
    partial: Vec<u8>,
    /// Bytes of the queue this writer's lines end at.
    mark: u64,
    flushing: Option<Pin<Box<dyn Future<Output = bool> + Send>>>,
}

impl LoopWriter {
    pub(in crate::serve) fn new(output: Arc<Output>) -> LoopWriter {
        LoopWriter {
            output,
            partial: Vec::new(),
            mark: 0,
            flushing: None,
        }
    }
}

pub(super) fn gone() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the served client is gone")
}

impl AsyncWrite for LoopWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        this.partial.extend_from_slice(buf);
        if let Some(end) = memchr::memrchr(b'\n', &this.partial) {
            let lines: Vec<u8> = this.partial.drain(..=end).collect();
            match this.output.queue(&lines) {
                Some(total) => this.mark = total,
                None => return Poll::Ready(Err(gone())),
            }
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.flushing.is_none() {
            let mark = this.mark;
            let mut written = this.output.written.subscribe();
            if *written.borrow() >= mark {
                return Poll::Ready(Ok(()));
            }
            this.flushing = Some(Box::pin(async move {
                written
                    .wait_for(|w| *w >= mark)
                    .await
                    .is_ok_and(|w| *w != u64::MAX)
            }));
        }
        let flushing = this.flushing.as_mut().expect("set above");
        let written = std::task::ready!(flushing.as_mut().poll(cx));
        this.flushing = None;
        Poll::Ready(if written { Ok(()) } else { Err(gone()) })
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.poll_flush(cx)
    }
}
