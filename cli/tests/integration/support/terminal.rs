//! A real terminal for a command that behaves differently on one (`chat` asks before a tool
//! runs): a pseudo-terminal from the kernel (openpty) as its stdin, stdout and stderr, what it
//! writes collected, and keys typed to it.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcpmux_tests::ChildGuard;

/// A command running on a terminal of its own.
pub struct Terminal {
    keyboard: std::fs::File,
    screen: Arc<Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
    child: ChildGuard,
}

impl Terminal {
    /// Starts `command` with a new terminal as its stdin, stdout and stderr.
    pub fn start(mut command: Command) -> Terminal {
        let (mut main, mut side) = (-1, -1);
        // SAFETY: openpty writes two descriptors it opened into the two integers; the null
        // name, termios and window size mean "none" and "the defaults".
        let opened = unsafe {
            libc::openpty(
                &mut main,
                &mut side,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened by openpty and are owned by nothing else.
        let (main, side) = unsafe { (OwnedFd::from_raw_fd(main), OwnedFd::from_raw_fd(side)) };
        let stdio = || Stdio::from(side.try_clone().expect("dup the terminal"));
        command.stdin(stdio()).stdout(stdio()).stderr(stdio());
        let child = ChildGuard::spawn(&mut command).expect("start the command on a terminal");
        // Only the child holds the terminal's side now, so reading ends when it exits.
        drop((command, side));
        let keyboard = std::fs::File::from(main);
        let mut display = keyboard.try_clone().expect("dup the terminal");
        let screen = Arc::new(Mutex::new(String::new()));
        let shown = screen.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // Linux answers EIO once the last holder of the other side has closed it.
            while let Ok(n @ 1..) = display.read(&mut buf) {
                shown
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Terminal {
            keyboard,
            screen,
            reader: Some(reader),
            child,
        }
    }

    /// Everything shown so far.
    pub fn screen(&self) -> String {
        self.screen.lock().unwrap().clone()
    }

    /// Waits until `text` is shown; false after `timeout`.
    pub fn wait_for(&self, text: &str, timeout: Duration) -> bool {
        mcpmux_tests::wait_until(timeout, || self.screen().contains(text))
    }

    /// Types `keys`.
    pub fn type_keys(&mut self, keys: &str) {
        self.keyboard
            .write_all(keys.as_bytes())
            .expect("type on the terminal");
    }

    /// Waits for the command to exit (killing it after `timeout`): its status and all it showed.
    pub fn finish(mut self, timeout: Duration) -> (Option<ExitStatus>, String) {
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(status) = self.child.child_mut().try_wait().expect("wait") {
                break Some(status);
            }
            if Instant::now() > deadline {
                self.child.kill();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        (status, self.screen())
    }
}
