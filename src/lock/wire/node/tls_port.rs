//! Naming a plaintext URL that points at a TLS port: such a port closes the connection without
//! a word, which alone would read as "connection closed". Asking it a TLS ClientHello tells the
//! two apart, so the error can say to use `rediss://`.

use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::ServerName;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::super::master::Address;
use super::super::pipe::Pipe;
use super::super::resp;
use super::{Node, NodeError};

/// How long the ClientHello asked of a port that closed a new connection silently may take
/// to be answered: a TLS server answers at once.
const TLS_QUESTION: Duration = Duration::from_secs(1);

impl Node {
    /// `error`, unless it is the silent close with which a TLS port answers plaintext: a
    /// connection on which the master never sent a byte, to a plaintext TCP address whose
    /// port answers a TLS ClientHello with TLS. Then the error says to use `rediss://`.
    pub(super) async fn named_tls(&self, pipe: &Pipe, error: NodeError) -> NodeError {
        // A TLS record is bytes heard, and named by the decoder already.
        let silent =
            matches!(&error, NodeError::Io(_) | NodeError::Connect(_)) && pipe.heard_nothing();
        if silent && self.speaks_tls().await {
            NodeError::Connect(resp::SPEAKS_TLS.into())
        } else {
            error
        }
    }

    /// Whether this master's port, given as plaintext `redis://`, answers a TLS ClientHello
    /// with a TLS record (its ServerHello, or an alert). Nothing but the hello is sent, on a
    /// connection of its own, and nothing that comes back is trusted beyond its first two
    /// bytes.
    async fn speaks_tls(&self) -> bool {
        let Address::Tcp {
            host,
            port,
            tls: false,
        } = self.master.address()
        else {
            return false;
        };
        let Some(hello) = client_hello(host) else {
            return false;
        };
        let ask = async {
            let mut stream = TcpStream::connect((host.as_str(), *port)).await.ok()?;
            stream.write_all(&hello).await.ok()?;
            let mut head = [0u8; 2];
            stream.read_exact(&mut head).await.ok()?;
            Some(matches!(head, [0x15 | 0x16, 0x03]))
        };
        matches!(
            tokio::time::timeout(TLS_QUESTION, ask).await,
            Ok(Some(true))
        )
    }
}

/// The first bytes a TLS client sends (its ClientHello), to ask a port whether it speaks TLS.
/// No certificate is ever checked with this configuration: the connection never gets past
/// the hello.
fn client_hello(host: &str) -> Option<Vec<u8>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    // The name only goes into the hello's SNI; a host that is no valid name still gets asked.
    let name = ServerName::try_from(host.to_string())
        .or_else(|_| ServerName::try_from("localhost"))
        .ok()?;
    let mut connection = rustls::ClientConnection::new(Arc::new(config), name).ok()?;
    let mut hello = Vec::new();
    connection.write_tls(&mut hello).ok()?;
    Some(hello)
}
