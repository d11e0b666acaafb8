//! What `push` and `pull` share: OCI references, the registry client and
//! credentials, and the pure pieces of kwctl `push.rs`. kwctl stores a
//! policy as an OCI artifact (policy-fetcher `registry/mod.rs`, on the same
//! `oci-client`): a config blob `{}` and one layer, the annotated module.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Once;

use anyhow::{Context, Result, anyhow, bail};
use docker_credential::{CredentialRetrievalError, DockerCredential};
use oci_client::annotations::ORG_OPENCONTAINERS_IMAGE_SOURCE;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use serde::Deserialize;

/// The config blob kwctl pushes with every policy.
pub const CONFIG_DATA: &[u8] = b"{}";

/// Media type of the config blob (`oci_client::manifest::WASM_CONFIG_MEDIA_TYPE`).
pub use oci_client::manifest::WASM_CONFIG_MEDIA_TYPE;

/// Media type of the module layer (`oci_client::manifest::WASM_LAYER_MEDIA_TYPE`).
pub use oci_client::manifest::WASM_LAYER_MEDIA_TYPE;

/// Annotation whose value kwctl also publishes as
/// `org.opencontainers.image.source` (policy-evaluator constants.rs).
pub const ANNOTATION_POLICY_SOURCE: &str = "io.kubewarden.policy.source";

/// The OCI reference named by `uri`: `registry://host[:port]/repo:tag`,
/// `…@sha256:…`, or the same without the `registry://` scheme (as kwctl
/// accepts). Other schemes are refused.
pub fn parse_reference(uri: &str) -> Result<Reference> {
    let image = match uri.split_once("://") {
        None => uri,
        Some(("registry", rest)) => rest,
        Some((scheme, _)) => {
            bail!("unsupported scheme `{scheme}://` in {uri}: use registry://HOST/REPO:TAG")
        }
    };
    Reference::try_from(image)
        .map_err(|error| anyhow!("cannot parse {uri} as an OCI reference: {error}"))
}

/// The manifest annotations kwctl `push.rs` (`build_oci_annotations`)
/// derives from the module's metadata annotations: multi-line values are
/// left out (the OCI spec does not support them; the README stored as
/// `io.kubewarden.policy.usage` is the usual one), the others are trimmed,
/// and `io.kubewarden.policy.source` is copied to
/// `org.opencontainers.image.source` unless that is already set.
pub fn manifest_annotations(annotations: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = annotations
        .iter()
        .filter(|(key, value)| {
            let keep = value.lines().count() <= 1;
            if !keep {
                eprintln!(
                    "WARN policy-runner: annotation {key} is a multi-line string, it will be removed from the OCI manifest"
                );
            }
            keep
        })
        .map(|(key, value)| (key.clone(), value.trim().to_owned()))
        .collect();
    if let Some(source) = out.get(ANNOTATION_POLICY_SOURCE).cloned() {
        out.entry(ORG_OPENCONTAINERS_IMAGE_SOURCE.to_owned())
            .or_insert(source);
    }
    out
}

/// `registry/repository@digest` for a pushed manifest, as kwctl's
/// `build_immutable_ref`: the digest is the last path segment of the
/// manifest URL the registry answered with, and must be a well-formed
/// sha256 or sha512 digest.
pub fn immutable_ref(reference: &Reference, manifest_url: &str) -> Result<String> {
    let digest = manifest_url
        .rsplit_once('/')
        .map(|(_, digest)| digest)
        .ok_or_else(|| {
            anyhow!("cannot extract the manifest digest from the registry's answer: {manifest_url}")
        })?;
    check_digest(digest)?;
    Ok(format!(
        "{}/{}@{digest}",
        reference.registry(),
        reference.repository()
    ))
}

/// Refuses anything but `sha256:<64 hex>` or `sha512:<128 hex>`.
pub fn check_digest(digest: &str) -> Result<()> {
    let (algorithm, hex) = digest
        .split_once(':')
        .ok_or_else(|| anyhow!("invalid digest: {digest}"))?;
    let len = match algorithm {
        "sha256" => 64,
        "sha512" => 128,
        other => bail!("unknown algorithm '{other}' for manifest {digest}"),
    };
    if hex.len() != len || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("the digest of the returned manifest is not valid: {digest}");
    }
    Ok(())
}

