//! The explanation next to the decision: every path, every fate, every skip
//! reason, and the same outcome as `evaluate`.

use super::support;
use metadata_propagation_core::capi::explained::key_fates::{Fate, KeyFate, NodeKey};
use metadata_propagation_core::evaluate::{evaluate, explain};
use metadata_propagation_core::explain::Explanation;
use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::settings::Settings;
use metadata_propagation_core::tags::said::label_fates::TagFate;
use serde_json::{Value, json};

/// Explains, and checks the outcome equals the one `evaluate` gives.
fn explained(object: Value, lookup: &MapLookup, settings: &str) -> Explanation {
    let settings = Settings::from_json(settings.as_bytes()).unwrap();
    let req = AdmissionRequest::for_object("UPDATE", object);
    let (outcome, explanation) = explain(&req, &settings, lookup);
    assert_eq!(outcome, evaluate(&req, &settings, lookup));
    explanation
}

fn machine_deployment() -> Value {
    json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
           "metadata": {"name": "md-0", "namespace": "default",
                        "labels": {"top-level": "never"},
                        "annotations": {"machinedeployment.clusters.x-k8s.io/revision": "4",
                                        "team": "payments"}},
           "spec": {"template": {"metadata": {"labels": {
               "cluster.x-k8s.io/cluster-name": "c1", "env": "prod", "tier": "gold"}}}}})
}

fn machine_set() -> Value {
    json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
           "metadata": {"name": "md-0-abc", "namespace": "default",
                        "labels": {"cluster.x-k8s.io/cluster-name": "c1", "tier": "silver", "env": "prod"},
                        "ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
                                             "name": "md-0", "uid": "1", "controller": true}]},
           "spec": {"template": {"metadata": {}}}})
}

#[test]
fn machine_set_keys_flow_are_kept_or_are_not_propagated() {
    let lookup = MapLookup::default().with_object(machine_deployment());
    let e = explained(machine_set(), &lookup, "{}");
    let rule = support::capi_part(&e).rule.clone().unwrap();
    assert_eq!(rule.family, "MachineSet");
    assert_eq!(
        rule.parent,
        "MachineDeployment default/md-0 (cluster.x-k8s.io/v1beta2)"
    );
    let paths: Vec<&str> = support::capi_part(&e)
        .paths
        .iter()
        .map(|p| p.path.as_str())
        .collect();
    assert_eq!(
        paths,
        [
            "metadata.annotations",
            "metadata.labels",
            "spec.template.metadata.labels",
            "spec.template.metadata.annotations"
        ]
    );
    let from_template =
        "MachineDeployment default/md-0 (cluster.x-k8s.io/v1beta2) spec.template.metadata.labels";
    assert_eq!(
        support::capi_part(&e).paths[1].keys,
        [
            KeyFate {
                key: "cluster.x-k8s.io/cluster-name".into(),
                fate: Fate::KeptBookkeeping {
                    child_value: Some("c1".into())
                }
            },
            KeyFate {
                key: "env".into(),
                fate: Fate::Flows {
                    value: "prod".into(),
                    from: from_template.into(),
                    change: "unchanged".into()
                }
            },
            KeyFate {
                key: "tier".into(),
                fate: Fate::Flows {
                    value: "gold".into(),
                    from: from_template.into(),
                    change: "corrected".into()
                }
            },
        ]
    );
    assert_eq!(
        support::capi_part(&e).paths[0].keys[0],
        KeyFate {
            key: "machinedeployment.clusters.x-k8s.io/revision".into(),
            fate: Fate::NotPropagated {
                rule: "never copied along this path (machinedeployment computeDesiredMS + mdutil MachineSetAnnotationsFromMachineDeployment)".into()
            }
        }
    );
    assert!(
        matches!(&support::capi_part(&e).paths[0].keys[1].fate, Fate::Flows { change, .. } if change == "added")
    );
}

