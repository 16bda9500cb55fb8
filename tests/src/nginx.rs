//! A real nginx (Debian's package) in front of the servers under test: a load balancer over
//! replicas, or a site that has moved (redirects). It runs unprivileged from a folder of the
//! test's own, on a free port of 127.0.0.1, and stops with its [`ChildGuard`].

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::{ChildGuard, free_port};

/// nginx, from PATH or where Debian puts it (not on every user's PATH).
pub fn nginx() -> Option<PathBuf> {
    crate::find_in_path("nginx").or_else(|| {
        let debian = PathBuf::from("/usr/sbin/nginx");
        debian.is_file().then_some(debian)
    })
}

/// Starts `nginx` with `http_block` (the inside of its `http { }`, where `{port}` stands for
/// the port it listens on) from `dir`, which holds its config, logs and temporary files; the
/// guard and the port once it accepts connections.
pub fn start(nginx: &Path, dir: &Path, http_block: &str) -> (ChildGuard, u16) {
    for _ in 0..5 {
        let port = free_port();
        let conf = dir.join("nginx.conf");
        std::fs::write(
            &conf,
            config(dir, &http_block.replace("{port}", &port.to_string())),
        )
        .expect("write nginx.conf");
        let mut command = Command::new(nginx);
        command
            .arg("-p")
            .arg(dir)
            .arg("-e")
            .arg(dir.join("error.log"))
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut guard = ChildGuard::spawn(&mut command).expect("start nginx");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline && !guard.has_exited() {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return (guard, port);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Another process took the port first: try another.
    }
    let log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
    panic!("nginx did not start: {log}");
}

/// A whole nginx.conf that keeps every file nginx writes inside `dir` (its defaults are under
/// /var, which a test may not write).
fn config(dir: &Path, http_block: &str) -> String {
    let dir = dir.display();
    format!(
        "daemon off;\nworker_processes 1;\npid {dir}/nginx.pid;\n\
         error_log {dir}/error.log;\nevents {{ worker_connections 256; }}\n\
         http {{\n    access_log {dir}/access.log;\n\
         client_body_temp_path {dir}/body;\n    proxy_temp_path {dir}/proxy;\n\
         fastcgi_temp_path {dir}/fastcgi;\n    uwsgi_temp_path {dir}/uwsgi;\n\
         scgi_temp_path {dir}/scgi;\n{http_block}\n}}\n"
    )
}
