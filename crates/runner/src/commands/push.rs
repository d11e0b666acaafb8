//! `policy-runner push`: publish an annotated module as an OCI artifact as
//! `kwctl push` does (kwctl `push.rs`, policy-fetcher `registry/mod.rs`):
//! one config blob `{}`, one layer holding the module byte for byte, and
//! the metadata's single-line annotations; `--force` pushes an unannotated
//! module, with a warning. Prints the immutable reference.

use std::collections::BTreeMap;
use std::fs;

use anyhow::{Context, Result, bail};
use oci_client::client::{Config, ImageLayer};
use oci_client::manifest::OciImageManifest;
use serde_json::json;

use crate::cli::{OutputFormat, PushArgs};
use crate::commands::metadata::Metadata;
use crate::commands::registry::{self, Registry};

/// Runs `args`: pushes and prints the immutable reference.
pub fn push(args: &PushArgs) -> Result<()> {
    let module = fs::read(&args.policy)
        .with_context(|| format!("cannot read policy module {}", args.policy.display()))?;
    let metadata = Metadata::from_module(&module)
        .with_context(|| format!("cannot read the metadata of {}", args.policy.display()))?;
    if metadata.is_none() {
        if !args.force {
            bail!(
                "Cannot push a policy that is not annotated. Use `annotate` command or `push --force`"
            );
        }
        eprintln!("Warning: pushing a non-annotated policy!");
    }
    let annotations = metadata
        .and_then(|metadata| metadata.annotations)
        .map(|annotations| registry::manifest_annotations(&annotations));

    let remote = Registry::new(&args.uri, args.insecure_http, args.sources_path.as_deref())?;
    let (layers, config, manifest) = artifact(module, annotations);
    let response = remote.call(
        format!("could not push policy to {}", args.uri),
        (remote.client).push(
            &remote.reference,
            &layers,
            config,
            &remote.auth,
            Some(manifest),
        ),
    )?;
    let immutable_ref = registry::immutable_ref(&remote.reference, &response.manifest_url)?;

    match args.output {
        OutputFormat::Text => println!("Policy successfully pushed: {immutable_ref}"),
        OutputFormat::Json => println!("{}", json!({ "immutable_ref": immutable_ref })),
    }
    Ok(())
}

/// The layers, config and manifest kwctl pushes for `module`.
pub fn artifact(
    module: Vec<u8>,
    annotations: Option<BTreeMap<String, String>>,
) -> (Vec<ImageLayer>, Config, OciImageManifest) {
    let layers = vec![ImageLayer::new(
        module,
        registry::WASM_LAYER_MEDIA_TYPE.to_owned(),
        None,
    )];
    let config = Config::new(
        registry::CONFIG_DATA,
        registry::WASM_CONFIG_MEDIA_TYPE.to_owned(),
        None,
    );
    let manifest = OciImageManifest::build(&layers, &config, annotations);
    (layers, config, manifest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn artifact_is_one_wasm_layer_with_an_empty_json_config() {
        let annotations =
            BTreeMap::from([("io.kubewarden.policy.title".to_owned(), "p".to_owned())]);

        let (layers, config, manifest) = artifact(b"\0asm\x01\0\0\0".to_vec(), Some(annotations));

        assert_eq!(layers.len(), 1);
        assert_eq!(&config.data[..], b"{}");
        let manifest: Value = serde_json::to_value(&manifest).unwrap();
        assert_eq!(manifest["schemaVersion"], 2);
        // As from kwctl (oci-client's `OciImageManifest::build`): the media
        // type travels in the Content-Type header, not in the body.
        assert!(manifest.get("mediaType").is_none(), "{manifest}");
        assert_eq!(
            manifest["config"]["mediaType"],
            "application/vnd.wasm.config.v1+json"
        );
        assert_eq!(manifest["config"]["size"], 2);
        assert_eq!(
            manifest["config"]["digest"],
            // sha256 of `{}`
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
        assert_eq!(manifest["layers"].as_array().unwrap().len(), 1);
        assert_eq!(
            manifest["layers"][0]["mediaType"],
            "application/vnd.wasm.content.layer.v1+wasm"
        );
        assert_eq!(manifest["layers"][0]["size"], 8);
        assert_eq!(manifest["layers"][0]["digest"], layers[0].sha256_digest());
        assert_eq!(manifest["annotations"]["io.kubewarden.policy.title"], "p");
    }

    #[test]
    fn artifact_without_annotations_has_none() {
        let (_, _, manifest) = artifact(b"\0asm\x01\0\0\0".to_vec(), None);

        let manifest: Value = serde_json::to_value(&manifest).unwrap();
        assert!(
            manifest.get("annotations").is_none_or(Value::is_null),
            "{manifest}"
        );
    }
}
