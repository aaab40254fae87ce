//! The certificate an HTTPS connection was made with (feature `tls`): the TLS client
//! configuration reqwest's `rustls` feature builds (its crypto provider, the platform's roots
//! through `rustls-platform-verifier`, TLS 1.2 and 1.3, ALPN `http/1.1`), with a verifier that
//! notes the leaf certificate's notAfter on its way to the platform verifier
//! (`mcp_readiness_tls_certificate_expiry_timestamp_seconds`).

use std::sync::{Arc, Mutex};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};

use crate::util::MutexExt as _;

/// Where the leaf certificate's notAfter (Unix seconds) of the last TLS handshake is kept.
#[derive(Debug, Clone, Default)]
pub(crate) struct CertificateSlot(Arc<Mutex<Option<i64>>>);

impl CertificateSlot {
    /// The notAfter of the last leaf certificate a server presented, if any.
    pub(crate) fn not_after(&self) -> Option<i64> {
        *self.0.lock_unpoisoned()
    }
}

/// The notAfter of a DER certificate, in Unix seconds; `None` when it does not parse.
pub(crate) fn not_after(der: &[u8]) -> Option<i64> {
    let (_, certificate) = x509_parser::parse_x509_certificate(der).ok()?;
    Some(certificate.validity().not_after.timestamp())
}

/// reqwest's rustls client configuration, whose verifier writes the leaf certificate's notAfter
/// to `slot` at each full handshake (before it is verified: an expired certificate is noted too,
/// and the handshake then fails as it would have).
pub(crate) fn client_config(slot: CertificateSlot) -> Result<ClientConfig, rustls::Error> {
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::aws_lc_rs::default_provider()));
    let platform = rustls_platform_verifier::Verifier::new(provider.clone())?;
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(NotingVerifier {
            inner: platform,
            slot,
        }))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The platform verifier, noting the leaf certificate first.
#[derive(Debug)]
struct NotingVerifier {
    inner: rustls_platform_verifier::Verifier,
    slot: CertificateSlot,
}

impl ServerCertVerifier for NotingVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        *self.slot.0.lock_unpoisoned() = not_after(end_entity);
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }

    fn requires_raw_public_keys(&self) -> bool {
        self.inner.requires_raw_public_keys()
    }
}

#[cfg(test)]
mod tests {
    use crate::client::transport::tls_certificate::*;

    #[test]
    fn garbage_is_no_certificate() {
        assert_eq!(not_after(b"not a certificate"), None);
        assert_eq!(CertificateSlot::default().not_after(), None);
    }
}
