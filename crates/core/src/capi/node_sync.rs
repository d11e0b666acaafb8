//! Which Machine labels and annotations Cluster API copies to the Node
//! (Cluster API v1.14.0 util/labels/helpers.go `GetManagedLabels` and
//! util/annotations/helpers.go `GetManagedAnnotations`; docs/capi.md,
//! "Machine → Node").
//!
//! The domain of a key is the part before the first `/` (the whole key when
//! there is none), exactly as CAPI's `strings.Split(key, "/")[0]`.

use crate::capi::key_pattern::KeyPattern;
use crate::json::fields::{StringMap, quoted};
use std::collections::BTreeMap;

/// Audit annotation listing the Machine label keys synced to the Node.
pub(crate) const NODE_LABELS_AUDIT: &str = "node-labels";
/// Audit annotation listing the Machine annotation keys synced to the Node.
pub(crate) const NODE_ANNOTATIONS_AUDIT: &str = "node-annotations";

/// Annotations CAPI computes itself and always puts on the Node; they are
/// not copied from the Machine, so they are never listed.
pub(crate) const COMPUTED_NODE_ANNOTATIONS: &[&str] = &[
    "cluster.x-k8s.io/cluster-name",
    "cluster.x-k8s.io/cluster-namespace",
    "cluster.x-k8s.io/machine",
    "cluster.x-k8s.io/owner-kind",
    "cluster.x-k8s.io/owner-name",
];

fn domain(key: &str) -> &str {
    key.split('/').next().unwrap_or(key)
}

fn in_domain(domain: &str, root: &str) -> bool {
    domain == root
        || domain
            .strip_suffix(root)
            .is_some_and(|head| head.ends_with('.'))
}

/// The rule under which CAPI syncs a key to the Node. Worded only for an
/// explanation: a check that only asks whether a key is synced builds no
/// text.
enum SyncRule<'p> {
    /// Exactly this domain.
    Domain(&'static str),
    /// This domain or a subdomain.
    Subdomain(&'static str),
    /// A pattern of a setting, by index.
    Setting {
        setting: &'static str,
        index: usize,
        pattern: &'p KeyPattern,
    },
}

impl SyncRule<'_> {
    fn words(&self) -> String {
        match self {
            SyncRule::Domain(domain) => format!("domain {domain}"),
            SyncRule::Subdomain(domain) => format!("domain {domain} or a subdomain"),
            SyncRule::Setting {
                setting,
                index,
                pattern,
            } => format!("{setting}[{index}] {}", quoted(pattern.as_str())),
        }
    }
}

/// The rule under which CAPI syncs a Machine label with this key to the
/// Node. `node-role.kubernetes.io` matches exactly (no subdomains), unlike
/// the other two domains.
fn label_sync_rule<'p>(key: &str, additional: &'p [KeyPattern]) -> Option<SyncRule<'p>> {
    let d = domain(key);
    if d == "node-role.kubernetes.io" {
        return Some(SyncRule::Domain("node-role.kubernetes.io"));
    }
    for root in ["node-restriction.kubernetes.io", "node.cluster.x-k8s.io"] {
        if in_domain(d, root) {
            return Some(SyncRule::Subdomain(root));
        }
    }
    setting_rule(key, additional, "capi.additionalSyncMachineLabels")
}

/// The rule under which CAPI syncs a Machine annotation with this key to
/// the Node.
fn annotation_sync_rule<'p>(key: &str, additional: &'p [KeyPattern]) -> Option<SyncRule<'p>> {
    if COMPUTED_NODE_ANNOTATIONS.contains(&key) {
        return None;
    }
    if in_domain(domain(key), "node.cluster.x-k8s.io") {
        return Some(SyncRule::Subdomain("node.cluster.x-k8s.io"));
    }
    setting_rule(key, additional, "capi.additionalSyncMachineAnnotations")
}

