//! The `artifacthub-pkg.yml` document `kwctl scaffold artifacthub` writes
//! (policy-evaluator `policy_artifacthub.rs`): its fields in kwctl's order,
//! the header comment, the `kubewarden/*` annotations and the install text.

use std::collections::BTreeMap;

use anyhow::{Result, anyhow, bail};
use serde::Serialize;

use crate::commands::metadata::Metadata;
use crate::commands::scaffold::annotations::{
    AUTHOR, DESCRIPTION, DISPLAY_NAME, HIDDEN_UI, KEYWORDS, LICENSE, Link, Maintainer, OCI_URL,
    RELEASE_TAG, RESOURCES, SOURCE, TITLE, URL, VERSION, check_semver, oci_image, parse_keywords,
    parse_links, parse_maintainers, parse_url,
};

/// The comment kwctl puts above the YAML (its last line ends with a space).
pub const HEADER: &str = "# Kubewarden Artifacthub Package config
#
# Use this config to submit the policy to https://artifacthub.io.
#
# This config can be saved to its default location with:
#   kwctl scaffold artifacthub > artifacthub-pkg.yml ";

/// The `artifacthub-pkg.yml` document, fields in kwctl's order.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactHubPkg {
    version: String,
    name: String,
    display_name: String,
    created_at: String,
    description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    license: Option<String>,
    #[serde(rename = "homeURL", skip_serializing_if = "Option::is_none")]
    home_url: Option<String>,
    containers_images: Vec<ContainerImage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    keywords: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    links: Option<Vec<Link>>,
    install: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    maintainers: Option<Vec<Maintainer>>,
    provider: Provider,
    recommendations: Vec<Recommendation>,
    annotations: BTreeMap<String, String>,
}

#[derive(Debug, Serialize)]
struct ContainerImage {
    name: &'static str,
    image: String,
}

#[derive(Debug, Serialize)]
struct Provider {
    name: &'static str,
}

#[derive(Debug, Serialize)]
struct Recommendation {
    url: &'static str,
}

impl ArtifactHubPkg {
    /// The package for `metadata`, as kwctl's `ArtifactHubPkg::from_metadata`.
    pub fn from_metadata(
        metadata: &Metadata,
        created_at: String,
        questions: Option<&str>,
    ) -> Result<ArtifactHubPkg> {
        let annotations = metadata
            .annotations
            .as_ref()
            .filter(|annotations| !annotations.is_empty())
            .ok_or_else(|| anyhow!("the metadata has no annotations"))?;
        if questions.is_some_and(str::is_empty) {
            bail!("the questions-ui file is empty");
        }
        let required = |key: &str| {
            annotations
                .get(key)
                .cloned()
                .ok_or_else(|| anyhow!("missing annotation {key}"))
        };
        let version = required(VERSION)?;
        check_semver(&version)?;
        let name = required(TITLE)?;
        let display_name = required(DISPLAY_NAME)?;
        let description = required(DESCRIPTION)?;
        let oci_url = required(OCI_URL)?;
        let image = oci_image(&oci_url, &version)?;

        Ok(ArtifactHubPkg {
            name,
            display_name,
            created_at,
            description,
            license: annotations.get(LICENSE).cloned(),
            home_url: annotations
                .get(URL)
                .map(|url| parse_url(URL, url).map(String::from))
                .transpose()?,
            containers_images: vec![ContainerImage {
                name: "policy",
                image: image.clone(),
            }],
            keywords: annotations
                .get(KEYWORDS)
                .map(|keywords| parse_keywords(keywords))
                .transpose()?,
            links: annotations
                .get(SOURCE)
                .map(|source| {
                    parse_links(
                        source,
                        &version,
                        annotations.get(RELEASE_TAG).map(String::as_str),
                    )
                })
                .transpose()?,
            install: install_text(&image),
            maintainers: annotations
                .get(AUTHOR)
                .map(|author| parse_maintainers(author))
                .transpose()?,
            provider: Provider { name: "kubewarden" },
            recommendations: vec![Recommendation {
                url: "https://artifacthub.io/packages/helm/kubewarden/kubewarden-controller",
            }],
            annotations: artifacthub_annotations(metadata, annotations, questions)?,
            version,
        })
    }

    /// The file: kwctl's header comment, a newline, the YAML.
    pub fn to_document(&self) -> Result<String> {
        Ok(format!("{HEADER}\n{}", serde_norway::to_string(self)?))
    }
}

/// The `kubewarden/*` annotations Artifact Hub and the Rancher UI read.
fn artifacthub_annotations(
    metadata: &Metadata,
    annotations: &BTreeMap<String, String>,
    questions: Option<&str>,
) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    out.insert(
        "kubewarden/mutation".to_owned(),
        metadata.mutating.to_string(),
    );
    if !metadata.context_aware_resources.is_empty() {
        out.insert(
            "kubewarden/contextAwareResources".to_owned(),
            serde_norway::to_string(&metadata.context_aware_resources)?,
        );
    }
    out.insert(
        "kubewarden/rules".to_owned(),
        serde_norway::to_string(&metadata.rules)?,
    );
    if let Some(questions) = questions {
        out.insert("kubewarden/questions-ui".to_owned(), questions.to_owned());
    }
    if let Some(hidden) = annotations.get(HIDDEN_UI) {
        let hidden: bool = hidden
            .parse()
            .map_err(|_| anyhow!("{HIDDEN_UI}: {hidden:?} is not `true` or `false`"))?;
        out.insert("kubewarden/hidden-ui".to_owned(), hidden.to_string());
    }
    if let Some(resources) = annotations.get(RESOURCES) {
        out.insert("kubewarden/resources".to_owned(), resources.clone());
    }
    Ok(out)
}

