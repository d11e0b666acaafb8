//! Cluster API metadata propagation through `evaluate`: which look-ups are
//! made, what happens when a parent is missing, unreadable or malformed, and
//! that the child keeps everything the contract does not name. What a child
//! gets from its parents is CAPI's own tables, ported in
//! capi_conformance.rs; the tests here say what those rows cannot.

use super::support;

use metadata_propagation_core::lookup::{LookupError, MapLookup, ObjectRef};
use metadata_propagation_core::outcome::{Outcome, Verdict};
use serde_json::{Value, json};
use support::quick_start::{machine_deployment, machine_set, run, run_with, template_spec};

/// The tests here that pin look-up masks pin the metadata part; the
/// in-place fields widen them (in_place_fields.rs).
const METADATA_ONLY: &str = r#"{"capi": {"inPlaceFields": false}}"#;

/// The field masks of every look-up so far, as sorted lists.
fn masks(lookup: &MapLookup) -> Vec<Vec<String>> {
    lookup
        .field_masks()
        .into_iter()
        .map(|m| m.into_iter().collect())
        .collect()
}

fn md_ref(version: &str, name: &str) -> ObjectRef {
    ObjectRef {
        api_version: format!("cluster.x-k8s.io/{version}"),
        kind: "MachineDeployment".into(),
        name: name.into(),
        namespace: Some("default".into()),
    }
}

/// The one look-up a MachineSet makes (its MachineDeployment, at the
/// ownerReference's version, metadata masks only) and, on the same run, a
/// stale MachineSet label corrected, which no conformance row has.
#[test]
fn machine_set_update_corrects_and_adds_but_never_removes() {
    for version in ["v1beta1", "v1beta2"] {
        let lookup = MapLookup::default().with_object(machine_deployment(version));
        let (outcome, ms) = run_with("UPDATE", machine_set(version), &lookup, METADATA_ONLY);
        assert_eq!(lookup.requests(), [md_ref(version, "capi-quickstart-md-0")]);
        assert_eq!(
            masks(&lookup),
            [[
                "metadata.annotations",
                "spec.template.metadata.annotations",
                "spec.template.metadata.labels"
            ]]
        );
        assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
        assert_eq!(
            ms["metadata"],
            json!({
                "name": "capi-quickstart-md-0-7d8f9", "namespace": "default",
                "labels": {"cluster.x-k8s.io/cluster-name": "capi-quickstart",
                           "cluster.x-k8s.io/deployment-name": "capi-quickstart-md-0",
                           "machine-template-hash": "1234567", "env": "prod", "user/added": "keep",
                           "node-role.kubernetes.io/worker": ""},
                "annotations": {"machinedeployment.clusters.x-k8s.io/revision": "3",
                                "platform.example.com/owner": "team-a"},
                "ownerReferences": [{"apiVersion": format!("cluster.x-k8s.io/{version}"), "kind": "MachineDeployment",
                                     "name": "capi-quickstart-md-0", "uid": "a1", "controller": true,
                                     "blockOwnerDeletion": true}]
            })
        );
        assert_eq!(
            ms["spec"]["template"]["metadata"],
            json!({"labels": {"machine-template-hash": "1234567", "env": "prod",
                              "node-role.kubernetes.io/worker": ""},
                   "annotations": {"platform.example.com/cost-center": "42"}})
        );
        // Everything the contract does not name is untouched.
        let mut untouched = machine_set(version);
        untouched["metadata"] = ms["metadata"].clone();
        untouched["spec"]["template"]["metadata"] = ms["spec"]["template"]["metadata"].clone();
        assert_eq!(ms, untouched);
    }
}

#[test]
fn parent_not_found_allows_unchanged() {
    let lookup = MapLookup::default();
    let (outcome, _) = run("CREATE", machine_set("v1beta1"), &lookup);
    assert_eq!(outcome, Outcome::allow());
    assert_eq!(lookup.requests().len(), 1);
}