/// What `push` and `pull` need to reach the registry of one reference.
pub struct Registry {
    /// The reference `uri` names.
    pub reference: Reference,
    /// The credentials for its registry.
    pub auth: RegistryAuth,
    /// A client over HTTPS, or plain HTTP as `--insecure-http` or the
    /// sources file's `insecure_sources` say.
    pub client: Client,
    /// Appended to a failed call's error.
    hint: &'static str,
}

impl Registry {
    /// The reference `uri`, its credentials and a client for
    /// `--insecure-http` and `--sources-path`.
    pub fn new(uri: &str, insecure_http: bool, sources_path: Option<&Path>) -> Result<Registry> {
        let reference = parse_reference(uri)?;
        let (protocol, hint) = match sources_path {
            _ if insecure_http => (ClientProtocol::Http, ""),
            None => (ClientProtocol::Https, HTTP_HINT),
            Some(path) => {
                let text = fs::read_to_string(path)
                    .with_context(|| format!("cannot read sources file {}", path.display()))?;
                let sources = Sources::from_yaml(&text)
                    .with_context(|| format!("invalid sources file {}", path.display()))?;
                (
                    ClientProtocol::HttpsExcept(sources.insecure_sources),
                    HTTP_HINT,
                )
            }
        };
        Ok(Registry {
            auth: auth(reference.resolve_registry())?,
            reference,
            client: client(protocol),
            hint,
        })
    }

    /// Runs one call to the registry on a current-thread runtime; a failure
    /// is `failure` (and a hint about plain HTTP) with the cause.
    pub fn call<T, E>(&self, failure: String, call: impl Future<Output = Result<T, E>>) -> Result<T>
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        runtime
            .block_on(call)
            .with_context(|| format!("{failure}{}", self.hint))
    }
}

const HTTP_HINT: &str = " (a plain-HTTP registry needs --insecure-http, or --sources-path listing it in insecure_sources)";

/// The part of kwctl's sources file (`--sources-path`) the runner honours.
#[derive(Debug, Default, Deserialize)]
pub struct Sources {
    /// Registries (`host[:port]`) reached over plain HTTP.
    #[serde(default)]
    pub insecure_sources: Vec<String>,
    /// Custom CAs per registry: not supported by the runner.
    #[serde(default)]
    pub source_authorities: Option<serde_norway::Value>,
}

impl Sources {
    /// Parses a kwctl sources file; refuses `source_authorities`, which the
    /// runner does not implement, rather than ignoring it.
    pub fn from_yaml(text: &str) -> Result<Sources> {
        let sources: Sources = serde_norway::from_str(text)?;
        if sources
            .source_authorities
            .as_ref()
            .is_some_and(|value| !value.is_null())
        {
            bail!("source_authorities (custom CAs) are not supported by policy-runner; use kwctl");
        }
        Ok(sources)
    }
}

/// A registry client. rustls needs a process-wide crypto provider
/// (oci-client is built without one, to use `ring`).
fn client(protocol: ClientProtocol) -> Client {
    static PROVIDER: Once = Once::new();
    PROVIDER.call_once(|| {
        // Fails only when a provider is already installed, which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    Client::new(ClientConfig {
        protocol,
        ..Default::default()
    })
}

/// Credentials for `registry` from the Docker config, read as kwctl reads
/// it (policy-fetcher `registry/mod.rs`, on the same `docker_credential`
/// crate): `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`, its
/// `auths` entries, `credHelpers` and `credsStore`. Anonymous when there is
/// no config or nothing for `registry`.
pub fn auth(registry: &str) -> Result<RegistryAuth> {
    // Opened here rather than by `docker_credential::get_credential`, which
    // reports a missing file and a broken one alike: only the first means
    // "no credentials".
    let Some(path) = docker_config_path() else {
        return Ok(RegistryAuth::Anonymous);
    };
    let file = match fs::File::open(&path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(RegistryAuth::Anonymous);
        }
        Err(error) => {
            return Err(error).with_context(|| format!("cannot read {}", path.display()));
        }
    };
    auth_from_docker_config(BufReader::new(file), registry)
        .with_context(|| format!("in {}", path.display()))
}