#[test]
fn machine_node_sync_names_the_criterion_or_regex() {
    let ms = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
                    "metadata": {"name": "ms", "namespace": "default"},
                    "spec": {"template": {"metadata": {"labels": {"node-role.kubernetes.io/worker": "", "zone": "a"}}}}});
    let machine = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
                         "metadata": {"name": "m", "namespace": "default",
                                      "annotations": {"node.cluster.x-k8s.io/drain": "x"},
                                      "ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
                                                           "name": "ms", "uid": "1", "controller": true}]}});
    let e = explained(
        machine,
        &MapLookup::default().with_object(ms),
        r#"{"capi":{"additionalSyncMachineLabels":["^zone$"]}}"#,
    );
    let node = support::capi_part(&e).node_sync.clone().unwrap();
    assert_eq!(
        node.labels,
        [
            NodeKey {
                key: "node-role.kubernetes.io/worker".into(),
                synced_by: Some("domain node-role.kubernetes.io".into())
            },
            NodeKey {
                key: "zone".into(),
                synced_by: Some("capi.additionalSyncMachineLabels[0] \"^zone$\"".into())
            },
        ]
    );
    assert_eq!(
        node.annotations,
        [NodeKey {
            key: "node.cluster.x-k8s.io/drain".into(),
            synced_by: Some("domain node.cluster.x-k8s.io or a subdomain".into())
        }]
    );
}

#[test]
fn notes_say_why_nothing_flowed() {
    let mut orphan = machine_set();
    orphan["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("ownerReferences");
    assert_eq!(
        explained(orphan, &MapLookup::default(), "{}").notes,
        [
            "no propagation rule applies: no matching owner reference and not topology-owned; no parent looked up for its metadata"
        ]
    );
    assert_eq!(
        explained(machine_set(), &MapLookup::default(), "{}").notes,
        [
            "MachineDeployment default/md-0 (cluster.x-k8s.io/v1beta2) (parent of this MachineSet) not found: allowed unchanged"
        ]
    );
}

/// A kind the policy leaves alone with a warning is explained by that
/// warning alone: the explanation is shown beside the warnings (explain,
/// the audit, the web page), so a note repeating one would say it twice.
/// A kind it leaves alone without a warning gets a note saying so.
#[test]
fn a_warning_is_never_repeated_as_a_note() {
    let settings = r#"{"cloudTags":{"propagatingLabels":["team"]}}"#;
    let labels = json!({"team": "payments"});
    for object in [
        json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
               "metadata": {"name": "tls", "namespace": "default", "labels": labels},
               "spec": {"secretName": "tls"}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "cm", "namespace": "default", "labels": labels}}),
        json!({"apiVersion": "addons.cluster.x-k8s.io/v1beta2", "kind": "ClusterResourceSet",
               "metadata": {"name": "crs", "namespace": "default", "labels": labels}}),
    ] {
        let settings = Settings::from_json(settings.as_bytes()).unwrap();
        let request = AdmissionRequest::for_object("CREATE", object);
        let (outcome, explanation) = explain(&request, &settings, &MapLookup::default());
        assert_eq!(outcome.warnings.len(), 1, "{outcome:?}");
        assert_eq!(explanation.notes, Vec::<String>::new(), "{outcome:?}");
    }
    let cluster_class = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
                               "metadata": {"name": "cc", "namespace": "default"}});
    let request = AdmissionRequest::for_object("CREATE", cluster_class);
    let (outcome, explanation) = explain(
        &request,
        &Settings::from_json(b"{}").unwrap(),
        &MapLookup::default(),
    );
    assert_eq!(outcome.warnings, Vec::<String>::new());
    assert_eq!(
        explanation.notes,
        ["no propagation rule applies to a ClusterClass: allowed unchanged"]
    );
}