#[test]
fn lookup_failure_rejects_naming_parent_and_retry() {
    let lookup = MapLookup::default().with_error(
        md_ref("v1beta2", "capi-quickstart-md-0"),
        LookupError::Failed("machinedeployments.cluster.x-k8s.io is forbidden".into()),
    );
    let (outcome, _) = run("CREATE", machine_set("v1beta2"), &lookup);
    assert_eq!(
        outcome.verdict,
        Verdict::Reject {
            message: "cannot read MachineDeployment default/capi-quickstart-md-0 \
                      (cluster.x-k8s.io/v1beta2), the parent of this MachineSet: \
                      machinedeployments.cluster.x-k8s.io is forbidden; the request can be \
                      retried once the policy can read it"
                .into(),
            code: 500
        }
    );
}

#[test]
fn malformed_parent_rejects_naming_parent_and_field() {
    let mut md = machine_deployment("v1beta1");
    md["spec"]["template"]["metadata"]["labels"] = json!(["env=prod"]);
    let lookup = MapLookup::default().with_object(md);
    let (outcome, _) = run("CREATE", machine_set("v1beta1"), &lookup);
    assert_eq!(
        outcome.verdict,
        Verdict::Reject {
            message: "cannot propagate Cluster API metadata: parent MachineDeployment \
                      default/capi-quickstart-md-0 (cluster.x-k8s.io/v1beta1) of this MachineSet \
                      is malformed: spec.template.metadata.labels: expected an object, found an array"
                .into(),
            code: 400
        }
    );
}

#[test]
fn parent_without_spec_propagates_annotations_only() {
    let mut md = machine_deployment("v1beta1");
    md.as_object_mut().unwrap().remove("spec");
    let lookup = MapLookup::default().with_object(md);
    let (_, ms) = run("CREATE", machine_set("v1beta1"), &lookup);
    assert_eq!(
        ms["metadata"]["annotations"],
        json!({"machinedeployment.clusters.x-k8s.io/revision": "3",
               "platform.example.com/owner": "team-a"})
    );
    assert_eq!(ms["metadata"]["labels"]["env"], "staging");
}

#[test]
fn objects_without_a_rule_or_owner_make_no_lookup() {
    let lookup = MapLookup::default();
    let mut orphan = machine_set("v1beta1");
    orphan["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("ownerReferences");
    let cluster = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
                         "metadata": {"name": "c", "namespace": "default"}, "spec": {}});
    let template = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                          "kind": "DockerMachineTemplate",
                          "metadata": {"name": "t", "namespace": "default",
                                       "ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta1",
                                                            "kind": "ClusterClass", "name": "quick-start", "uid": "x"}]},
                          "spec": {"template": {"spec": {}}}});
    // A KCP without the topology label is not topology-owned.
    let kcp = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane",
                     "metadata": {"name": "cp", "namespace": "default",
                                  "labels": {"cluster.x-k8s.io/cluster-name": "c"}},
                     "spec": {"machineTemplate": {"metadata": {}}}});
    for object in [orphan, cluster, template, kcp] {
        let (outcome, _) = run("CREATE", object, &lookup);
        assert_eq!(outcome, Outcome::allow());
    }
    let (outcome, _) = run("DELETE", machine_set("v1beta1"), &lookup);
    assert_eq!(outcome, Outcome::allow());
    assert!(lookup.requests().is_empty());
}

#[test]
fn infra_machine_follows_only_a_non_controller_owner() {
    let ms = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet",
                    "metadata": {"name": "ms", "namespace": "default"},
                    "spec": {"template": {"metadata": {"labels": {"env": "prod"},
                                                       "annotations": {"team": "a"}}}}});
    let lookup = MapLookup::default().with_object(ms);
    let docker_machine = |controller: bool| {
        json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachine",
               "metadata": {"name": "dm", "namespace": "default",
                            "labels": {"cluster.x-k8s.io/cluster-name": "c"},
                            "ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet",
                                                 "name": "ms", "uid": "1", "controller": controller}]},
               "spec": {}})
    };
    let (_, dm) = run("CREATE", docker_machine(false), &lookup);
    assert_eq!(
        dm["metadata"]["labels"],
        json!({"cluster.x-k8s.io/cluster-name": "c", "env": "prod"})
    );
    assert_eq!(dm["metadata"]["annotations"], json!({"team": "a"}));
    let (outcome, _) = run("CREATE", docker_machine(true), &lookup);
    assert_eq!(outcome, Outcome::allow());
    assert_eq!(lookup.requests().len(), 1);
}

