//! TLS to a PostgreSQL store with rustls (its `ring` provider): nothing to build or link from
//! OpenSSL.
//!
//! [`client_config`] turns the URL's `sslmode` into the rustls configuration, one arm per mode.
//! The modes `postgres` parses are libpq's `disable`, `prefer` and `require`; in the last two
//! the link is encrypted and the server's certificate is not checked (libpq checks it only with
//! `verify-ca` or `verify-full`). Those would be further arms: roots from `sslrootcert` given
//! to `with_root_certificates` in place of `Unverified`, and `sslcert`/`sslkey` to
//! `with_client_auth_cert` in place of `with_no_client_auth`.

use anyhow::Result;
use postgres::config::SslMode;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{ring, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The connector `postgres` connects with, for the URL's `sslmode`.
pub fn connector(mode: SslMode) -> Result<MakeRustlsConnect> {
    Ok(MakeRustlsConnect::new(client_config(mode)?))
}

/// The rustls client configuration for `mode`: with `prefer` and `require`, encrypted without
/// authenticating the server, as libpq does (with `disable` it is never used). A mode this
/// function does not know is refused rather than taken for one that checks less.
pub fn client_config(mode: SslMode) -> Result<ClientConfig> {
    let provider = Arc::new(ring::default_provider());
    let algorithms = provider.signature_verification_algorithms;
    let tls = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| anyhow::anyhow!("cannot set up TLS for the PostgreSQL store: {e}"))?;
    let tls = match mode {
        SslMode::Disable | SslMode::Prefer | SslMode::Require => tls
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unverified(algorithms))),
        other => anyhow::bail!(
            "sslmode {other:?} is not supported by this vernier: give disable, prefer or require"
        ),
    };
    Ok(tls.with_no_client_auth())
}

/// Takes any certificate the server shows, and checks only that the server holds its key (the
/// handshake's signatures): an encrypted link to a server not authenticated.
#[derive(Debug)]
struct Unverified(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_postgres_parses_has_a_configuration() {
        for mode in [SslMode::Disable, SslMode::Prefer, SslMode::Require] {
            let c = client_config(mode).unwrap();
            assert!(!c.crypto_provider().cipher_suites.is_empty(), "{mode:?}");
        }
    }
}
