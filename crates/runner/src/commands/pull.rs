//! `policy-runner pull`: fetch a policy module from an OCI registry into a
//! file, like `kwctl pull --output-path`. Beyond oci-client's checks, the
//! module layer must be the one layer, of the Kubewarden media type, with
//! the size and sha256 the manifest records. Prints the immutable reference.

use std::fs;

use anyhow::{Context, Result, bail};
use oci_client::client::{ImageData, ImageLayer};

use crate::cli::PullArgs;
use crate::commands::registry::{self, Registry};

/// Runs `args`: writes the module to `args.output_path`.
pub fn pull(args: &PullArgs) -> Result<()> {
    let remote = Registry::new(&args.uri, args.insecure_http, args.sources_path.as_deref())?;
    let layers = vec![registry::WASM_LAYER_MEDIA_TYPE];
    let image = remote.call(
        format!("could not pull policy {}", args.uri),
        (remote.client).pull(&remote.reference, &remote.auth, layers),
    )?;
    let (module, manifest_digest) = verified_module(image)?;
    if let Some(expected) = remote.reference.digest()
        && expected != manifest_digest
    {
        bail!(
            "the registry served manifest {manifest_digest} for {}",
            args.uri
        );
    }

    fs::write(&args.output_path, module)
        .with_context(|| format!("cannot write {}", args.output_path.display()))?;
    println!(
        "{}/{}@{manifest_digest}",
        remote.reference.registry(),
        remote.reference.repository()
    );
    Ok(())
}

/// The module bytes and the manifest digest of a pulled artifact, after
/// checking it is what kwctl pushes: one layer, media type
/// `application/vnd.wasm.content.layer.v1+wasm`, and data matching the
/// size and digest the manifest records.
pub fn verified_module(image: ImageData) -> Result<(Vec<u8>, String)> {
    let manifest = image
        .manifest
        .context("the registry returned no image manifest")?;
    let digest = image
        .digest
        .context("the registry returned no manifest digest")?;
    registry::check_digest(&digest)?;
    let [descriptor] = manifest.layers.as_slice() else {
        bail!(
            "expected one layer in the policy's manifest, found {}",
            manifest.layers.len()
        );
    };
    if descriptor.media_type != registry::WASM_LAYER_MEDIA_TYPE {
        bail!(
            "the layer has media type {}, not {}",
            descriptor.media_type,
            registry::WASM_LAYER_MEDIA_TYPE
        );
    }
    let [layer]: [ImageLayer; 1] = image.layers.try_into().map_err(|layers: Vec<ImageLayer>| {
        anyhow::anyhow!("expected one layer of data, got {}", layers.len())
    })?;
    let actual = layer.sha256_digest();
    if actual != descriptor.digest || i64::try_from(layer.data.len()).ok() != Some(descriptor.size)
    {
        bail!(
            "layer digest mismatch: the manifest records {} ({} bytes), the data is {actual} ({} bytes)",
            descriptor.digest,
            descriptor.size,
            layer.data.len()
        );
    }
    Ok((layer.data.to_vec(), digest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::push::artifact;

    fn image(data: &[u8], manifest_from: &[u8]) -> ImageData {
        let (layers, config, manifest) = artifact(manifest_from.to_vec(), None);
        let served = ImageLayer::new(data.to_vec(), layers[0].media_type.clone(), None);
        ImageData {
            layers: vec![served],
            digest: Some(format!("sha256:{}", "0".repeat(64))),
            config,
            manifest: Some(manifest),
        }
    }

    #[test]
    fn verified_module_returns_matching_layer_data() {
        let (module, digest) = verified_module(image(b"module", b"module")).unwrap();

        assert_eq!(module, b"module");
        assert_eq!(digest, format!("sha256:{}", "0".repeat(64)));
    }

    #[test]
    fn verified_module_refuses_data_that_does_not_match_the_manifest() {
        let error = verified_module(image(b"tampered", b"module")).unwrap_err();

        assert!(
            error.to_string().starts_with("layer digest mismatch"),
            "{error}"
        );
    }

    #[test]
    fn verified_module_refuses_other_media_types() {
        let mut image = image(b"module", b"module");
        if let Some(manifest) = image.manifest.as_mut() {
            manifest.layers[0].media_type = "application/vnd.oci.image.layer.v1.tar".to_owned();
        }

        let error = verified_module(image).unwrap_err();

        assert!(error.to_string().contains("media type"), "{error}");
    }
}