/// How to get the policy and a manifest for it: kwctl's text, byte for byte.
fn install_text(image: &str) -> String {
    format!(
        "The policy can be obtained using [`kwctl`](https://github.com/kubewarden/kwctl):\n\
         ```console\n\
         kwctl pull {image}\n\
         ```\n\
         Then, generate the policy manifest and tune it to your liking. For example:\n\
         ```console\n\
         kwctl scaffold manifest -t ClusterAdmissionPolicy registry://{image}\n\
         ```\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const METADATA: &str = r#"
rules:
- apiGroups: [""]
  apiVersions: ["v1"]
  resources: ["pods"]
  operations: ["CREATE"]
mutating: false
contextAwareResources:
- apiVersion: v1
  kind: Namespace
annotations:
  io.artifacthub.displayName: Verify Image Signatures
  io.artifacthub.resources: Pod, Deployment
  io.artifacthub.keywords: pod, signature
  io.kubewarden.policy.title: verify-image-signatures
  io.kubewarden.policy.version: 0.2.1
  io.kubewarden.policy.description: A description
  io.kubewarden.policy.author: Tux Tuxedo <tux@example.com>, Pidgin <pidgin@example.com>
  io.kubewarden.policy.url: https://github.com/home
  io.kubewarden.policy.source: https://github.com/repo
  io.kubewarden.policy.license: Apache-2.0
  io.kubewarden.policy.ociUrl: ghcr.io/ocirepo/namespace/verify-image-signatures
  io.kubewarden.hidden-ui: "true"
"#;

    const EPOCH: &str = "1970-01-01T00:00:00Z";

    fn metadata(yaml: &str) -> Metadata {
        Metadata::from_yaml(yaml).unwrap()
    }

    #[test]
    fn document_has_kwctls_fields_order_and_header() {
        let pkg =
            ArtifactHubPkg::from_metadata(&metadata(METADATA), EPOCH.to_owned(), None).unwrap();

        let expected = format!(
            "{HEADER}\n\
version: 0.2.1
name: verify-image-signatures
displayName: Verify Image Signatures
createdAt: 1970-01-01T00:00:00Z
description: A description
license: Apache-2.0
homeURL: https://github.com/home
containersImages:
- name: policy
  image: ghcr.io/ocirepo/namespace/verify-image-signatures:v0.2.1
keywords:
- pod
- signature
links:
- name: policy
  url: https://github.com/repo/releases/download/v0.2.1/policy.wasm
- name: source
  url: https://github.com/repo
install: |
  The policy can be obtained using [`kwctl`](https://github.com/kubewarden/kwctl):
  ```console
  kwctl pull ghcr.io/ocirepo/namespace/verify-image-signatures:v0.2.1
  ```
  Then, generate the policy manifest and tune it to your liking. For example:
  ```console
  kwctl scaffold manifest -t ClusterAdmissionPolicy registry://ghcr.io/ocirepo/namespace/verify-image-signatures:v0.2.1
  ```
maintainers:
- name: Tux Tuxedo
  email: tux@example.com
- name: Pidgin
  email: pidgin@example.com
provider:
  name: kubewarden
recommendations:
- url: https://artifacthub.io/packages/helm/kubewarden/kubewarden-controller
annotations:
  kubewarden/contextAwareResources: |
    - apiVersion: v1
      kind: Namespace
  kubewarden/hidden-ui: 'true'
  kubewarden/mutation: 'false'
  kubewarden/resources: Pod, Deployment
  kubewarden/rules: |
    - apiGroups:
      - ''
      apiVersions:
      - v1
      resources:
      - pods
      operations:
      - CREATE
"
        );
        assert_eq!(pkg.to_document().unwrap(), expected);
    }

    #[test]
    fn minimal_metadata_gives_the_required_fields_only() {
        let yaml = r#"
rules: []
mutating: true
annotations:
  io.kubewarden.policy.title: p
  io.kubewarden.policy.version: 1.0.0-rc.1
  io.kubewarden.policy.description: d
  io.kubewarden.policy.ociUrl: registry.example:5000/p
  io.artifacthub.displayName: P
"#;
        let pkg = ArtifactHubPkg::from_metadata(&metadata(yaml), EPOCH.to_owned(), Some("q: 1\n"))
            .unwrap();

        let document = pkg.to_document().unwrap();
        assert!(!document.contains("maintainers:"), "{document}");
        assert!(!document.contains("links:"), "{document}");
        assert!(!document.contains("--allow-context-aware"), "{document}");
        assert!(
            document.contains("image: registry.example:5000/p:v1.0.0-rc.1\n"),
            "{document}"
        );
        assert!(
            document.contains("kubewarden/mutation: 'true'\n"),
            "{document}"
        );
        assert!(
            document.contains("kubewarden/rules: |\n    []\n"),
            "{document}"
        );
        assert!(
            document.contains("kubewarden/questions-ui: |\n    q: 1\n"),
            "{document}"
        );
    }

    #[test]
    fn missing_required_annotations_are_named() {
        let yaml = "rules: []\nmutating: false\nannotations:\n  io.kubewarden.policy.title: p\n";

        let error =
            ArtifactHubPkg::from_metadata(&metadata(yaml), String::new(), None).unwrap_err();

        assert_eq!(
            error.to_string(),
            "missing annotation io.kubewarden.policy.version"
        );
    }
}
