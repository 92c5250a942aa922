//! The quick TLS setup: one self-signed certificate made with `openssl req -x509`, used as the
//! server's certificate and as `--tls-ca-cert`. `redis-cli --tls --cacert` accepts it, and so
//! must redlock (by pinning: the server's certificate is exactly one it was told to trust);
//! a different self-signed certificate is still refused.

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use crate::common::{Cluster, describe, redlock};

/// Makes a self-signed certificate and key as the users do.
fn self_signed(dir: &Path, name: &str) -> (String, String) {
    let cert = dir.join(format!("{name}.pem")).display().to_string();
    let key = dir.join(format!("{name}.key")).display().to_string();
    let status = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args(["-keyout", &key, "-out", &cert, "-subj", "/CN=localhost"])
        .output()
        .expect("openssl is needed for this test: sudo apt-get install -y openssl");
    assert!(status.status.success(), "openssl req failed: {status:?}");
    (cert, key)
}

/// A loopback port below the ephemeral range that nobody listens on right now.
fn tls_port() -> u16 {
    (0..1000)
        .map(|_| fastrand::u16(10_000..32_000))
        .find(|port| TcpListener::bind(("127.0.0.1", *port)).is_ok())
        .expect("a free port below 32768")
}

#[test]
fn a_self_signed_certificate_given_as_the_ca_is_accepted_and_another_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = self_signed(dir.path(), "server");
    let (other, _) = self_signed(dir.path(), "other");
    let port = tls_port().to_string();
    let cluster = Cluster::start_with(
        1,
        &[
            "--tls-port",
            &port,
            "--tls-cert-file",
            &cert,
            "--tls-key-file",
            &key,
            "--tls-ca-cert-file",
            &cert,
            "--tls-auth-clients",
            "no",
        ],
    );
    let url = format!("rediss://localhost:{port}");
    let pinned = redlock()
        .args(["-s", &url, "--tls-ca-cert", &cert])
        .args(["run", "--key", "self-signed", "--", "true"])
        .output()
        .unwrap();
    assert!(pinned.status.success(), "{}", describe(&pinned));
    // Through the IP address too: the name in the certificate is not what is trusted.
    let by_ip = redlock()
        .args([
            "-s",
            &format!("rediss://127.0.0.1:{port}"),
            "--tls-ca-cert",
            &cert,
        ])
        .args(["run", "--key", "self-signed", "--", "true"])
        .output()
        .unwrap();
    assert!(by_ip.status.success(), "{}", describe(&by_ip));

    let stranger = redlock()
        .args(["-s", &url, "--tls-ca-cert", &other])
        .args(["run", "--key", "self-signed", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(stranger.status.code(), Some(78), "{}", describe(&stranger));
    let message = String::from_utf8_lossy(&stranger.stderr);
    assert!(message.contains("TLS handshake failed"), "{message}");
    assert!(cluster.servers[0].lock_keys().is_empty());
}
