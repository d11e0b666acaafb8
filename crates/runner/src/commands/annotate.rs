//! `policy-runner annotate`: embed the policy metadata as `kwctl annotate`
//! does (kwctl `annotate.rs`): the waPC protocol version, the
//! `io.kubewarden.kwctl` and `io.kubewarden.policy.usage` annotations, all
//! in the custom section `io.kubewarden.metadata`. A module that already
//! has that section is refused rather than annotated twice.

use std::collections::BTreeSet;
use std::fs;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};

use crate::cli::AnnotateArgs;
use crate::commands::metadata::Metadata;
use crate::commands::wasm_sections::{self, METADATA_SECTION};
use crate::host::callback::{self, Host};
use crate::host::lookups::Lookups;
use crate::host::policy::Module;

/// Annotation holding the version of the tool that annotated the module.
pub const ANNOTATION_KWCTL_VERSION: &str = "io.kubewarden.kwctl";

/// Annotation holding the usage documentation (the README).
pub const ANNOTATION_POLICY_USAGE: &str = "io.kubewarden.policy.usage";

/// Runs `args`: writes the annotated module to `args.output_path`.
pub fn annotate(args: &AnnotateArgs) -> Result<()> {
    let module = fs::read(&args.policy)
        .with_context(|| format!("cannot read policy module {}", args.policy.display()))?;
    let existing = wasm_sections::find_custom_section(&module, METADATA_SECTION)
        .with_context(|| format!("cannot annotate {}", args.policy.display()))?;
    if existing.is_some() {
        bail!(
            "{} is already annotated: it has a `{METADATA_SECTION}` custom section",
            args.policy.display()
        );
    }
    let text = fs::read_to_string(&args.metadata_path)
        .with_context(|| format!("cannot read metadata {}", args.metadata_path.display()))?;
    let metadata = Metadata::from_yaml(&text)
        .with_context(|| format!("invalid metadata {}", args.metadata_path.display()))?;
    let usage = args
        .usage_path
        .as_ref()
        .map(|path| {
            fs::read_to_string(path)
                .with_context(|| format!("cannot read usage file {}", path.display()))
        })
        .transpose()?;

    let protocol_version = protocol_version(&module)?;
    let metadata = annotated(metadata, protocol_version, usage);
    let annotated_module =
        wasm_sections::append_custom_section(&module, METADATA_SECTION, &metadata.to_json())?;
    fs::write(&args.output_path, annotated_module)
        .with_context(|| format!("cannot write {}", args.output_path.display()))?;
    Ok(())
}

/// Instantiates the module with no host capabilities and asks for its
/// protocol version.
fn protocol_version(module: &[u8]) -> Result<String> {
    let host = Arc::new(Mutex::new(Host::new(BTreeSet::new(), Lookups::None)));
    let policy = Module::compile(module)?.instantiate(callback::callback(host))?;
    Ok(policy.protocol_version()?)
}

/// `metadata` with the fields `annotate` fills in; these override whatever
/// metadata.yml said, as in kwctl.
fn annotated(mut metadata: Metadata, protocol_version: String, usage: Option<String>) -> Metadata {
    metadata.protocol_version = Some(protocol_version);
    let annotations = metadata.annotations.get_or_insert_with(Default::default);
    annotations.insert(
        ANNOTATION_KWCTL_VERSION.to_owned(),
        env!("CARGO_PKG_VERSION").to_owned(),
    );
    if let Some(usage) = usage {
        annotations.insert(ANNOTATION_POLICY_USAGE.to_owned(), usage);
    }
    metadata
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn annotated_sets_protocol_kwctl_version_and_usage() {
        let metadata = Metadata::from_yaml(
            "rules: []\nmutating: true\nannotations:\n  io.kubewarden.kwctl: bogus\n  io.kubewarden.policy.title: demo\n",
        )
        .unwrap();

        let metadata = annotated(metadata, "v1".to_owned(), Some("# Usage\n".to_owned()));

        let json: Value = serde_json::from_slice(&metadata.to_json()).unwrap();
        assert_eq!(json["protocolVersion"], json!("v1"));
        assert_eq!(
            json["annotations"],
            json!({
                "io.kubewarden.kwctl": env!("CARGO_PKG_VERSION"),
                "io.kubewarden.policy.title": "demo",
                "io.kubewarden.policy.usage": "# Usage\n"
            })
        );
    }

    #[test]
    fn annotated_creates_annotations_when_absent() {
        let metadata = Metadata::from_yaml("rules: []\nmutating: false\n").unwrap();

        let metadata = annotated(metadata, "v1".to_owned(), None);

        assert_eq!(
            metadata.annotations,
            Some(std::collections::BTreeMap::from([(
                ANNOTATION_KWCTL_VERSION.to_owned(),
                env!("CARGO_PKG_VERSION").to_owned()
            )]))
        );
    }
}