#[test]
fn malformed_child_is_rejected_naming_the_field() {
    let mut ms = machine_set("v1beta1");
    ms["metadata"]["labels"]["replicas"] = json!(3);
    let lookup = MapLookup::default().with_object(machine_deployment("v1beta1"));
    let (outcome, _) = run("CREATE", ms, &lookup);
    assert_eq!(
        outcome.verdict,
        Verdict::Reject {
            message: "cannot propagate Cluster API metadata: metadata.labels[\"replicas\"]: \
                      expected a string value, found a number"
                .into(),
            code: 400
        }
    );
}

/// Found by the mutated_objects fuzz target (crash-26f1, an owner-less
/// MachineSet with the annotation `"\0": null`, which was allowed): the
/// object's own labels and annotations are read on every path, whether or
/// not a rule applies, and before any look-up is spent.
#[test]
fn a_non_string_label_or_annotation_is_rejected_on_every_path() {
    let lookup = MapLookup::default().with_object(machine_deployment("v1beta1"));
    let mut orphan = machine_set("v1beta1");
    orphan["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("ownerReferences");
    orphan["metadata"]["annotations"]["\u{0}"] = Value::Null;
    let mut owned = machine_set("v1beta1");
    owned["metadata"]["annotations"]["example.com/note"] = json!(true);
    // Without the topology label no rule applies to a KubeadmControlPlane.
    let kcp = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "KubeadmControlPlane",
                     "metadata": {"name": "cp", "namespace": "default",
                                  "labels": {"cluster.x-k8s.io/cluster-name": "c", "env": 1}},
                     "spec": {"version": "v1.31.0", "kubeadmConfigSpec": {},
                              "machineTemplate": {"infrastructureRef": {
                                  "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                  "kind": "DockerMachineTemplate", "name": "cp"}}}});
    for (object, message) in [
        (
            orphan,
            r#"metadata.annotations["\u0000"]: expected a string value, found null"#,
        ),
        (
            owned,
            "metadata.annotations[\"example.com/note\"]: expected a string value, found a boolean",
        ),
        (
            kcp,
            "metadata.labels[\"env\"]: expected a string value, found a number",
        ),
    ] {
        let (outcome, _) = run("UPDATE", object, &lookup);
        assert_eq!(
            outcome.verdict,
            Verdict::Reject {
                message: format!("cannot propagate Cluster API metadata: {message}"),
                code: 400
            }
        );
    }
    assert!(lookup.requests().is_empty());
}

fn topology_cluster(version: &str) -> Value {
    let topology = if version == "v1beta1" {
        json!({"class": "quick-start", "version": "v1.31.0"})
    } else {
        json!({"classRef": {"name": "quick-start"}, "version": "v1.31.0"})
    };
    let mut cluster = json!({"apiVersion": format!("cluster.x-k8s.io/{version}"), "kind": "Cluster",
                             "metadata": {"name": "capi-quickstart", "namespace": "default"},
                             "spec": {"topology": topology}});
    cluster["spec"]["topology"]["controlPlane"] = json!({"replicas": 3, "metadata": {
        "labels": {"env": "prod", "tier": "topology"}, "annotations": {"a": "topology"}}});
    cluster["spec"]["topology"]["workers"] = json!({"machineDeployments": [
        {"class": "default-worker", "name": "md-0", "replicas": 2,
         "metadata": {"labels": {"pool": "md-0-topology"},
                      "annotations": {"topology.cluster.x-k8s.io/defer-upgrade": "",
                                      "owner": "team-a"}}}],
        "machinePools": [
        {"class": "default-worker", "name": "mp-0", "replicas": 2,
         "metadata": {"labels": {"pool": "mp-0-topology"},
                      "annotations": {"topology.cluster.x-k8s.io/hold-upgrade-sequence": "",
                                      "topology.cluster.x-k8s.io/defer-upgrade": "",
                                      "owner": "team-b"}}}]});
    cluster
}

/// A topology-owned control plane's `spec.machineTemplate`, as its CRD
/// requires it: the infrastructure reference is a sibling of `metadata` in
/// v1beta1 and under `spec` in v1beta2.
fn control_plane_machine_template(version: &str) -> Value {
    let mut template = json!({"metadata": {"labels": {"own": "1"}}});
    if version == "v1beta1" {
        template["infrastructureRef"] = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                               "kind": "DockerMachineTemplate", "name": "capi-quickstart-cp"});
    } else {
        template["spec"] = json!({"infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io",
                                                        "kind": "DockerMachineTemplate", "name": "capi-quickstart-cp"}});
    }
    template
}

fn quick_start_class(version: &str, machine_infrastructure: bool) -> Value {
    let worker_class = |labels: Value| {
        if version == "v1beta1" {
            json!({"class": "default-worker", "template": {"metadata": {"labels": labels}}})
        } else {
            json!({"class": "default-worker", "metadata": {"labels": labels}})
        }
    };
    let md_class = worker_class(json!({"pool": "class", "class-only": "x"}));
    let mp_class = worker_class(json!({"pool": "class", "class-mp": "y"}));
    let mut class = json!({"apiVersion": format!("cluster.x-k8s.io/{version}"), "kind": "ClusterClass",
                           "metadata": {"name": "quick-start", "namespace": "default"},
                           "spec": {"controlPlane": {"metadata": {"labels": {"tier": "class", "class-cp": "y"}}},
                                    "workers": {"machineDeployments": [md_class],
                                                "machinePools": [mp_class]}}});
    if machine_infrastructure {
        class["spec"]["controlPlane"]["machineInfrastructure"] =
            json!({"ref": {"kind": "DockerMachineTemplate", "name": "quick-start-control-plane"}});
    }
    class
}

#[test]
fn topology_control_plane_merges_topology_over_class() {
    for version in ["v1beta1", "v1beta2"] {
        for infra in [true, false] {
            let lookup = MapLookup::default()
                .with_object(topology_cluster(version))
                .with_object(quick_start_class(version, infra));
            let kcp = json!({"apiVersion": format!("controlplane.cluster.x-k8s.io/{version}"),
                             "kind": "KubeadmControlPlane",
                             "metadata": {"name": "capi-quickstart-x7k2", "namespace": "default",
                                          "labels": {"cluster.x-k8s.io/cluster-name": "capi-quickstart",
                                                     "topology.cluster.x-k8s.io/owned": ""}},
                             "spec": {"replicas": 3, "version": "v1.31.0",
                                      "kubeadmConfigSpec": {"format": "cloud-config"},
                                      "machineTemplate": control_plane_machine_template(version)}});
            let (_, cp) = run_with("CREATE", kcp, &lookup, METADATA_ONLY);
            let requests: Vec<String> = lookup.requests().iter().map(|r| r.to_string()).collect();
            assert_eq!(
                requests,
                [
                    format!("Cluster default/capi-quickstart (cluster.x-k8s.io/{version})"),
                    format!("ClusterClass default/quick-start (cluster.x-k8s.io/{version})"),
                ]
            );
            let class_ref: &[&str] = match version {
                "v1beta1" => &["spec.topology.class", "spec.topology.classNamespace"],
                _ => &[
                    "spec.topology.classRef.name",
                    "spec.topology.classRef.namespace",
                ],
            };
            assert_eq!(
                masks(&lookup),
                [
                    [
                        class_ref,
                        &[
                            "spec.topology.controlPlane.metadata.annotations",
                            "spec.topology.controlPlane.metadata.labels",
                        ]
                    ]
                    .concat(),
                    vec![
                        "spec.controlPlane.machineInfrastructure",
                        "spec.controlPlane.metadata.annotations",
                        "spec.controlPlane.metadata.labels",
                    ],
                ]
            );
            assert_eq!(
                cp["metadata"]["labels"],
                json!({"cluster.x-k8s.io/cluster-name": "capi-quickstart",
                       "topology.cluster.x-k8s.io/owned": "",
                       "env": "prod", "tier": "topology", "class-cp": "y"})
            );
            assert_eq!(cp["metadata"]["annotations"], json!({"a": "topology"}));
            let expected_template = if infra {
                json!({"labels": {"own": "1", "env": "prod", "tier": "topology", "class-cp": "y"},
                       "annotations": {"a": "topology"}})
            } else {
                json!({"labels": {"own": "1"}})
            };
            assert_eq!(cp["spec"]["machineTemplate"]["metadata"], expected_template);
        }
    }
}

#[test]
fn topology_machine_deployment_uses_its_entry_and_class_metadata_path() {
    for version in ["v1beta1", "v1beta2"] {
        let lookup = MapLookup::default()
            .with_object(topology_cluster(version))
            .with_object(quick_start_class(version, true));
        let md = json!({"apiVersion": format!("cluster.x-k8s.io/{version}"), "kind": "MachineDeployment",
                        "metadata": {"name": "capi-quickstart-md-0-abc", "namespace": "default",
                                     "labels": {"cluster.x-k8s.io/cluster-name": "capi-quickstart",
                                                "topology.cluster.x-k8s.io/owned": "",
                                                "topology.cluster.x-k8s.io/deployment-name": "md-0"}},
                        "spec": {"clusterName": "capi-quickstart",
                                 "selector": {"matchLabels": {"cluster.x-k8s.io/cluster-name": "capi-quickstart"}},
                                 "template": {"spec": template_spec(version)}}});
        let (_, out) = run_with("CREATE", md.clone(), &lookup, METADATA_ONLY);
        let (class_ref, class_metadata): (&[&str], &str) = match version {
            "v1beta1" => (
                &["spec.topology.class", "spec.topology.classNamespace"],
                "spec.workers.machineDeployments.template.metadata",
            ),
            _ => (
                &[
                    "spec.topology.classRef.name",
                    "spec.topology.classRef.namespace",
                ],
                "spec.workers.machineDeployments.metadata",
            ),
        };
        assert_eq!(
            masks(&lookup),
            [
                [
                    class_ref,
                    &[
                        "spec.topology.workers.machineDeployments.class",
                        "spec.topology.workers.machineDeployments.metadata.annotations",
                        "spec.topology.workers.machineDeployments.metadata.labels",
                        "spec.topology.workers.machineDeployments.name",
                    ]
                ]
                .concat(),
                [
                    "spec.workers.machineDeployments.class".to_owned(),
                    format!("{class_metadata}.annotations"),
                    format!("{class_metadata}.labels"),
                ]
                .iter()
                .map(String::as_str)
                .collect(),
            ]
        );
        let labels = json!({"cluster.x-k8s.io/cluster-name": "capi-quickstart",
                            "topology.cluster.x-k8s.io/owned": "",
                            "topology.cluster.x-k8s.io/deployment-name": "md-0",
                            "pool": "md-0-topology", "class-only": "x"});
        assert_eq!(out["metadata"]["labels"], labels);
        assert_eq!(out["metadata"]["annotations"], json!({"owner": "team-a"}));
        assert_eq!(
            out["spec"]["template"]["metadata"],
            json!({"labels": {"pool": "md-0-topology", "class-only": "x"},
                   "annotations": {"owner": "team-a"}})
        );

        // A deployment-name with no topology entry is a skip, not a failure.
        let mut unknown = md;
        unknown["metadata"]["labels"]["topology.cluster.x-k8s.io/deployment-name"] = json!("md-9");
        let (outcome, _) = run("CREATE", unknown, &lookup);
        assert_eq!(outcome, Outcome::allow());
    }
}

#[test]
fn topology_machine_pool_uses_its_pool_entry_and_drops_the_upgrade_annotations() {
    for version in ["v1beta1", "v1beta2"] {
        let lookup = MapLookup::default()
            .with_object(topology_cluster(version))
            .with_object(quick_start_class(version, true));
        let bookkeeping = json!({"cluster.x-k8s.io/cluster-name": "capi-quickstart",
                                 "topology.cluster.x-k8s.io/owned": "",
                                 "topology.cluster.x-k8s.io/pool-name": "mp-0"});
        let mp = json!({"apiVersion": format!("cluster.x-k8s.io/{version}"), "kind": "MachinePool",
                        "metadata": {"name": "capi-quickstart-mp-0-x7b2k", "namespace": "default",
                                     "labels": bookkeeping},
                        "spec": {"clusterName": "capi-quickstart", "replicas": 2,
                                 "template": {"metadata": {"labels": bookkeeping},
                                              "spec": template_spec(version)}}});
        let (_, out) = run_with("CREATE", mp.clone(), &lookup, METADATA_ONLY);
        let list = |prefix: &str| {
            ["class", "metadata.annotations", "metadata.labels"]
                .iter()
                .map(|leaf| format!("{prefix}.machinePools.{leaf}"))
                .collect::<Vec<_>>()
        };
        let class_metadata_masks: Vec<String> = match version {
            "v1beta1" => vec![
                "spec.workers.machinePools.class".into(),
                "spec.workers.machinePools.template.metadata.annotations".into(),
                "spec.workers.machinePools.template.metadata.labels".into(),
            ],
            _ => list("spec.workers"),
        };
        let masks = masks(&lookup);
        assert_eq!(masks[1], class_metadata_masks);
        assert!(
            masks[0].ends_with(
                &[
                    list("spec.topology.workers"),
                    vec!["spec.topology.workers.machinePools.name".into()]
                ]
                .concat()
            ),
            "{masks:?}"
        );
        let mut labels = bookkeeping.clone();
        labels["pool"] = json!("mp-0-topology");
        labels["class-mp"] = json!("y");
        let annotations = json!({"owner": "team-b"});
        assert_eq!(out["metadata"]["labels"], labels);
        assert_eq!(out["metadata"]["annotations"], annotations);
        assert_eq!(
            out["spec"]["template"]["metadata"],
            json!({"labels": labels, "annotations": annotations})
        );

        // A pool-name with no topology entry is a skip, not a failure.
        let mut unknown = mp;
        unknown["metadata"]["labels"]["topology.cluster.x-k8s.io/pool-name"] = json!("mp-9");
        let (outcome, _) = run("CREATE", unknown.clone(), &lookup);
        assert_eq!(outcome, Outcome::allow());
        // Without a pool-name, no rule applies and nothing is read.
        let lookup = MapLookup::default();
        unknown["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove("topology.cluster.x-k8s.io/pool-name");
        assert_eq!(run("CREATE", unknown, &lookup).0, Outcome::allow());
        assert!(lookup.requests().is_empty());
    }
}

#[test]
fn topology_cluster_not_found_stops_after_one_lookup() {
    let lookup = MapLookup::default();
    let md = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
                    "metadata": {"name": "md", "namespace": "default",
                                 "labels": {"cluster.x-k8s.io/cluster-name": "gone",
                                            "topology.cluster.x-k8s.io/owned": "",
                                            "topology.cluster.x-k8s.io/deployment-name": "md-0"}},
                    "spec": {}});
    let (outcome, _) = run("CREATE", md, &lookup);
    assert_eq!(outcome, Outcome::allow());
    assert_eq!(lookup.requests().len(), 1);
}

#[test]
fn topology_malformed_class_is_blamed_on_the_class() {
    let mut class = quick_start_class("v1beta2", false);
    class["spec"]["workers"]["machineDeployments"][0]["metadata"]["labels"] = json!("pool=class");
    let lookup = MapLookup::default()
        .with_object(topology_cluster("v1beta2"))
        .with_object(class);
    let md = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
                    "metadata": {"name": "md", "namespace": "default",
                                 "labels": {"cluster.x-k8s.io/cluster-name": "capi-quickstart",
                                            "topology.cluster.x-k8s.io/owned": "",
                                            "topology.cluster.x-k8s.io/deployment-name": "md-0"}},
                    "spec": {}});
    let (outcome, _) = run("CREATE", md, &lookup);
    assert_eq!(
        outcome.verdict,
        Verdict::Reject {
            message: "cannot propagate Cluster API metadata: parent ClusterClass default/quick-start \
                      (cluster.x-k8s.io/v1beta2) of this MachineDeployment is malformed: \
                      spec.workers.machineDeployments[0].metadata.labels: expected an object, found a string"
                .into(),
            code: 400
        }
    );
}
