//! Which objects are Crossplane composite resources, told from the object
//! alone (docs/cloud-tags.md, "Which kinds are composite resources").
//!
//! The API server applies a CRD's structural defaults before mutating
//! admission, and the XR CRDs Crossplane generates default
//! `compositionUpdatePolicy` (crossplane-runtime `pkg/xcrd`, crossplane
//! `internal/xcrd`):
//! - Crossplane v1, and v2 `LegacyCluster` XRs: cluster-scoped, with
//!   `spec.compositionUpdatePolicy` `Automatic` or `Manual`;
//! - Crossplane v2 XRs: `spec.crossplane` is an object (it has no default
//!   itself, so an XR submitted without it is recognised on the UPDATE in
//!   which Crossplane writes it).
//!
//! Claims, managed resources and every other kind have neither, and are
//! never given `spec.cloudTags`.

use crate::json::fields;
use crate::request::GroupVersionKind;
use serde_json::Value;

/// The paths [`is_composite_resource`] reads. `spec.crossplane` is kept
/// through one of its members so that its other members (its resource
/// references, a list as long as the composition) are skipped, not
/// decoded: the projection keeps an object there, empty or not, whenever
/// `spec.crossplane` is one.
pub(crate) const SHAPE_PATHS: [&[&str]; 3] = [
    &["metadata", "namespace"],
    &["spec", "compositionUpdatePolicy"],
    &["spec", "crossplane", "compositionUpdatePolicy"],
];

/// Whether `object`, of a request in `namespace` (empty for a
/// cluster-scoped kind), has the shape of a composite resource.
pub(crate) fn is_composite_resource(object: &Value, namespace: &str) -> bool {
    let spec = object.get("spec");
    let v2 = spec
        .and_then(|spec| spec.get("crossplane"))
        .is_some_and(Value::is_object);
    v2 || (namespace.is_empty()
        && cluster_scoped(object)
        && spec
            .and_then(|spec| spec.get("compositionUpdatePolicy"))
            .and_then(Value::as_str)
            .is_some_and(|policy| matches!(policy, "Automatic" | "Manual")))
}

/// No namespace, or an empty one (what the API server stores for a
/// cluster-scoped object).
fn cluster_scoped(object: &Value) -> bool {
    fields::string(object, &["metadata", "namespace"])
        .ok()
        .flatten()
        .is_none_or(str::is_empty)
}

/// The warning for an object routed as a composite resource whose shape
/// is not one's: allowed unchanged. A v2 XR submitted without
/// `spec.crossplane` has that shape until Crossplane writes the field, and
/// nothing in the object tells it from another kind, so the warning says
/// both what happens to such an XR and what to do about any other kind.
pub(crate) fn not_a_composite_resource(kind: &GroupVersionKind) -> String {
    let api_version = if kind.group.is_empty() {
        kind.version.clone()
    } else {
        format!("{}/{}", kind.group, kind.version)
    };
    format!(
        "{} ({api_version}) is not a Crossplane composite resource (no spec.crossplane, nor a \
         cluster-scoped spec.compositionUpdatePolicy), so this policy leaves it unchanged; a v2 \
         XR is tagged once Crossplane writes spec.crossplane, any other kind: remove it from the \
         policy's rules",
        kind.kind
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::v2_namespaced(json!({"metadata": {"namespace": "team-a"}, "spec": {"crossplane": {}}}), true)]
    #[case::v2_with_refs(json!({"spec": {"crossplane": {"resourceRefs": []}}}), true)]
    #[case::v1_cluster_scoped(json!({"metadata": {"name": "db"}, "spec": {"compositionUpdatePolicy": "Automatic"}}), true)]
    #[case::v1_manual(json!({"metadata": {"namespace": ""}, "spec": {"compositionUpdatePolicy": "Manual"}}), true)]
    #[case::namespaced_claim(json!({"metadata": {"namespace": "team-a"}, "spec": {"compositionUpdatePolicy": "Automatic"}}), false)]
    #[case::other_policy(json!({"spec": {"compositionUpdatePolicy": "Sometimes"}}), false)]
    #[case::crossplane_not_an_object(json!({"spec": {"crossplane": "yes"}}), false)]
    #[case::v2_without_crossplane_yet(json!({"metadata": {"namespace": "team-a"}, "spec": {"parameters": {}}}), false)]
    #[case::certificate(json!({"metadata": {"namespace": "default"}, "spec": {"secretName": "tls"}}), false)]
    #[case::managed_resource(json!({"spec": {"forProvider": {}, "providerConfigRef": {"name": "default"}}}), false)]
    #[case::no_spec(json!({"metadata": {}}), false)]
    fn shapes(#[case] object: Value, #[case] expected: bool) {
        assert_eq!(is_composite_resource(&object, ""), expected, "{object}");
    }

    #[test]
    fn a_request_namespace_makes_the_object_namespaced() {
        let object = json!({"spec": {"compositionUpdatePolicy": "Automatic"}});
        assert!(!is_composite_resource(&object, "team-a"));
    }

    /// kube-apiserver cuts each warning to its first 256 characters once a
    /// request's warnings pass 4096 (docs/cloud-tags.md, "Warnings"): what
    /// it keeps still names the kind and says when a v2 XR is tagged.
    #[rstest]
    #[case::certificate("cert-manager.io", "v1", "Certificate")]
    #[case::bare_v2_xr("platform.example.org", "v1alpha1", "XDatabase")]
    fn the_warning_names_the_kind_and_when_a_v2_xr_is_tagged(
        #[case] group: &str,
        #[case] version: &str,
        #[case] kind: &str,
    ) {
        let gvk = GroupVersionKind {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
        };
        let warning = not_a_composite_resource(&gvk);
        assert!(
            warning.starts_with(&format!("{kind} ({group}/{version}) is not a Crossplane")),
            "{warning}"
        );
        let kept = &warning[..warning.len().min(256)];
        assert!(
            kept.contains("a v2 XR is tagged once Crossplane writes spec.crossplane"),
            "{kept}"
        );
        assert!(warning.ends_with("any other kind: remove it from the policy's rules"));
    }
}
