//! TLS to a PostgreSQL store with rustls (its `ring` provider): nothing to build or link from
//! OpenSSL.
//!
//! [`client_config`] turns the connection's [`TlsOptions`] into the rustls configuration, as
//! libpq's `sslmode` does: `prefer` and `require` encrypt without checking the server's
//! certificate; `verify-ca` checks that a trusted CA (`sslrootcert`) signed it; `verify-full`
//! also that it names the host connected to. A client certificate (`sslcert`, `sslkey`) is
//! shown to a server that asks for one.

use super::conn::{Mode, Roots, TlsOptions};
use anyhow::{Context as _, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{ring, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::path::Path;
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The connector `postgres` connects with.
pub fn connector(opts: &TlsOptions) -> Result<MakeRustlsConnect> {
    Ok(MakeRustlsConnect::new(client_config(opts)?))
}

/// The rustls client configuration for `opts`. Files that cannot be read or hold no
/// certificate are refused here, before any connection.
pub fn client_config(opts: &TlsOptions) -> Result<ClientConfig> {
    let provider = Arc::new(ring::default_provider());
    let algorithms = provider.signature_verification_algorithms;
    let tls = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| anyhow::anyhow!("cannot set up TLS for the PostgreSQL store: {e}"))?;
    let verifier: Arc<dyn ServerCertVerifier> = match (opts.mode, &opts.roots) {
        (Mode::VerifyCa | Mode::VerifyFull, Some(roots)) => {
            let webpki = WebPkiServerVerifier::builder_with_provider(
                Arc::new(root_store(roots)?),
                provider.clone(),
            )
            .build()
            .map_err(|e| anyhow::anyhow!("cannot set up TLS for the PostgreSQL store: {e}"))?;
            if opts.mode == Mode::VerifyFull {
                webpki
            } else {
                Arc::new(NameUnchecked {
                    chain: Some(webpki),
                    algorithms,
                })
            }
        }
        (Mode::VerifyCa | Mode::VerifyFull, None) => anyhow::bail!(
            "sslmode={} needs the CAs to trust: give sslrootcert=FILE",
            opts.mode.name()
        ),
        (Mode::Disable | Mode::Prefer | Mode::Require, _) => Arc::new(NameUnchecked {
            chain: None,
            algorithms,
        }),
    };
    let tls = tls.dangerous().with_custom_certificate_verifier(verifier);
    match &opts.client {
        None => Ok(tls.with_no_client_auth()),
        Some((cert, key)) => {
            let (chain, private) = client_identity(cert, key)?;
            tls.with_client_auth_cert(chain, private).map_err(|e| {
                anyhow::anyhow!(
                    "the client certificate {} and key {} do not go together ({e}): give the \
                     key the certificate was made for",
                    cert.display(),
                    key.display()
                )
            })
        }
    }
}

/// The CAs in `roots`: a PEM file's certificates, or the system's.
fn root_store(roots: &Roots) -> Result<RootCertStore> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::File(path) => {
            let certs = read_certs(path, "sslrootcert")?;
            for c in certs {
                store.add(c).map_err(|e| {
                    anyhow::anyhow!(
                        "sslrootcert {}: a certificate in it is not a CA's that can be trusted \
                         ({e})",
                        path.display()
                    )
                })?;
            }
        }
        Roots::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                anyhow::bail!(
                    "sslrootcert=system: this system has no trusted root certificates (install \
                     ca-certificates), or give the CA's certificate with sslrootcert=FILE"
                );
            }
        }
    }
    Ok(store)
}

/// The certificates of a PEM file, at least one.
fn read_certs(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect())
        .map_err(|e| {
            anyhow::anyhow!(
                "{what} {}: cannot read certificates from it ({e}): give a PEM file \
                 (-----BEGIN CERTIFICATE-----)",
                path.display()
            )
        })?;
    if certs.is_empty() {
        anyhow::bail!(
            "{what} {}: holds no certificate: give a PEM file (-----BEGIN CERTIFICATE-----)",
            path.display()
        );
    }
    Ok(certs)
}

/// The client's certificate chain and private key. As libpq does, a key file that others may
/// read is refused.
fn client_identity(
    cert: &Path,
    key: &Path,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    use std::os::unix::fs::PermissionsExt as _;
    let chain = read_certs(cert, "sslcert")?;
    let meta = std::fs::metadata(key)
        .with_context(|| format!("sslkey {}: cannot read it", key.display()))?;
    if meta.permissions().mode() & 0o077 != 0 {
        anyhow::bail!(
            "sslkey {}: others may read this private key: chmod 600 {} (libpq refuses it too)",
            key.display(),
            key.display()
        );
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
        anyhow::anyhow!(
            "sslkey {}: no private key read from it ({e}): give the PEM key \
             (-----BEGIN PRIVATE KEY-----)",
            key.display()
        )
    })?;
    Ok((chain, key))
}

/// The server's certificate checked short of its name: with `chain` (`verify-ca`), signed by a
/// trusted CA (the chain is checked before the name, so a name mismatch is the only error let
/// through); without (`prefer`, `require`), not at all. Either way the handshake's signatures
/// prove the server holds the certificate's key: the link is encrypted to that holder.
#[derive(Debug)]
struct NameUnchecked {
    chain: Option<Arc<WebPkiServerVerifier>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for NameUnchecked {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(mode: Mode, roots: Option<Roots>) -> TlsOptions {
        TlsOptions {
            mode,
            roots,
            client: None,
        }
    }

    #[test]
    fn every_mode_has_a_configuration_or_a_reason() {
        for mode in [Mode::Disable, Mode::Prefer, Mode::Require] {
            let c = client_config(&opts(mode, None)).unwrap();
            assert!(!c.crypto_provider().cipher_suites.is_empty(), "{mode:?}");
        }
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("ca.pem");
        let e = client_config(&opts(Mode::VerifyFull, Some(Roots::File(missing))))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("cannot read certificates"), "{e}");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let e = client_config(&opts(Mode::VerifyCa, Some(Roots::File(empty))))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("holds no certificate"), "{e}");
        let e = client_config(&opts(Mode::VerifyCa, None))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("sslrootcert=FILE"), "{e}");
    }
}
