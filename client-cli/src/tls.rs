//! TLS for `wss://` servers: rustls (no OpenSSL) with Mozilla's root certificates bundled,
//! plus the certificates of an extra PEM file (`--ca-file` / `STOA_CA_FILE`) for a server
//! with a private or self-signed certificate.
//!
//! Why a file rather than "accept any certificate": a client that skips verification can be
//! fooled by anyone on the path; trusting one named certificate keeps the check.

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use tokio_tungstenite::Connector;

/// The connector for `wss://` addresses; `ca_file` adds trusted certificates.
pub fn connector(ca_file: Option<&str>) -> Result<Connector, String> {
    Ok(Connector::Rustls(client_config(ca_file)?))
}

/// The TLS client configuration (for `wss://` and for `stoa admin`'s `https://`): Mozilla's
/// roots, plus the certificates of `ca_file`.
pub fn client_config(ca_file: Option<&str>) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(path) = ca_file {
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
            .map_err(|e| format!("cannot read certificates from {path}: {e}"))?
            .collect::<Result<_, _>>()
            .map_err(|e| format!("bad certificate in {path}: {e}"))?;
        if certs.is_empty() {
            return Err(format!("{path} holds no PEM certificate"));
        }
        for cert in certs {
            roots
                .add(cert)
                .map_err(|e| format!("unusable certificate in {path}: {e}"))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}