#[test]
fn a_rejection_keeps_what_was_decided_before_it() {
    // The parent's template labels hold a number: the MachineSet is
    // rejected while the labels' flow is planned, after the parent was read
    // and its annotations' flow decided. The explanation keeps both.
    let mut parent = machine_deployment();
    parent["spec"]["template"]["metadata"]["labels"]["tier"] = json!(3);
    let lookup = MapLookup::default().with_object(parent);
    let settings = Settings::from_json(b"{}").unwrap();
    let req = AdmissionRequest::for_object("UPDATE", machine_set());
    let (outcome, e) = explain(&req, &settings, &lookup);
    assert_eq!(outcome, evaluate(&req, &settings, &lookup));
    assert!(outcome.plan().is_none(), "rejected: {outcome:?}");
    let rule = support::capi_part(&e)
        .rule
        .clone()
        .expect("the rule is named");
    assert_eq!(
        rule.parent,
        "MachineDeployment default/md-0 (cluster.x-k8s.io/v1beta2)"
    );
    let paths: Vec<&str> = support::capi_part(&e)
        .paths
        .iter()
        .map(|p| p.path.as_str())
        .collect();
    assert_eq!(paths, ["metadata.annotations"]);
}

/// A cluster-scoped Crossplane v1 XR: `spec.compositionUpdatePolicy`, which
/// the XR's CRD defaults, makes it one.
fn xr(labels: Value, annotation: &str) -> Value {
    json!({"apiVersion": "platform.example.org/v1alpha1", "kind": "XNetwork",
           "metadata": {"name": "n", "labels": labels,
                        "annotations": {"cloud-tags.plexsphere.io/labels": annotation}},
           "spec": {"parameters": {"provider": "Hetzner"},
                    "compositionUpdatePolicy": "Automatic",
                    "cloudTags": {"plexsphere:old/key": "x", "CostCenter": "42"}}})
}

/// The caution on a tag the hetzner profile admits but Hetzner's API
/// refuses: every key under `plexsphere:`, whose `:` is the prefix's.
fn hetzner_refuses(tag_key: &str) -> String {
    format!(
        "\"{tag_key}\" holds ':': Hetzner's API refuses ':' in label keys, and '/' but once \
         after a DNS-name prefix; set a prefix without it (cloudTags.prefix, or a profile of your \
         own listing hetzner)"
    )
}

#[test]
fn xr_every_label_has_a_fate_with_measurements() {
    let long_value = "v".repeat(64);
    let labels = json!({"platform/env": "prod", "team/cost center": "42",
                        "team/long": long_value, "unlisted": "x"});
    let annotation = r#"{"acme:checkout/owner":"payments"}"#;
    let settings = r#"{"cloudTags":{"propagatingLabels":
        ["platform/env","team/cost center","team/long","acme:checkout/owner"]}}"#;
    let e = explained(xr(labels, annotation), &MapLookup::default(), settings);
    let tags = support::cloud_tags(&e).unwrap();
    assert_eq!(tags.profile, "hetzner");
    assert_eq!(tags.provider, "spec.parameters.provider = \"Hetzner\"");
    let fates: Vec<(&str, &str, &TagFate)> = tags
        .labels
        .iter()
        .map(|l| (l.qualified_key.as_str(), l.source.as_str(), &l.fate))
        .collect();
    assert_eq!(
        fates,
        [
            (
                "acme:checkout/owner",
                "annotation cloud-tags.plexsphere.io/labels",
                &TagFate::Tag {
                    tag_key: "plexsphere:acme:checkout/owner".into(),
                    caution: Some(hetzner_refuses("plexsphere:acme:checkout/owner"))
                }
            ),
            (
                "platform/env",
                "metadata.labels",
                &TagFate::Tag {
                    tag_key: "plexsphere:platform/env".into(),
                    caution: Some(hetzner_refuses("plexsphere:platform/env"))
                }
            ),
            (
                "team/cost center",
                "metadata.labels",
                &TagFate::Skipped {
                    reason: "key-character-class".into(),
                    detail: "the tag key contains ' ' (U+0020)".into()
                }
            ),
            (
                "team/long",
                "metadata.labels",
                &TagFate::Skipped {
                    reason: "value-too-long".into(),
                    detail: "the value is 64 runes, the limit is 63".into()
                }
            ),
            ("unlisted", "metadata.labels", &TagFate::NotOptedIn),
        ]
    );
    assert_eq!(
        tags.removed,
        [(
            "plexsphere:old/key".to_owned(),
            "stale: no opted-in label produces it".to_owned()
        )]
    );
}