fn setting_rule<'p>(
    key: &str,
    patterns: &'p [KeyPattern],
    setting: &'static str,
) -> Option<SyncRule<'p>> {
    let (index, pattern) = (patterns.iter().enumerate()).find(|(_, re)| re.is_match(key))?;
    Some(SyncRule::Setting {
        setting,
        index,
        pattern,
    })
}

/// Why CAPI syncs a Machine label with this key to the Node, or `None`.
pub(crate) fn label_sync_criterion(key: &str, additional: &[KeyPattern]) -> Option<String> {
    label_sync_rule(key, additional).map(|rule| rule.words())
}

/// Why CAPI syncs a Machine annotation with this key to the Node, or `None`.
pub(crate) fn annotation_sync_criterion(key: &str, additional: &[KeyPattern]) -> Option<String> {
    annotation_sync_rule(key, additional).map(|rule| rule.words())
}

/// Whether CAPI syncs a Machine label with this key to the Node.
pub(crate) fn label_is_synced(key: &str, additional: &[KeyPattern]) -> bool {
    label_sync_rule(key, additional).is_some()
}

/// Whether CAPI syncs a Machine annotation with this key to the Node.
pub(crate) fn annotation_is_synced(key: &str, additional: &[KeyPattern]) -> bool {
    annotation_sync_rule(key, additional).is_some()
}

/// The `node-labels` / `node-annotations` audit annotations for a Machine
/// as it will be stored.
pub(crate) fn audit_annotations(
    labels: &StringMap<'_>,
    annotations: &StringMap<'_>,
    label_regexes: &[KeyPattern],
    annotation_regexes: &[KeyPattern],
) -> BTreeMap<String, String> {
    let synced_labels = labels
        .keys()
        .filter(|key| label_is_synced(key, label_regexes));
    let synced_annotations = annotations
        .keys()
        .filter(|key| annotation_is_synced(key, annotation_regexes));
    BTreeMap::from([
        (NODE_LABELS_AUDIT.to_owned(), join(synced_labels)),
        (NODE_ANNOTATIONS_AUDIT.to_owned(), join(synced_annotations)),
    ])
}

fn join<'a>(keys: impl Iterator<Item = &'a &'a str>) -> String {
    keys.copied().collect::<Vec<_>>().join(",")
}

/// True for keys in the `kubernetes.io` / `k8s.io` namespaces or their
/// subdomains: the ones users expect on Nodes and are surprised to miss.
pub(crate) fn is_kubernetes_namespaced(key: &str) -> bool {
    // Unprefixed keys have no namespace, even when they look like a domain.
    key.contains('/') && {
        let d = domain(key);
        in_domain(d, "kubernetes.io") || in_domain(d, "k8s.io")
    }
}

