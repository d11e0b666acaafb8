//! The policy metadata `kwctl annotate` embeds in the module, with the
//! field names, defaults and omissions of policy-evaluator
//! `policy_metadata.rs`. Unknown keys in `metadata.yml` are dropped, as by
//! kwctl; maps are `BTreeMap`s so the embedded JSON is reproducible.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::commands::wasm_sections::{self, METADATA_SECTION, SectionError};
use crate::host::callback::ContextAwareResource;

/// An admission webhook rule (`rules[]` in metadata.yml).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// API groups, `""` for core, `"*"` for all.
    pub api_groups: Vec<String>,
    /// API versions, `"*"` for all.
    pub api_versions: Vec<String>,
    /// Resources (plural, optionally `resource/subresource`).
    pub resources: Vec<String>,
    /// `CREATE`, `UPDATE`, `DELETE`, `CONNECT` or `*`.
    pub operations: Vec<String>,
}

/// The metadata of a Kubewarden policy, as kwctl serialises it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// waPC protocol version reported by the module (`v1`); filled in by
    /// `annotate`.
    pub protocol_version: Option<String>,
    /// Admission rules.
    pub rules: Vec<Rule>,
    /// Free-form annotations (`io.kubewarden.policy.*`, `io.artifacthub.*`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// Whether the policy mutates requests.
    pub mutating: bool,
    /// Whether the audit scanner evaluates the policy.
    #[serde(default = "default_true")]
    pub background_audit: bool,
    /// `kubewarden-wapc`, `opa`, `gatekeeper` or `wasi`.
    #[serde(default = "default_execution_mode")]
    pub execution_mode: String,
    /// `kubernetes` or `raw`.
    #[serde(default = "default_policy_type")]
    pub policy_type: String,
    /// Resource types the policy reads at evaluation time.
    #[serde(default)]
    pub context_aware_resources: BTreeSet<ContextAwareResource>,
    /// Host capabilities the policy uses, e.g. `kubernetes/get_resource`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_capabilities: Option<Vec<String>>,
    /// Oldest Kubewarden release able to run the policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_kubewarden_version: Option<String>,
}

fn default_true() -> bool {
    true
}

fn default_execution_mode() -> String {
    "kubewarden-wapc".to_owned()
}

fn default_policy_type() -> String {
    "kubernetes".to_owned()
}