#[test]
fn xr_explanation_renders_as_text() {
    let e = explained(
        xr(json!({"aws:x": "1", "platform/env": "prod"}), "{}"),
        &MapLookup::default(),
        r#"{"cloudTags":{"propagatingLabels":["aws:x","platform/env"]}}"#,
    );
    assert_eq!(
        e.to_string(),
        format!(
            "cloud tags: profile hetzner (spec.parameters.provider = \"Hetzner\")\n\
             \x20 profile built-in: provider \"Hetzner\" selects the built-in profile hetzner\n\
             \x20 \"aws:x\" (metadata.labels): tag \"plexsphere:aws:x\"\n\
             \x20   fails at the provider: {}\n\
             \x20 \"platform/env\" (metadata.labels): tag \"plexsphere:platform/env\"\n\
             \x20   fails at the provider: {}\n\
             \x20 \"plexsphere:old/key\": removed from spec.cloudTags (stale: no opted-in label produces it)\n",
            hetzner_refuses("plexsphere:aws:x"),
            hetzner_refuses("plexsphere:platform/env"),
        )
    );
}

#[test]
fn xr_adopted_is_noted() {
    let e = explained(
        xr(json!({"platform/origin": "adopted"}), "{}"),
        &MapLookup::default(),
        "{}",
    );
    assert_eq!(
        e.notes,
        ["platform/origin is \"adopted\": left exactly as submitted"]
    );
    assert!(support::cloud_tags(&e).is_none());
}

#[test]
fn skip_reasons_each_explained() {
    let key_128 = format!("team/{}", "k".repeat(113)); // 11 + 118 = 129 > 128
    let labels = json!({"aws:billing": "1", key_128.clone(): "v", "team/a,b": "v"});
    let settings =
        json!({"cloudTags": {"propagatingLabels": ["aws:billing", key_128, "team/a,b"]}});
    let mut object = xr(labels, "{}");
    object["spec"]["parameters"]["provider"] = json!("aws");
    let e = explained(object, &MapLookup::default(), &settings.to_string());
    let details: Vec<String> = support::cloud_tags(&e)
        .unwrap()
        .labels
        .into_iter()
        .filter_map(|l| match l.fate {
            TagFate::Skipped { reason, detail } => Some(format!("{reason}: {detail}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        details,
        [
            "reserved-prefix: the key starts with the reserved prefix \"aws:\"",
            "key-character-class: the tag key contains ',' (U+002C)",
            "key-too-long: the tag key is 129 runes, the limit is 128",
        ]
    );
}

/// The ready-made user-defined profile of GCP labels (which refuse
/// `:`), after a profile of another provider.
const GCP_LABELS_SECOND: &str = r#"{"cloudTags":{"propagatingLabels":["platform/env"],"profiles":[
    {"name":"azure","providers":["azure"],"keyMax":512,"valueMax":256,"unit":"runes","cap":50,
     "keyCharacters":{"sets":["printable"],"except":"<>%&\\?/"}},
    {"name":"gcp-labels","providers":["gcp","google"],"keyMax":63,"valueMax":63,"unit":"bytes",
     "cap":64,"keyCharacters":{"sets":["lowercase-letters","digits"],"extra":"_-"}}]}}"#;

/// An XR opting in `platform/env` on `provider` (none: no provider field).
fn xr_on(provider: Option<&str>) -> Value {
    let mut object = xr(json!({"platform/env": "prod"}), "{}");
    object["spec"]["parameters"] = json!({});
    if let Some(provider) = provider {
        object["spec"]["parameters"]["provider"] = json!(provider);
    }
    object
}

