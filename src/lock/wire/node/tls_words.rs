//! A failed TLS handshake in words. rustls names a certificate that does not verify with its
//! own identifiers (`invalid peer certificate: UnknownIssuer`, or, for what webpki reports
//! without a rustls variant of its own, `Other(OtherError(CaUsedAsEndEntity))`); a user needs
//! a sentence that says what is wrong with the server's certificate and what to check. What is
//! not recognised keeps rustls's text.

use rustls::{AlertDescription, CertificateError, Error};

/// "TLS handshake failed: WHY", WHY in words when rustls's error is one we know.
pub(super) fn handshake_failure(error: &std::io::Error) -> String {
    let words = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<Error>())
        .and_then(describe);
    format!(
        "TLS handshake failed: {}",
        words.unwrap_or_else(|| error.to_string())
    )
}

fn describe(error: &Error) -> Option<String> {
    Some(match error {
        Error::InvalidCertificate(certificate) => certificate_words(certificate)?,
        Error::AlertReceived(AlertDescription::CertificateRequired) => {
            "the server asks for a client certificate: give one with --tls-cert and --tls-key"
                .into()
        }
        Error::AlertReceived(AlertDescription::UnknownCA | AlertDescription::BadCertificate) => {
            "the server refused our client certificate (--tls-cert): it is not signed by a CA \
             the server trusts"
                .into()
        }
        _ => return None,
    })
}

fn certificate_words(error: &CertificateError) -> Option<String> {
    Some(match error {
        CertificateError::UnknownIssuer => "its certificate is not signed by a CA that redlock \
                                            trusts (unknown issuer): give the CA that signed it \
                                            with --tls-ca-cert"
            .into(),
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            "its certificate has expired: renew it on the server".into()
        }
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            "its certificate is not valid yet: check the clocks of this host and of the CA".into()
        }
        CertificateError::NotValidForName => {
            "its certificate is not valid for the host name in the URL: use a name the \
             certificate lists"
                .into()
        }
        CertificateError::NotValidForNameContext {
            expected,
            presented,
        } => format!(
            "its certificate is not valid for {:?}, the host in the URL (it lists {}): use a \
             name the certificate lists",
            expected.to_str(),
            if presented.is_empty() {
                "no names".to_string()
            } else {
                presented.join(", ")
            }
        ),
        CertificateError::Revoked => "its certificate was revoked".into(),
        // webpki looks the issuer up by name: another CA that bears the same name (two test
        // or internal CAs named alike) shows as a signature that does not verify.
        CertificateError::BadSignature => "its certificate is not signed by a CA that redlock \
                                           trusts (its signature does not verify with the key \
                                           of the trusted CA of that name): give the CA that \
                                           signed it with --tls-ca-cert"
            .into(),
        CertificateError::BadEncoding => "its certificate is malformed".into(),
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
            "its certificate is not meant for a TLS server (extended key usage)".into()
        }
        // webpki's reasons without a rustls variant travel as text; the two that users meet
        // when a server is given the wrong file.
        CertificateError::Other(other) => {
            let reason = format!("{:?}", other.0);
            if reason.contains("CaUsedAsEndEntity") {
                "it presented a CA certificate as its own (CA used as an end entity): give the \
                 server a certificate signed by that CA, and the CA to --tls-ca-cert"
                    .into()
            } else if reason.contains("EndEntityUsedAsCa") {
                "its certificate chain uses a server certificate as a CA (end entity used as a \
                 CA): check the chain the server sends"
                    .into()
            } else {
                return None;
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(error: Error) -> String {
        handshake_failure(&std::io::Error::new(std::io::ErrorKind::InvalidData, error))
    }

    #[test]
    fn certificate_errors_are_sentences() {
        let unknown = failure(Error::InvalidCertificate(CertificateError::UnknownIssuer));
        assert!(unknown.starts_with("TLS handshake failed: its certificate is not signed by"));
        assert!(!unknown.contains("UnknownIssuer"), "{unknown}");
        #[derive(Debug)]
        struct CaUsedAsEndEntity;
        impl std::fmt::Display for CaUsedAsEndEntity {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("CaUsedAsEndEntity")
            }
        }
        impl std::error::Error for CaUsedAsEndEntity {}
        let ca = failure(Error::InvalidCertificate(CertificateError::Other(
            rustls::OtherError(std::sync::Arc::new(CaUsedAsEndEntity)),
        )));
        assert!(ca.contains("(CA used as an end entity)"), "{ca}");
        assert!(!ca.contains("OtherError"), "{ca}");
        let expired = failure(Error::InvalidCertificate(CertificateError::Expired));
        assert!(expired.contains("has expired"), "{expired}");
    }

    #[test]
    fn what_is_not_known_keeps_rustls_words() {
        let other = failure(Error::General("something new".into()));
        assert_eq!(
            other,
            "TLS handshake failed: unexpected error: something new"
        );
    }
}
