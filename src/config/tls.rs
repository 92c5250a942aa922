//! TLS settings for `rediss://` masters, built once from files.
//!
//! A self-signed certificate is the usual quick setup (`openssl req -x509 -newkey rsa:2048
//! -nodes -keyout k.pem -out c.pem -subj /CN=localhost`), given to the server as its
//! certificate and to redlock as `--tls-ca-cert`. The WebPKI rules refuse it: it is a CA
//! certificate used as the server's own (`CaUsedAsEndEntity`), and its name is only in the CN.
//! `redis-cli --tls --cacert c.pem` accepts it, so redlock does too, by pinning: a server
//! certificate that is byte for byte one of the certificates given with `--tls-ca-cert` is
//! accepted whatever its name or CA flag ([`Pinned`]). Everything else is verified as usual,
//! and the handshake signature always is, so the server must hold that certificate's private
//! key. With the system trust store (no `--tls-ca-cert`) nothing is pinned.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::DigitallySignedStruct;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, RootCertStore, SignatureScheme};

use crate::exit::Failure;

/// Where the certificates come from; `None` everywhere means the system's trust store and no
/// client certificate.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsPaths {
    pub ca_cert: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
}

/// Builds the client configuration: trust `ca_cert` (or the system store), and present `cert`
/// with `key` when both are given.
pub fn client_config(paths: &TlsPaths) -> Result<Arc<ClientConfig>, Failure> {
    let mut roots = RootCertStore::empty();
    let mut pinned = Vec::new();
    match &paths.ca_cert {
        Some(ca) => {
            for cert in certificates(ca, "--tls-ca-cert")? {
                pinned.push(cert.clone());
                roots
                    .add(cert)
                    .map_err(|e| Failure::config(format!("--tls-ca-cert {}: {e}", ca.display())))?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            for cert in found.certs {
                // A broken certificate in the system store is not ours to fix; skip it.
                let _ = roots.add(cert);
            }
            if roots.is_empty() {
                return Err(Failure::config(
                    "no trusted certificates in the system store for rediss:// masters; pass \
                     --tls-ca-cert with the CA that signed their certificates",
                ));
            }
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let setup_failed =
        |e: &dyn std::fmt::Display| Failure::config(format!("TLS setup failed: {e}"));
    let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| setup_failed(&e))?;
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| setup_failed(&e))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Pinned { webpki, pinned }));
    let config = match (&paths.cert, &paths.key) {
        (Some(cert), Some(key)) => {
            let chain = certificates(cert, "--tls-cert")?;
            let key_pem = read_pem(key, "--tls-key")?;
            let key_der = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| {
                Failure::config(format!(
                    "--tls-key {}: no usable private key ({e}); give a PEM key file",
                    key.display()
                ))
            })?;
            builder.with_client_auth_cert(chain, key_der).map_err(|e| {
                Failure::config(format!(
                    "--tls-cert {} and --tls-key {} do not make a client identity: {e}",
                    cert.display(),
                    key.display()
                ))
            })?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => {
            return Err(Failure::config(
                "--tls-cert and --tls-key go together: give both or neither",
            ));
        }
    };
    Ok(Arc::new(config))
}

fn certificates(path: &Path, option: &str) -> Result<Vec<CertificateDer<'static>>, Failure> {
    let unreadable = |why: String| Failure::config(format!("{option} {}: {why}", path.display()));
    let pem = read_pem(path, option)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| unreadable(e.to_string()))?;
    if certs.is_empty() {
        return Err(unreadable("no PEM certificate in the file".into()));
    }
    Ok(certs)
}

/// A PEM file's bytes; certificate chains and keys are a few KiB, so 1 MiB is plenty.
fn read_pem(path: &Path, option: &str) -> Result<Vec<u8>, Failure> {
    crate::files::read_bounded(path, 1024 * 1024)
        .map_err(|e| Failure::config(format!("{option} {}: {e}", path.display())))
}

/// WebPKI verification, except that a server certificate given as a trust anchor itself is
/// accepted as it is (see the module header).
#[derive(Debug)]
struct Pinned {
    webpki: Arc<WebPkiServerVerifier>,
    pinned: Vec<CertificateDer<'static>>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let verified = self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        match verified {
            Err(_)
                if self
                    .pinned
                    .iter()
                    .any(|p| p.as_ref() == end_entity.as_ref()) =>
            {
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}
