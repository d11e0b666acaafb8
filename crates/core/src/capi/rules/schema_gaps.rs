//! The paths a rule would write that a child kind's CRD does not hold.
//!
//! CAPI's `computeControlPlane` writes a control plane's machine-template
//! metadata and in-place fields whatever its kind, at the paths of its
//! contract version, and the API server prunes what the kind's schema
//! lacks. The policy writes only what the object can keep (docs/capi.md,
//! "In-place fields: timeouts, minReadySeconds, readiness gates, taints",
//! the contract version): a write the API server drops would come back on
//! every request, and validate mode would refuse the stored object for
//! ever. A kind without a row here is taken to hold every path the
//! contract names at its version, as KubeadmControlPlane, the reference,
//! does; each row is checked against the vendored CRD (crds/) by this
//! file's test, so a kind's row says exactly what its CRD lacks.

use super::contract::{ANY_CONTROL_PLANE, KindMatch};

/// One API version of one kind, and the paths under which its CRD holds
/// none of the fields the rules write to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SchemaGap {
    /// The kind.
    pub(crate) kind: KindMatch,
    /// Its API version (`v1beta2`).
    pub(crate) version: &'static str,
    /// Paths under which nothing a rule writes is held.
    pub(crate) lacks: &'static [&'static [&'static str]],
}

