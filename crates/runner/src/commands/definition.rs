//! `run`'s policy argument as kwctl reads it: a module, or a Kubewarden
//! policy definition (kwctl `config/policy_definition.rs`): a
//! ClusterAdmissionPolicy or AdmissionPolicy YAML whose `spec.module` is a
//! `file://` URI, run with its `spec.settings` and, for a
//! ClusterAdmissionPolicy, granted exactly its `spec.contextAwareResources`
//! (an AdmissionPolicy may read nothing). That is how a policy reading a
//! user's own kinds (the XRs that compose managed resources) runs outside
//! a cluster with the grants it has in one.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;
use serde_json::Value;

use crate::cli::SettingsArgs;
use crate::commands::input::read_settings;
use crate::host::callback::ContextAwareResource;

/// What `run` evaluates: the module, its settings, and the resources the
/// definition grants (`None`: a bare module, granted by
/// `--allow-context-aware` as kwctl grants it).
#[derive(Debug, PartialEq)]
pub struct Definition {
    /// The module's path.
    pub module: PathBuf,
    /// The settings.
    pub settings: Value,
    /// A policy definition's grants.
    pub grants: Option<BTreeSet<ContextAwareResource>>,
}

/// A policy definition, as far as `run` reads it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    api_version: String,
    kind: String,
    spec: Spec,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    module: String,
    #[serde(default)]
    settings: Option<Value>,
    #[serde(default)]
    context_aware_resources: BTreeSet<ContextAwareResource>,
}

/// `policy` (a module, or a `.yaml`/`.yml` policy definition) with
/// `settings` (which a definition's own replace: giving both is refused,
/// rather than silently ignored as kwctl does).
pub fn read(policy: &Path, settings: &SettingsArgs) -> Result<Definition> {
    let is_yaml = policy
        .extension()
        .is_some_and(|e| e == "yaml" || e == "yml");
    if !is_yaml {
        return Ok(Definition {
            module: policy.to_owned(),
            settings: read_settings(settings)?,
            grants: None,
        });
    }
    if settings.settings_json.is_some() || settings.settings_path.is_some() {
        bail!(
            "{}: a policy definition carries its settings (spec.settings); drop --settings-json \
             and --settings-path",
            policy.display()
        );
    }
    let text = fs::read_to_string(policy)
        .with_context(|| format!("cannot read policy definition {}", policy.display()))?;
    from_yaml(&text).with_context(|| format!("invalid policy definition {}", policy.display()))
}

fn from_yaml(text: &str) -> Result<Definition> {
    let manifest: Manifest = serde_norway::from_str(text)?;
    if manifest.api_version != "policies.kubewarden.io/v1" {
        bail!(
            "apiVersion {:?} is not policies.kubewarden.io/v1",
            manifest.api_version
        );
    }
    let grants = match manifest.kind.as_str() {
        "ClusterAdmissionPolicy" => manifest.spec.context_aware_resources,
        "AdmissionPolicy" => BTreeSet::new(),
        other => bail!("kind {other:?} is not a ClusterAdmissionPolicy or an AdmissionPolicy"),
    };
    let module = manifest
        .spec
        .module
        .strip_prefix("file://")
        .ok_or_else(|| {
            anyhow!(
                "spec.module {:?} is not a file:// URI: pull the module and name its path",
                manifest.spec.module
            )
        })?;
    let settings = match manifest.spec.settings {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(settings) => settings,
    };
    Ok(Definition {
        module: PathBuf::from(module),
        settings,
        grants: Some(grants),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cluster_admission_policy_gives_its_module_settings_and_grants() {
        let definition = from_yaml(
            "apiVersion: policies.kubewarden.io/v1\nkind: ClusterAdmissionPolicy\n\
             metadata: {name: mr}\nspec:\n  module: file:///tmp/p.wasm\n  mutating: true\n\
             \x20 settings: {cloudTags: {managedResources: {families: [aws]}}}\n\
             \x20 contextAwareResources:\n  - {apiVersion: platform.example.org/v1alpha1, kind: XNetwork}\n",
        )
        .unwrap();
        assert_eq!(
            definition,
            Definition {
                module: PathBuf::from("/tmp/p.wasm"),
                settings: json!({"cloudTags": {"managedResources": {"families": ["aws"]}}}),
                grants: Some(BTreeSet::from([ContextAwareResource {
                    api_version: "platform.example.org/v1alpha1".to_owned(),
                    kind: "XNetwork".to_owned(),
                }])),
            }
        );
    }

    #[test]
    fn an_admission_policy_may_read_nothing_and_has_empty_settings_by_default() {
        let definition = from_yaml(
            "apiVersion: policies.kubewarden.io/v1\nkind: AdmissionPolicy\nspec:\n  \
             module: file://p.wasm\n  contextAwareResources: [{apiVersion: v1, kind: Pod}]\n",
        )
        .unwrap();
        assert_eq!(definition.grants, Some(BTreeSet::new()));
        assert_eq!(definition.settings, json!({}));
    }

    #[test]
    fn what_run_cannot_use_is_refused_by_name() {
        let refused = |text: &str| format!("{:#}", from_yaml(text).unwrap_err());
        assert!(
            refused(
                "apiVersion: policies.kubewarden.io/v1\nkind: ClusterAdmissionPolicy\nspec:\n  \
             module: registry://ghcr.io/x/p:v1\n"
            )
            .contains("not a file:// URI")
        );
        assert!(refused(
            "apiVersion: policies.kubewarden.io/v1\nkind: PolicyServer\nspec: {module: file://p}\n"
        )
        .contains("kind \"PolicyServer\""));
        assert!(
            refused("apiVersion: v1\nkind: ConfigMap\nspec: {module: file://p}\n")
                .contains("policies.kubewarden.io/v1")
        );
    }
}
