//! A release of redlock as CI install steps fetch one: a directory holding the archive named
//! as scripts/package names this machine's static build and a SHA256SUMS (which also lists
//! another file, as a real one does), served over HTTP by a server the test starts on loopback
//! (no network), which keeps the paths it was asked for. The archive's `redlock` is a symbolic
//! link to the binary under test: the tests check the install steps (the name, the sum, the
//! unpacking, PATH), not the archive (tests/package.rs does), and gzipping a 100 MB debug build
//! would cost seconds.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The version this checkout builds, which the release is of.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A directory served over HTTP on loopback; keeps the paths it was asked for.
pub struct Release {
    pub dir: PathBuf,
    pub url: String,
    asked: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl Release {
    /// Publishes this machine's archive and a SHA256SUMS that also lists another file.
    pub fn publish(root: &Path) -> Release {
        let dir = root.join("release");
        std::fs::create_dir_all(&dir).unwrap();
        let name = format!(
            "redlock-{VERSION}-{}-unknown-linux-musl",
            std::env::consts::ARCH
        );
        let staged = root.join("staged").join(&name);
        std::fs::create_dir_all(&staged).unwrap();
        let binary = std::fs::canonicalize(super::redlock_binary()).unwrap();
        std::os::unix::fs::symlink(binary, staged.join("redlock")).unwrap();
        std::fs::write(dir.join("redlock_other.deb"), "another file\n").unwrap();
        let archive = format!("{name}.tar.gz");
        run(Command::new("tar")
            .arg("-czf")
            .arg(dir.join(&archive))
            .arg("-C")
            .arg(root.join("staged"))
            .arg(&name));
        let sums = run(Command::new("sha256sum")
            .args(["redlock_other.deb", &archive])
            .current_dir(&dir));
        std::fs::write(dir.join("SHA256SUMS"), sums).unwrap();
        Release::serve(dir)
    }

    /// Serves `dir` as it is (scripts/package's target/dist/, say).
    pub fn serve(dir: PathBuf) -> Release {
        let listener = super::bind_test_port();
        listener.set_nonblocking(true).unwrap();
        let url = format!(
            "http://127.0.0.1:{}/releases/v{VERSION}",
            listener.local_addr().unwrap().port()
        );
        let asked = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (served, log, stopped) = (dir.clone(), asked.clone(), stop.clone());
        std::thread::spawn(move || accept(&listener, &served, &log, &stopped));
        Release {
            dir,
            url,
            asked,
            stop,
        }
    }

    pub fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }

    /// The archive's name in this release.
    pub fn archive(&self) -> String {
        format!(
            "redlock-{VERSION}-{}-unknown-linux-musl.tar.gz",
            std::env::consts::ARCH
        )
    }
}

impl Drop for Release {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Answers `GET /releases/vVERSION/NAME` with `dir/NAME` (404 for anything else), one
/// connection at a time, until `stop`.
fn accept(listener: &TcpListener, dir: &Path, asked: &Mutex<Vec<String>>, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let Ok((stream, _)) = listener.accept() else {
            std::thread::sleep(Duration::from_millis(5));
            continue;
        };
        stream.set_nonblocking(false).unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut request = String::new();
        let _ = reader.read_line(&mut request);
        // The headers, up to the empty line.
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line.trim() != "" {
            line.clear();
        }
        let path = request.split_whitespace().nth(1).unwrap_or("").to_string();
        asked.lock().unwrap().push(path.clone());
        let prefix = format!("/releases/v{VERSION}/");
        let file = path
            .strip_prefix(&prefix)
            .filter(|n| !n.contains('/'))
            .map(|n| dir.join(n));
        let mut stream = stream;
        match file.and_then(|f| std::fs::read(f).ok()) {
            Some(body) => {
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream
                    .write_all(head.as_bytes())
                    .and_then(|()| stream.write_all(&body));
            }
            None => {
                let _ = stream.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        }
    }
}

fn run(cmd: &mut Command) -> Vec<u8> {
    let output = cmd.output().unwrap();
    assert!(output.status.success(), "{}", super::describe(&output));
    output.stdout
}