fn docker_config_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DOCKER_CONFIG") {
        return Some(PathBuf::from(dir).join("config.json"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".docker/config.json"))
}

/// The credentials for `registry` in a Docker config.json (`auths` keys may
/// be a bare `host[:port]` or a URL such as `https://host/`). An identity
/// token is left unused, with a warning, as kwctl leaves it. A credential
/// helper that fails or is missing means anonymous access, with a warning,
/// as in kwctl: Docker Desktop's `credsStore` answers "not found" for
/// every registry one never logged in to, a local test registry included.
/// A config or an `auths` entry that does not decode is an error.
pub fn auth_from_docker_config(config: impl Read, registry: &str) -> Result<RegistryAuth> {
    let warn = |why: String| {
        eprintln!("WARN policy-runner: {why}: going on anonymously");
        Ok(RegistryAuth::Anonymous)
    };
    match docker_credential::get_credential_from_reader(config, registry) {
        Ok(DockerCredential::UsernamePassword(username, password)) => {
            Ok(RegistryAuth::Basic(username, password))
        }
        Ok(DockerCredential::IdentityToken(_)) => warn(format!(
            "the Docker config has an identity token for {registry}, which kwctl does not use \
             either"
        )),
        Err(CredentialRetrievalError::NoCredentialConfigured) => Ok(RegistryAuth::Anonymous),
        Err(
            error @ (CredentialRetrievalError::HelperCommunicationError
            | CredentialRetrievalError::MalformedHelperResponse
            | CredentialRetrievalError::HelperFailure { .. }),
        ) => warn(format!("no credentials for {registry}: {error}")),
        Err(error) => Err(anyhow!("the credentials for {registry}: {error}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn annotations(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn manifest_annotations_drop_multi_line_trim_and_copy_source() {
        let out = manifest_annotations(&annotations(&[
            ("io.kubewarden.policy.source", "https://github.com/acme/p"),
            ("io.kubewarden.policy.url", "https://github.com/acme/p"),
            ("io.kubewarden.policy.usage", "# Title\n\nbody\n"),
            ("io.kubewarden.policy.description", "one line ending\n"),
            ("io.kubewarden.policy.title", "  padded "),
        ]));

        assert_eq!(
            out,
            annotations(&[
                ("io.kubewarden.policy.description", "one line ending"),
                ("io.kubewarden.policy.source", "https://github.com/acme/p"),
                ("io.kubewarden.policy.title", "padded"),
                ("io.kubewarden.policy.url", "https://github.com/acme/p"),
                (
                    "org.opencontainers.image.source",
                    "https://github.com/acme/p"
                ),
            ])
        );
    }

    #[test]
    fn manifest_annotations_keep_an_explicit_oci_source() {
        let out = manifest_annotations(&annotations(&[
            ("io.kubewarden.policy.source", "https://github.com/acme/p"),
            ("org.opencontainers.image.source", "https://oci.example/p"),
        ]));

        assert_eq!(
            out["org.opencontainers.image.source"],
            "https://oci.example/p"
        );
        assert_eq!(
            out["io.kubewarden.policy.source"],
            "https://github.com/acme/p"
        );
    }

    #[test]
    fn manifest_annotations_without_source_add_nothing() {
        let out = manifest_annotations(&annotations(&[("a", ""), ("b", "x")]));

        assert_eq!(out, annotations(&[("a", ""), ("b", "x")]));
    }

    #[test]
    fn parse_reference_accepts_registry_scheme_bare_and_digest() {
        let tagged = parse_reference("registry://127.0.0.1:5000/policies/mp:v0.1.0").unwrap();
        assert_eq!(tagged.registry(), "127.0.0.1:5000");
        assert_eq!(tagged.repository(), "policies/mp");
        assert_eq!(tagged.tag(), Some("v0.1.0"));

        let bare = parse_reference("ghcr.io/plexsphere/policies/metadata-propagation:v1").unwrap();
        assert_eq!(bare.registry(), "ghcr.io");
        assert_eq!(
            bare.repository(),
            "plexsphere/policies/metadata-propagation"
        );

        let digest = format!("sha256:{}", "a".repeat(64));
        let pinned = parse_reference(&format!("localhost:5000/p@{digest}")).unwrap();
        assert_eq!(pinned.digest(), Some(digest.as_str()));
    }

    #[test]
    fn parse_reference_refuses_other_schemes() {
        let error = parse_reference("https://ghcr.io/a/b:v1").unwrap_err();

        assert!(
            error.to_string().contains("unsupported scheme `https://`"),
            "{error}"
        );
    }

    #[test]
    fn immutable_ref_takes_the_digest_from_the_manifest_url() {
        let reference = parse_reference("ghcr.io/kubewarden/secure-policy:latest").unwrap();
        let digest = "sha256:72b4569c3daee67abeaa64192fb53895d0edb2d44fa6e1d9d4c5d3f8ece09f6e";

        assert_eq!(
            immutable_ref(
                &reference,
                &format!("https://ghcr.io/v2/kubewarden/secure-policy/manifests/{digest}")
            )
            .unwrap(),
            format!("ghcr.io/kubewarden/secure-policy@{digest}")
        );
    }

    #[test]
    fn immutable_ref_refuses_malformed_digests() {
        let reference = parse_reference("ghcr.io/a/b:latest").unwrap();
        for url in [
            "https://ghcr.io/v2/a/b/manifests/sha256:XYZ4569c3daee67abeaa64192fb53895d0edb2d44fa6e1d9d4c5d3f8ece09f6e",
            "https://ghcr.io/v2/a/b/manifests/sha256:72b4569c",
            "https://ghcr.io/v2/a/b/manifests/sha384:72b4569c3daee67abeaa64192fb53895d0edb2d44fa6e1d9d4c5d3f8ece09f6e",
            "not an url",
        ] {
            assert!(immutable_ref(&reference, url).is_err(), "{url}");
        }
    }

    #[test]
    fn sources_file_gives_http_exceptions_and_refuses_custom_cas() {
        let sources = Sources::from_yaml("insecure_sources:\n  - 127.0.0.1:5000\n").unwrap();
        assert_eq!(sources.insecure_sources, vec!["127.0.0.1:5000".to_owned()]);

        let error = Sources::from_yaml(
            "source_authorities:\n  host:5000:\n    - type: Path\n      path: /ca.pem\n",
        )
        .unwrap_err();
        assert!(error.to_string().contains("not supported"), "{error}");
    }

    #[test]
    fn docker_config_auth_decodes_basic_credentials() {
        let config = r#"{"auths": {
            "https://ghcr.io/": {"auth": "dXNlcjpwYXNzOndvcmQ="},
            "other.example": {"username": "u", "password": "p"},
            "token.example": {"identitytoken": "t"},
            "broken.example": {"auth": "not base64!"}
        }}"#;
        let auth = |registry| auth_from_docker_config(config.as_bytes(), registry);

        assert_eq!(
            auth("ghcr.io").unwrap(),
            RegistryAuth::Basic("user".to_owned(), "pass:word".to_owned())
        );
        assert_eq!(
            auth("other.example").unwrap(),
            RegistryAuth::Basic("u".to_owned(), "p".to_owned())
        );
        assert_eq!(auth("127.0.0.1:5000").unwrap(), RegistryAuth::Anonymous);
        assert_eq!(auth("token.example").unwrap(), RegistryAuth::Anonymous);
        assert_eq!(
            auth("broken.example").unwrap_err().to_string(),
            "the credentials for broken.example: Unable to decode credential"
        );
    }

    #[test]
    fn docker_config_with_a_missing_credential_helper_is_anonymous() {
        let config = br#"{"credsStore": "policy-runner-test-no-such-helper"}"#;

        assert_eq!(
            auth_from_docker_config(&config[..], "127.0.0.1:5000").unwrap(),
            RegistryAuth::Anonymous
        );
    }

    #[test]
    fn docker_config_that_is_not_json_is_an_error() {
        let error = auth_from_docker_config(&b"{"[..], "ghcr.io").unwrap_err();

        assert_eq!(
            error.to_string(),
            "the credentials for ghcr.io: Unable to read config"
        );
    }
}