/// Warnings for the Kubernetes-namespaced labels at `path` that CAPI will
/// not sync to the Node, sorted by key. `regexes` is asked for only when a
/// Kubernetes-namespaced label is not synced by CAPI's own domains: most
/// objects have none, and on a fresh instance the regexes would be compiled
/// for nothing.
pub(crate) fn unsynced_label_warnings<'r, E>(
    labels: &StringMap<'_>,
    path: &str,
    regexes: impl FnOnce() -> Result<&'r [KeyPattern], E>,
) -> Result<Vec<String>, E> {
    let mut candidates = labels
        .keys()
        .filter(|key| is_kubernetes_namespaced(key) && !label_is_synced(key, &[]))
        .peekable();
    if candidates.peek().is_none() {
        return Ok(Vec::new());
    }
    let regexes = regexes()?;
    Ok(candidates
        .filter(|key| !label_is_synced(key, regexes))
        .map(|key| {
            format!(
                "label {} in {path} will not be synced to the Node by Cluster API, which \
                 only syncs node-role.kubernetes.io, node-restriction.kubernetes.io and \
                 node.cluster.x-k8s.io labels; to sync it, match it in Cluster API's \
                 --additional-sync-machine-labels flag and in this policy's \
                 capi.additionalSyncMachineLabels setting",
                quoted(key)
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    //! Ported from cluster-api v1.14.0 util/labels/helpers_test.go
    //! TestGetManagedLabels and util/annotations/helpers_test.go
    //! TestGetManagedAnnotations.
    use super::*;
    use rstest::rstest;
    use std::convert::Infallible;

    fn regexes(patterns: &[&str]) -> Vec<KeyPattern> {
        patterns
            .iter()
            .map(|p| KeyPattern::new(p, regex_lite::Regex::new).unwrap())
            .collect()
    }

    #[rstest]
    #[case::node_role("node-role.kubernetes.io/worker", true)]
    #[case::node_role_no_name("node-role.kubernetes.io", true)]
    #[case::node_role_subdomain_is_not_synced("custom.node-role.kubernetes.io/x", false)]
    #[case::node_restriction("node-restriction.kubernetes.io/zone", true)]
    #[case::node_restriction_subdomain("foo.node-restriction.kubernetes.io/zone", true)]
    #[case::node_cluster("node.cluster.x-k8s.io/pool", true)]
    #[case::node_cluster_subdomain("team.node.cluster.x-k8s.io/owner", true)]
    #[case::lookalike_suffix("mynode.cluster.x-k8s.io/x", false)]
    #[case::node_kubernetes_io("node.kubernetes.io/exclude-from-external-load-balancers", false)]
    #[case::plain("env", false)]
    #[case::kubernetes_io("kubernetes.io/hostname", false)]
    fn label_is_synced_by_domain(#[case] key: &str, #[case] synced: bool) {
        assert_eq!(label_is_synced(key, &[]), synced, "{key}");
    }

    #[test]
    fn sync_criteria_name_the_domain_or_the_regex() {
        let re = regexes(&["^zone$", "exclude"]);
        assert_eq!(
            label_sync_criterion("node-role.kubernetes.io/worker", &re).as_deref(),
            Some("domain node-role.kubernetes.io")
        );
        assert_eq!(
            label_sync_criterion("a.node.cluster.x-k8s.io/x", &re).as_deref(),
            Some("domain node.cluster.x-k8s.io or a subdomain")
        );
        assert_eq!(
            label_sync_criterion(
                "node.kubernetes.io/exclude-from-external-load-balancers",
                &re
            )
            .as_deref(),
            Some("capi.additionalSyncMachineLabels[1] \"exclude\"")
        );
        assert_eq!(
            annotation_sync_criterion("cluster.x-k8s.io/machine", &re),
            None
        );
    }

    #[test]
    fn label_is_synced_by_additional_regex_unanchored() {
        let re = regexes(&["exclude-from"]);
        assert!(label_is_synced(
            "node.kubernetes.io/exclude-from-external-load-balancers",
            &re
        ));
        assert!(!label_is_synced("env", &re));
    }

    // TestGetManagedLabels 'sync all labels'
    #[test]
    fn label_is_synced_everything_with_dot_star() {
        assert!(label_is_synced("anything/at-all", &regexes(&[".*"])));
        assert!(label_is_synced("", &regexes(&[".*"])));
    }

    #[rstest]
    #[case::node_cluster("node.cluster.x-k8s.io/maintenance", true)]
    #[case::subdomain("team.node.cluster.x-k8s.io/owner", true)]
    #[case::node_role_not_for_annotations("node-role.kubernetes.io/worker", false)]
    #[case::node_restriction_not_for_annotations("node-restriction.kubernetes.io/zone", false)]
    #[case::computed_never_listed("cluster.x-k8s.io/cluster-name", false)]
    fn annotation_is_synced_by_domain(#[case] key: &str, #[case] synced: bool) {
        assert_eq!(annotation_is_synced(key, &[]), synced, "{key}");
    }

    #[test]
    fn annotation_computed_keys_are_never_listed_even_by_regex() {
        let all = regexes(&[".*"]);
        assert!(!annotation_is_synced("cluster.x-k8s.io/owner-name", &all));
        assert!(annotation_is_synced("example.com/anything", &all));
    }

    #[test]
    fn audit_annotations_are_sorted_and_comma_separated() {
        let labels: StringMap = [
            ("node-role.kubernetes.io/worker", ""),
            ("env", "prod"),
            ("node-restriction.kubernetes.io/zone", "a"),
            ("cluster.x-k8s.io/cluster-name", "c"),
        ]
        .into();
        let annotations: StringMap = [("node.cluster.x-k8s.io/maintenance", "x")].into();
        assert_eq!(
            audit_annotations(&labels, &annotations, &[], &[]),
            BTreeMap::from([
                (
                    "node-annotations".to_owned(),
                    "node.cluster.x-k8s.io/maintenance".to_owned()
                ),
                (
                    "node-labels".to_owned(),
                    "node-restriction.kubernetes.io/zone,node-role.kubernetes.io/worker".to_owned()
                ),
            ])
        );
    }

    #[test]
    fn audit_annotations_empty_when_nothing_syncs() {
        let audit = audit_annotations(&[("env", "prod")].into(), &StringMap::new(), &[], &[]);
        assert_eq!(audit["node-labels"], "");
        assert_eq!(audit["node-annotations"], "");
    }

    #[rstest]
    #[case::kubernetes_io("node.kubernetes.io/exclude-from-external-load-balancers", true)]
    #[case::k8s_io("k8s.io/x", true)]
    #[case::sub_k8s_io("topology.k8s.io/zone", true)]
    #[case::bare_domain_is_not_a_namespace("kubernetes.io", false)]
    #[case::other("example.com/kubernetes.io", false)]
    #[case::lookalike("notkubernetes.io/x", false)]
    fn kubernetes_namespaced_keys(#[case] key: &str, #[case] expected: bool) {
        assert_eq!(is_kubernetes_namespaced(key), expected, "{key}");
    }

    #[test]
    fn unsynced_label_warnings_name_key_path_and_setting() {
        let labels: StringMap = [
            (
                "node.kubernetes.io/exclude-from-external-load-balancers",
                "true",
            ),
            ("node-role.kubernetes.io/worker", ""),
            ("env", "prod"),
        ]
        .into();
        let none = || Ok::<_, Infallible>(&[][..]);
        let warnings =
            unsynced_label_warnings(&labels, "spec.template.metadata.labels", none).unwrap();
        assert_eq!(
            warnings,
            [
                "label \"node.kubernetes.io/exclude-from-external-load-balancers\" in \
              spec.template.metadata.labels will not be synced to the Node by Cluster API, \
              which only syncs node-role.kubernetes.io, node-restriction.kubernetes.io and \
              node.cluster.x-k8s.io labels; to sync it, match it in Cluster API's \
              --additional-sync-machine-labels flag and in this policy's \
              capi.additionalSyncMachineLabels setting"
            ]
        );
        let synced = regexes(&["^node\\.kubernetes\\.io/"]);
        let given = || Ok::<_, Infallible>(synced.as_slice());
        assert!(
            unsynced_label_warnings(&labels, "x", given)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn unsynced_label_warnings_ask_for_the_regexes_only_for_kubernetes_labels() {
        let labels: StringMap = [("env", "prod"), ("node-role.kubernetes.io/worker", "")].into();
        let never = || -> Result<&[KeyPattern], &str> { Err("the regexes were asked for") };
        assert_eq!(unsynced_label_warnings(&labels, "x", never), Ok(Vec::new()));
        let labels: StringMap = [("topology.kubernetes.io/zone", "a")].into();
        assert_eq!(
            unsynced_label_warnings(&labels, "x", never),
            Err("the regexes were asked for")
        );
    }
}