const fn control_plane(
    kind: &'static str,
    version: &'static str,
    lacks: &'static [&'static [&'static str]],
) -> SchemaGap {
    SchemaGap {
        kind: KindMatch {
            group: ANY_CONTROL_PLANE.group,
            kind: Some(kind),
        },
        version,
        lacks,
    }
}

const MACHINE_TEMPLATE: &[&str] = &["spec", "machineTemplate"];
/// The v1beta2 contract's `spec.machineTemplate.spec`: deletion timeouts,
/// readiness gates and taints.
const MACHINE_TEMPLATE_SPEC: &[&str] = &["spec", "machineTemplate", "spec"];
const V1BETA1_TIMEOUTS: [&[&str]; 3] = [
    &["spec", "machineTemplate", "nodeDrainTimeout"],
    &["spec", "machineTemplate", "nodeVolumeDetachTimeout"],
    &["spec", "machineTemplate", "nodeDeletionTimeout"],
];
const V1BETA1_GATES: &[&str] = &["spec", "machineTemplate", "readinessGates"];
const V1BETA1_TAINTS: &[&str] = &["spec", "machineTemplate", "taints"];
const V1BETA2_GATES: &[&str] = &["spec", "machineTemplate", "spec", "readinessGates"];
const V1BETA2_TAINTS: &[&str] = &["spec", "machineTemplate", "spec", "taints"];

/// The kinds whose CRD lacks part of what the contract writes at their
/// version (the CRDs in crds/sources.tsv).
pub(crate) const SCHEMA_GAPS: &[SchemaGap] = &[
    // CAPRKE2 v0.25: deletion timeouts only, no readiness gates or taints.
    control_plane(
        "RKE2ControlPlane",
        "v1beta1",
        &[V1BETA1_GATES, V1BETA1_TAINTS],
    ),
    control_plane(
        "RKE2ControlPlane",
        "v1beta2",
        &[V1BETA2_GATES, V1BETA2_TAINTS],
    ),
    // k0smotron v2.1: metadata and infrastructureRef only, the v1beta1
    // shape under both names.
    control_plane(
        "K0sControlPlane",
        "v1beta1",
        &[
            V1BETA1_TIMEOUTS[0],
            V1BETA1_TIMEOUTS[1],
            V1BETA1_TIMEOUTS[2],
            V1BETA1_GATES,
            V1BETA1_TAINTS,
        ],
    ),
    control_plane("K0sControlPlane", "v1beta2", &[MACHINE_TEMPLATE_SPEC]),
    // Kairos v0.1.0-alpha.2: the v1beta1 shape under v1beta2, whose
    // contract label makes CAPI write the v1beta2 paths, which it lacks
    // (its `nodeDrainTimeout` is read for its Machines, never written).
    control_plane("KairosControlPlane", "v1beta2", &[MACHINE_TEMPLATE_SPEC]),
    // MicroK8s v0.6: `spec.machineTemplate.infrastructureTemplate` only.
    control_plane("MicroK8sControlPlane", "v1beta1", &[MACHINE_TEMPLATE]),
    // CACPPT v0.5: `spec.infrastructureTemplate`, no machine template.
    control_plane("TalosControlPlane", "v1alpha3", &[MACHINE_TEMPLATE]),
    // CAPA v2.11 (EKS): no machine template.
    control_plane("AWSManagedControlPlane", "v1beta2", &[MACHINE_TEMPLATE]),
];

/// The paths under which `group`/`kind` at `version` holds nothing a rule
/// writes; empty for a kind the table does not name.
pub(crate) fn lacked_by(
    group: &str,
    kind: &str,
    version: &str,
) -> &'static [&'static [&'static str]] {
    // The kind first: it tells the rows apart, mostly by its length alone.
    let row = |gap: &&SchemaGap| {
        gap.kind.kind == Some(kind) && gap.version == version && gap.kind.group == group
    };
    SCHEMA_GAPS.iter().find(row).map_or(&[], |gap| gap.lacks)
}

/// Whether `path` is under one of `lacks`.
pub(crate) fn is_lacked(lacks: &[&[&str]], path: &[&str]) -> bool {
    lacks.iter().any(|gap| path.starts_with(gap))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::behaviour::support::{read_repo_file, repo_path};
    use crate::capi::rules::{CAPI_RULES, Flow, Rule};
    use serde_json::Value;

    /// Whether the CRD schema `schema` declares `path`. ObjectMeta is not
    /// in a CRD's schema: every object holds its labels and annotations.
    fn declares(schema: &Value, path: &[&str]) -> bool {
        if path.first() == Some(&"metadata") {
            return true;
        }
        let mut at = schema;
        for step in path {
            match at.pointer(&format!("/properties/{step}")) {
                Some(next) => at = next,
                None => return at["x-kubernetes-preserve-unknown-fields"] == true,
            }
        }
        true
    }

    /// Every path a rule for `group`/`kind` writes at `version`.
    fn targets(group: &str, kind: &str, version: &str) -> Vec<&'static [&'static str]> {
        let rules = CAPI_RULES
            .iter()
            .filter(|rule| rule.child.matches(group, kind));
        let mut paths: Vec<_> = (rules.flat_map(Rule::flows))
            .flat_map(|flow| match flow {
                Flow::Map(map) => map.to.to_vec(),
                Flow::Field(field) => field.to.at(version).map(|to| to.path).into_iter().collect(),
            })
            .collect();
        paths.sort();
        paths.dedup();
        paths
    }

    /// For every kind a rule writes to whose CRD the project vendors, at
    /// every version it serves: a path is written exactly when the CRD
    /// declares it, and every row, and every path a row lacks, is used.
    #[test]
    fn a_kind_is_written_exactly_what_its_crd_declares() {
        let mut used = Vec::new();
        let mut checked = 0;
        for entry in std::fs::read_dir(repo_path("crds")).unwrap() {
            let file = entry.unwrap().path();
            if file.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let crd: Value =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            let (group, kind) = (
                crd["group"].as_str().unwrap(),
                crd["kind"].as_str().unwrap(),
            );
            // A template is no rule's child: CAPI creates none with a
            // MachineSet or control-plane owner, nor a ControlPlaneTemplate
            // with `topology.cluster.x-k8s.io/owned`.
            if kind.ends_with("Template") {
                continue;
            }
            for (version, schema) in crd["versions"].as_object().unwrap() {
                let lacks = lacked_by(group, kind, version);
                for path in targets(group, kind, version) {
                    checked += 1;
                    assert_eq!(
                        !is_lacked(lacks, path),
                        declares(schema, path),
                        "{kind} {version} {}: SCHEMA_GAPS disagrees with {}",
                        path.join("."),
                        file.display()
                    );
                    used.extend(
                        lacks
                            .iter()
                            .filter(|gap| path.starts_with(gap))
                            .map(|gap| (kind.to_owned(), version.clone(), *gap)),
                    );
                }
            }
        }
        assert!(checked > 100, "{checked} paths checked");
        for gap in SCHEMA_GAPS {
            for lacked in gap.lacks {
                let kind = gap.kind.kind.unwrap();
                assert!(
                    used.iter()
                        .any(|(k, v, l)| *k == kind && v == gap.version && l == lacked),
                    "{kind} {}: {} lacks nothing a rule writes, or its CRD is not vendored",
                    gap.version,
                    lacked.join(".")
                );
            }
        }
        // The table cites the vendored sources.
        let sources = read_repo_file("crds/sources.tsv");
        for gap in SCHEMA_GAPS {
            let plural = format!("_{}s.yaml", gap.kind.kind.unwrap().to_lowercase());
            assert!(sources.contains(&plural), "{plural}");
        }
    }
}
