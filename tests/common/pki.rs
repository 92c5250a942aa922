//! Test certificates for the TLS tests: a throwaway CA and the leaves it signs.

use std::path::PathBuf;

use tempfile::TempDir;

/// A test PKI: a CA, a server certificate for localhost / 127.0.0.1, and a client
/// certificate, all signed by the CA, as PEM files in a temporary directory.
pub struct Pki {
    _dir: TempDir,
    pub ca: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
}

impl Pki {
    pub fn generate() -> Pki {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let write = |name: &str, content: String| {
            let path = dir.path().join(name);
            std::fs::write(&path, content).expect("write PEM");
            path
        };
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "redlock test CA");
        let ca_key = KeyPair::generate().unwrap();
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let ca = write("ca.pem", ca_cert.pem());
        let issuer = Issuer::new(ca_params, ca_key);
        let leaf = |names: Vec<String>, cn: &str| {
            let mut params = CertificateParams::new(names).unwrap();
            params.distinguished_name.push(DnType::CommonName, cn);
            let key = KeyPair::generate().unwrap();
            let cert = params.signed_by(&key, &issuer).unwrap();
            (cert.pem(), key.serialize_pem())
        };
        let (server_pem, server_key_pem) = leaf(
            vec!["localhost".to_string(), "127.0.0.1".to_string()],
            "localhost",
        );
        let (client_pem, client_key_pem) = leaf(vec!["redlock-client".to_string()], "client");
        Pki {
            ca,
            server_cert: write("server.pem", server_pem),
            server_key: write("server.key", server_key_pem),
            client_cert: write("client.pem", client_pem),
            client_key: write("client.key", client_key_pem),
            _dir: dir,
        }
    }
}
