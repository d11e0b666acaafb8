//! The webhook's TLS, as policy-server 1.35 sets it up (`config.rs`
//! `build_tls_config`, `certs.rs`): `--cert-file` and `--key-file` both or
//! neither, each file holding exactly one PEM certificate (no chain) or
//! key. rustls with the `ring` provider, HTTP/1.1 only in ALPN. Unlike
//! policy-server, the files are read once, not watched for renewal.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// The certificate and key files, if HTTPS is asked for.
pub fn files(cert: Option<&Path>, key: Option<&Path>) -> Result<Option<(PathBuf, PathBuf)>> {
    match (cert, key) {
        (Some(cert), Some(key)) => Ok(Some((cert.to_owned(), key.to_owned()))),
        (None, None) => Ok(None),
        _ => bail!("both certificate and key must be provided together"),
    }
}

/// The TLS acceptor serving `cert_file` with `key_file`.
pub fn acceptor(cert_file: &Path, key_file: &Path) -> Result<TlsAcceptor> {
    let read = |path: &Path| {
        std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&read(cert_file)?)
        .filter_map(Result::ok)
        .collect();
    if certs.len() != 1 {
        bail!(
            "Expected exactly one certificate in certificate file, found {}",
            certs.len()
        );
    }
    let keys: Vec<PrivateKeyDer<'static>> = PrivateKeyDer::pem_slice_iter(&read(key_file)?)
        .filter_map(Result::ok)
        .collect();
    let [key] = <[_; 1]>::try_from(keys).map_err(|keys| {
        anyhow::anyhow!("Expected exactly one key in key file, found {}", keys.len())
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .context("the certificate and key do not make a TLS identity")?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/tls")
            .join(name)
    }

    #[test]
    fn cert_and_key_come_together_or_not_at_all() {
        let (cert, key) = (Path::new("c.crt"), Path::new("c.key"));
        assert_eq!(files(None, None).unwrap(), None);
        assert_eq!(
            files(Some(cert), Some(key)).unwrap(),
            Some((cert.to_owned(), key.to_owned()))
        );
        for (cert, key) in [(Some(cert), None), (None, Some(key))] {
            assert_eq!(
                files(cert, key).unwrap_err().to_string(),
                "both certificate and key must be provided together"
            );
        }
    }

    #[test]
    fn one_certificate_and_one_key_make_an_acceptor() {
        assert!(acceptor(&data("serve.crt"), &data("serve.key")).is_ok());
    }

    #[test]
    fn anything_but_exactly_one_certificate_or_key_is_refused() {
        let dir = std::env::temp_dir().join(format!("policy-runner-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let chain = dir.join("chain.crt");
        let both = [data("serve.crt"), data("ca.crt")].map(|p| std::fs::read(p).unwrap());
        std::fs::write(&chain, both.concat()).unwrap();
        let error = |cert: &Path, key: &Path| acceptor(cert, key).err().unwrap().to_string();

        assert_eq!(
            error(&chain, &data("serve.key")),
            "Expected exactly one certificate in certificate file, found 2"
        );
        assert_eq!(
            error(&data("serve.key"), &data("serve.key")),
            "Expected exactly one certificate in certificate file, found 0"
        );
        assert_eq!(
            error(&data("serve.crt"), &data("serve.crt")),
            "Expected exactly one key in key file, found 0"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
