//! A progress line on stderr while servers connect, only when stdout is a terminal.

use std::io::{IsTerminal, Write};
use std::time::Duration;

/// Shows `label` with a spinner until dropped.
pub struct Spinner {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Spinner {
    pub fn start(label: &str) -> Spinner {
        if !std::io::stdout().is_terminal() || !std::io::stderr().is_terminal() {
            return Spinner {
                stop: None,
                task: None,
            };
        }
        let (tx, mut rx) = tokio::sync::oneshot::channel();
        let label = label.to_string();
        let task = tokio::spawn(async move {
            const FRAMES: [&str; 8] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧"];
            let mut i = 0;
            loop {
                eprint!("\r{} {label}", FRAMES[i % FRAMES.len()]);
                let _ = std::io::stderr().flush();
                i += 1;
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                    _ = &mut rx => break,
                }
            }
            eprint!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
        });
        Spinner {
            stop: Some(tx),
            task: Some(task),
        }
    }

    /// Stops and clears the line before anything else is printed.
    pub async fn finish(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}