#[test]
fn xr_user_defined_profile_names_its_setting_and_why_no_tag_can_propagate() {
    let e = explained(xr_on(Some("GCP")), &MapLookup::default(), GCP_LABELS_SECOND);
    assert_eq!(
        e.to_string(),
        "cloud tags: profile gcp-labels (spec.parameters.provider = \"GCP\")\n\
         \x20 profile user-defined: provider \"GCP\" is listed in cloudTags.profiles[1].providers\n\
         \x20 no tag can ever propagate under provider profile gcp-labels: its key characters \
         (lowercase-letters, digits and \"_-\") refuse \":\" of the mandated prefix \"plexsphere:\"\n\
         \x20 \"platform/env\" (metadata.labels): skipped, key-character-class: the tag key contains ':' (U+003A)\n\
         \x20 \"plexsphere:old/key\": removed from spec.cloudTags (invalid for profile gcp-labels: key-character-class)\n"
    );
    // The JSON the runner prints (`policy-runner explain -o json`).
    let json = serde_json::to_value(&e).unwrap();
    assert_eq!(json["cloudTags"]["origin"], "user-defined");
    assert_eq!(
        json["cloudTags"]["why"],
        "provider \"GCP\" is listed in cloudTags.profiles[1].providers"
    );
    assert!(
        json["cloudTags"]["noTagCanPropagate"]
            .as_str()
            .unwrap()
            .starts_with("no tag can ever propagate under provider profile gcp-labels: ")
    );
}

#[test]
fn xr_key_ceiling_shorter_than_the_prefix_is_why_no_tag_can_propagate() {
    let settings = r#"{"cloudTags":{"propagatingLabels":["platform/env"],"profiles":[
        {"name":"tiny","providers":["tiny"],"keyMax":11,"valueMax":63,"unit":"bytes","cap":5,
         "keyCharacters":{"sets":["non-control"]}}]}}"#;
    let tags = support::cloud_tags(&explained(
        xr_on(Some("tiny")),
        &MapLookup::default(),
        settings,
    ))
    .unwrap();
    assert_eq!(
        tags.no_tag_can_propagate.as_deref(),
        Some(
            "no tag can ever propagate under provider profile tiny: its key ceiling of 11 bytes \
             leaves no room after the mandated prefix \"plexsphere:\""
        )
    );
}

#[rstest::rstest]
#[case::unlisted_provider(
    Some("vsphere"),
    "{}",
    "provider \"vsphere\" is listed by no profile, so the fallback generic applies"
)]
#[case::listed_by_no_user_profile(
    Some("ibm"),
    GCP_LABELS_SECOND,
    "provider \"ibm\" is listed by no profile, so the fallback generic applies"
)]
#[case::no_provider(None, "{}", "no provider value, so the fallback generic applies")]
fn xr_fallback_profile_says_why(
    #[case] provider: Option<&str>,
    #[case] settings: &str,
    #[case] why: &str,
) {
    let e = explained(xr_on(provider), &MapLookup::default(), settings);
    let text = e.to_string();
    let mut lines = text.lines().skip(1);
    assert_eq!(
        lines.next(),
        Some(format!("  profile fallback: {why}").as_str())
    );
    assert!(
        !text.contains("no tag can ever propagate"),
        "generic admits the prefix: {text}"
    );
    let tags = support::cloud_tags(&e).unwrap();
    assert_eq!(
        (
            tags.profile.as_str(),
            tags.origin.as_str(),
            tags.why.as_str()
        ),
        ("generic", "fallback", why)
    );
    assert_eq!(tags.no_tag_can_propagate, None);
}