/// Why the embedded metadata could not be read.
#[derive(Debug, Error)]
pub enum MetadataError {
    /// The module could not be walked.
    #[error(transparent)]
    Module(#[from] SectionError),
    /// The section exists but is not valid metadata JSON.
    #[error("custom section `{METADATA_SECTION}` is not valid policy metadata: {0}")]
    Json(#[source] serde_json::Error),
    /// metadata.yml is not valid policy metadata.
    #[error("metadata is not valid: {0}")]
    Yaml(#[source] serde_norway::Error),
    /// metadata.yml parses but breaks a rule kwctl enforces.
    #[error("metadata is not valid: {0}")]
    Invalid(String),
}

impl Metadata {
    /// The metadata embedded in `module` by `kwctl annotate`, or `None` for
    /// an unannotated module.
    pub fn from_module(module: &[u8]) -> Result<Option<Metadata>, MetadataError> {
        wasm_sections::find_custom_section(module, METADATA_SECTION)?
            .map(|data| serde_json::from_slice(data).map_err(MetadataError::Json))
            .transpose()
    }

    /// Parses metadata.yml and checks the rules the way kwctl's validator
    /// does (non-empty lists, `*` alone in its list).
    pub fn from_yaml(text: &str) -> Result<Metadata, MetadataError> {
        let metadata: Metadata = serde_norway::from_str(text).map_err(MetadataError::Yaml)?;
        metadata.validate_rules()?;
        Ok(metadata)
    }

    /// The metadata as the JSON kwctl stores in the custom section.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("metadata is plain data and always serialises")
    }

    fn validate_rules(&self) -> Result<(), MetadataError> {
        for (index, rule) in self.rules.iter().enumerate() {
            let lists = [
                ("apiGroups", &rule.api_groups),
                ("apiVersions", &rule.api_versions),
                ("resources", &rule.resources),
                ("operations", &rule.operations),
            ];
            for (field, values) in lists {
                if values.is_empty() {
                    return Err(MetadataError::Invalid(format!(
                        "rules[{index}].{field} must not be empty"
                    )));
                }
                if values.len() > 1 && values.iter().any(|v| v == "*") {
                    return Err(MetadataError::Invalid(format!(
                        "rules[{index}].{field}: no other elements can be defined when '*' is used"
                    )));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    const METADATA_YML: &str = r#"
rules:
- apiGroups: ["cluster.x-k8s.io"]
  apiVersions: ["v1beta1"]
  resources: ["machinedeployments"]
  operations: ["CREATE", "UPDATE"]
mutating: true
contextAwareResources:
- apiVersion: cluster.x-k8s.io/v1beta1
  kind: Cluster
hostCapabilities: ["kubernetes/get_resource"]
contextAware: false
annotations:
  io.kubewarden.policy.title: demo
"#;

    #[test]
    fn metadata_from_yaml_serialises_with_kwctl_defaults() {
        let metadata = Metadata::from_yaml(METADATA_YML).unwrap();

        assert_eq!(
            serde_json::from_slice::<Value>(&metadata.to_json()).unwrap(),
            json!({
                "protocolVersion": null,
                "rules": [{
                    "apiGroups": ["cluster.x-k8s.io"],
                    "apiVersions": ["v1beta1"],
                    "resources": ["machinedeployments"],
                    "operations": ["CREATE", "UPDATE"]
                }],
                "annotations": {"io.kubewarden.policy.title": "demo"},
                "mutating": true,
                "backgroundAudit": true,
                "executionMode": "kubewarden-wapc",
                "policyType": "kubernetes",
                "contextAwareResources": [
                    {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster"}
                ],
                "hostCapabilities": ["kubernetes/get_resource"]
            })
        );
    }

    #[test]
    fn metadata_from_yaml_rejects_asterisk_with_other_operations() {
        let yml = r#"
rules:
- apiGroups: [""]
  apiVersions: ["v1"]
  resources: ["pods"]
  operations: ["*", "CREATE"]
mutating: false
"#;

        assert_eq!(
            Metadata::from_yaml(yml).unwrap_err().to_string(),
            "metadata is not valid: rules[0].operations: no other elements can be defined when '*' is used"
        );
    }

    #[test]
    fn metadata_from_yaml_rejects_empty_resources() {
        let yml = r#"
rules:
- apiGroups: [""]
  apiVersions: ["v1"]
  resources: []
  operations: ["CREATE"]
mutating: false
"#;

        assert_eq!(
            Metadata::from_yaml(yml).unwrap_err().to_string(),
            "metadata is not valid: rules[0].resources must not be empty"
        );
    }

    #[test]
    fn metadata_from_module_is_none_without_section() {
        assert_eq!(
            Metadata::from_module(b"\0asm\x01\x00\x00\x00").unwrap(),
            None
        );
    }

    #[test]
    fn metadata_from_module_reads_embedded_json() {
        let module = wasm_sections::append_custom_section(
            b"\0asm\x01\x00\x00\x00",
            METADATA_SECTION,
            br#"{"protocolVersion":"v1","rules":[],"mutating":false,
                "contextAwareResources":[{"apiVersion":"v1","kind":"Namespace"}]}"#,
        )
        .unwrap();

        let metadata = Metadata::from_module(&module).unwrap().unwrap();

        assert_eq!(
            metadata.context_aware_resources,
            BTreeSet::from([ContextAwareResource {
                api_version: "v1".to_owned(),
                kind: "Namespace".to_owned(),
            }])
        );
        assert!(metadata.background_audit);
    }
}