/// A topology MachineDeployment's parent merges the Cluster's topology
/// entry over its ClusterClass entry: each key is credited to the object
/// and the real field it comes from, and a key both set says the topology
/// wins. v1beta1 classes keep worker metadata under `template.metadata`.
#[rstest::rstest]
#[case::v1beta2("v1beta2", "spec.topology.classRef.name", "metadata")]
#[case::v1beta1("v1beta1", "spec.topology.class", "template.metadata")]
fn topology_keys_name_the_cluster_or_the_cluster_class(
    #[case] version: &str,
    #[case] class_name_at: &str,
    #[case] class_metadata: &str,
) {
    let api_version = format!("cluster.x-k8s.io/{version}");
    let mut cluster = json!({"apiVersion": api_version, "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "default"},
        "spec": {"topology": {"workers": {"machineDeployments": [
            {"name": "md-0", "class": "default-worker",
             "metadata": {"labels": {"team": "payments", "env": "prod", "tier": "gold"}}}]}}}});
    let class_name = class_name_at
        .split('.')
        .fold(&mut cluster, |value, segment| &mut value[segment]);
    *class_name = json!("quick-start");
    let mut worker_class = json!({"class": "default-worker"});
    let metadata = class_metadata
        .split('.')
        .fold(&mut worker_class, |value, segment| &mut value[segment]);
    *metadata = json!({"labels": {"team": "platform", "cost-center": "cc-1001", "tier": "gold"},
                       "annotations": {"runbook": "https://runbooks"}});
    let class = json!({"apiVersion": api_version, "kind": "ClusterClass",
        "metadata": {"name": "quick-start", "namespace": "default"},
        "spec": {"workers": {"machineDeployments": [worker_class]}}});
    let md = json!({"apiVersion": api_version, "kind": "MachineDeployment",
        "metadata": {"name": "c1-md-0-x", "namespace": "default",
                     "labels": {"topology.cluster.x-k8s.io/owned": "",
                                "cluster.x-k8s.io/cluster-name": "c1",
                                "topology.cluster.x-k8s.io/deployment-name": "md-0",
                                "team": "platform"}},
        "spec": {"template": {"metadata": {}}}});
    let lookup = MapLookup::default().with_object(cluster).with_object(class);
    let e = explained(md, &lookup, "{}");

    let in_cluster = format!(
        "Cluster default/c1 ({api_version}) \
         spec.topology.workers.machineDeployments[name=\"md-0\"].metadata.labels"
    );
    let in_class = |map: &str| {
        format!(
            "ClusterClass default/quick-start ({api_version}) \
             spec.workers.machineDeployments[class=\"default-worker\"].{class_metadata}.{map}"
        )
    };
    let flows = |value: &str, from: String, change: &str| Fate::Flows {
        value: value.into(),
        from,
        change: change.into(),
    };
    let labels = |path: &str| {
        let keys = &support::capi_part(&e)
            .paths
            .iter()
            .find(|p| p.path == path)
            .unwrap()
            .keys;
        keys.iter()
            .map(|k| (k.key.as_str(), k.fate.clone()))
            .collect::<Vec<_>>()
    };
    let expected = |team_change: &str| {
        vec![
            ("cost-center", flows("cc-1001", in_class("labels"), "added")),
            ("env", flows("prod", in_cluster.clone(), "added")),
            (
                "team",
                flows(
                    "payments",
                    format!("{in_cluster}, overriding the ClusterClass's \"platform\""),
                    team_change,
                ),
            ),
            (
                "tier",
                flows(
                    "gold",
                    format!("{in_cluster}, overriding the ClusterClass's identical value"),
                    "added",
                ),
            ),
        ]
    };
    assert_eq!(labels("metadata.labels"), expected("corrected"));
    assert_eq!(labels("spec.template.metadata.labels"), expected("added"));
    assert_eq!(
        labels("spec.template.metadata.annotations"),
        [(
            "runbook",
            flows("https://runbooks", in_class("annotations"), "added")
        )]
    );
    assert!(e.to_string().contains(&format!(
        "  \"team\" = \"payments\": flows from {in_cluster}, overriding the ClusterClass's \
         \"platform\" (corrected)\n"
    )));
}
