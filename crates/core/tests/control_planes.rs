//! Every control plane follows CAPI's control-plane contract
//! (docs/capi.md): a Machine whose controller owner is a kind of group
//! `controlplane.cluster.x-k8s.io`, and an InfraMachine or BootstrapConfig
//! owned by one with or without `controller: true`, get the labels and
//! annotations of its `spec.machineTemplate.metadata`; a Machine also gets
//! the in-place fields, read where the parent's shape holds them. Each
//! provider's parent is built in the shape its CRD serves (crds/, checked
//! here), and each child is one its CRD accepts, before and after.

use super::support::crd_schema;
use super::support::quick_start::{machine_spec, run, run_with};
use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::outcome::Verdict;
use serde_json::{Value, json};

const GROUP: &str = "controlplane.cluster.x-k8s.io";

/// The metadata every parent's machine template carries.
fn template_metadata() -> Value {
    json!({"labels": {"platform.example.com/team": "payments", "node-role.example.com/etcd": "true"},
           "annotations": {"platform.example.com/owner": "team-payments"}})
}

/// An RKE2ControlPlane as CAPRKE2 v0.25.0 serves it: `v1beta2` with the
/// v1beta2-contract machine template, `v1beta1` with the v1beta1 one.
fn rke2(version: &str, in_place: Value) -> Value {
    let template = if version == "v1beta2" {
        let mut spec = json!({"infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io",
                                                     "kind": "DockerMachineTemplate", "name": "cp"}});
        if !in_place.is_null() {
            spec["deletion"] = in_place;
        }
        json!({"metadata": template_metadata(), "spec": spec})
    } else {
        let mut template = json!({"metadata": template_metadata(),
                                  "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                                        "kind": "DockerMachineTemplate", "name": "cp"}});
        if let Some(fields) = in_place.as_object() {
            template.as_object_mut().unwrap().extend(fields.clone());
        }
        template
    };
    json!({"apiVersion": format!("{GROUP}/{version}"), "kind": "RKE2ControlPlane",
           "metadata": {"name": "rke2-cp", "namespace": "default"},
           "spec": {"version": "v1.31.4+rke2r1", "rolloutStrategy": {"type": "RollingUpdate"},
                    "machineTemplate": template}})
}

/// A K0sControlPlane as k0smotron v2.1.0 serves it: the v1beta1-contract
/// machine template under both its names, `v1beta1` and `v1beta2`.
fn k0s(version: &str) -> Value {
    json!({"apiVersion": format!("{GROUP}/{version}"), "kind": "K0sControlPlane",
           "metadata": {"name": "k0s-cp", "namespace": "default"},
           "spec": {"version": "v1.31.2+k0s.0", "k0sConfigSpec": {},
                    "machineTemplate": {"metadata": template_metadata(),
                                        "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                                              "kind": "DockerMachineTemplate", "name": "cp"}}}})
}

/// A KairosControlPlane as its provider v0.1.0-alpha.2 serves it: `v1beta2`
/// only, with the v1beta1-contract machine template and its
/// `nodeDrainTimeout`.
fn kairos() -> Value {
    json!({"apiVersion": format!("{GROUP}/v1beta2"), "kind": "KairosControlPlane",
           "metadata": {"name": "kairos-cp", "namespace": "default"},
           "spec": {"version": "v1.31.0", "kairosConfigTemplate": {"name": "kairos-cp"},
                    "machineTemplate": {"metadata": template_metadata(), "nodeDrainTimeout": "90s",
                                        "infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                                              "kind": "DockerMachineTemplate", "name": "cp"}}}})
}

/// A TalosControlPlane (v0.5.12): no `spec.machineTemplate` at all.
fn talos() -> Value {
    json!({"apiVersion": format!("{GROUP}/v1alpha3"), "kind": "TalosControlPlane",
           "metadata": {"name": "talos-cp", "namespace": "default"},
           "spec": {"version": "v1.31.0",
                    "controlPlaneConfig": {"controlplane": {"generateType": "controlplane"}},
                    "infrastructureTemplate": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                               "kind": "DockerMachineTemplate", "name": "cp"}}})
}

/// A MicroK8sControlPlane (v0.6.11): a machine template without metadata.
fn microk8s() -> Value {
    json!({"apiVersion": format!("{GROUP}/v1beta1"), "kind": "MicroK8sControlPlane",
           "metadata": {"name": "microk8s-cp", "namespace": "default"},
           "spec": {"version": "v1.31.0",
                    "machineTemplate": {"infrastructureTemplate": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                                                   "kind": "DockerMachineTemplate", "name": "cp"}}}})
}

/// An ownerReference to `parent`.
fn owner(parent: &Value, controller: bool) -> Value {
    json!({"apiVersion": parent["apiVersion"], "kind": parent["kind"], "name": parent["metadata"]["name"],
           "uid": "8d0f4c6e-1b7a-4a63-9a52-2f0c5d1e7b90", "controller": controller, "blockOwnerDeletion": true})
}

/// A Machine at `version` as `parent`'s controller creates it: the
/// bookkeeping labels every control plane sets, and `extra` labels and
/// annotations of its own.
fn machine(version: &str, parent: &Value, labels: Value, annotations: Value) -> Value {
    let mut own =
        json!({"cluster.x-k8s.io/cluster-name": "c1", "cluster.x-k8s.io/control-plane": ""});
    own.as_object_mut()
        .unwrap()
        .extend(labels.as_object().unwrap().clone());
    let mut machine = json!({"apiVersion": format!("cluster.x-k8s.io/{version}"), "kind": "Machine",
                             "metadata": {"name": "cp-x7k2p", "namespace": "default", "labels": own,
                                          "ownerReferences": [owner(parent, true)]},
                             "spec": machine_spec(version, "KubeadmConfig", "DockerMachine")});
    if annotations.as_object().is_some_and(|a| !a.is_empty()) {
        machine["metadata"]["annotations"] = annotations;
    }
    machine
}

fn assert_valid(object: &Value) {
    assert_eq!(crd_schema::failures(object), Some(vec![]), "{object}");
}

/// The labels and annotations the template gives a child that had
/// `labels` (with the bookkeeping every control plane sets) and no
/// annotations.
fn expected_labels(extra: Value) -> Value {
    let mut labels = json!({"cluster.x-k8s.io/cluster-name": "c1", "cluster.x-k8s.io/control-plane": "",
                            "platform.example.com/team": "payments", "node-role.example.com/etcd": "true"});
    labels
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    labels
}

#[test]
fn every_provider_s_machines_get_the_machine_template_metadata() {
    let parents = [
        rke2("v1beta2", Value::Null),
        rke2("v1beta1", Value::Null),
        k0s("v1beta2"),
        k0s("v1beta1"),
        kairos(),
    ];
    for parent in parents {
        assert_valid(&parent);
        let lookup = MapLookup::default().with_object(parent.clone());
        for version in ["v1beta1", "v1beta2"] {
            let child = machine(version, &parent, json!({}), json!({}));
            assert_valid(&child);
            let (outcome, stored) = run("CREATE", child, &lookup);
            let kind = parent["kind"].as_str().unwrap();
            assert!(
                outcome.warnings.is_empty(),
                "{kind}: {:?}",
                outcome.warnings
            );
            assert_eq!(
                stored["metadata"]["labels"],
                expected_labels(json!({})),
                "{kind} {version}"
            );
            assert_eq!(
                stored["metadata"]["annotations"],
                json!({"platform.example.com/owner": "team-payments"}),
                "{kind} {version}"
            );
            // An UPDATE that drifted a label and dropped the annotation is
            // made what the template says again.
            let mut drifted = stored.clone();
            drifted["metadata"]["labels"]["platform.example.com/team"] = json!("checkout");
            drifted["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("annotations");
            let (_, corrected) = run("UPDATE", drifted, &lookup);
            assert_eq!(
                corrected["metadata"], stored["metadata"],
                "{kind} {version}"
            );
        }
    }
}

#[test]
fn a_drifted_machine_is_corrected_on_update_and_rejected_in_validate_mode() {
    let parent = rke2("v1beta2", Value::Null);
    let lookup = MapLookup::default().with_object(parent.clone());
    let drifted = machine(
        "v1beta2",
        &parent,
        json!({"platform.example.com/team": "checkout", "node-role.example.com/etcd": "true"}),
        json!({"platform.example.com/owner": "team-payments"}),
    );
    let (_, stored) = run("UPDATE", drifted.clone(), &lookup);
    assert_eq!(stored["metadata"]["labels"], expected_labels(json!({})));
    let (outcome, _) = run_with("UPDATE", drifted, &lookup, r#"{"mode": "validate"}"#);
    let Verdict::Reject { message, .. } = &outcome.verdict else {
        panic!("validate mode allowed a drifted Machine: {outcome:?}");
    };
    // As for a KubeadmControlPlane's Machines: the path, the found and the
    // expected value.
    assert!(
        message.contains(
            r#"metadata.labels: "platform.example.com/team" is "checkout" (expected "payments")"#
        ),
        "{message}"
    );
}

#[test]
fn each_provider_s_bookkeeping_keys_keep_the_child_s_value() {
    // What each provider sets after copying the template: the template
    // naming the same keys changes none of them (k0smotron's
    // control-plane "true" included, which CAPI accepts).
    let mut parent = rke2("v1beta2", Value::Null);
    parent["spec"]["machineTemplate"]["metadata"] = json!({
        "labels": {"cluster.x-k8s.io/control-plane": "", "k0smotron.io/control-plane-worker-enabled": "false",
                   "cluster.x-k8s.io/control-plane-name": "other", "platform.example.com/team": "payments"},
        "annotations": {"controlplane.cluster.x-k8s.io/rke2-server-configuration": "{}",
                        "pre-terminate.delete.hook.machine.cluster.x-k8s.io/rke2-cleanup": "other",
                        "pre-drain.delete.hook.machine.cluster.x-k8s.io/rke2-lb-exclusion": "other",
                        "k0s.controlplane.cluster.x-k8s.io/k0s-config": "other",
                        "platform.example.com/owner": "team-payments"}});
    assert_valid(&parent);
    let lookup = MapLookup::default().with_object(parent.clone());
    let own_annotations = json!({
        "controlplane.cluster.x-k8s.io/rke2-server-configuration": "{\"cni\":\"calico\"}",
        "pre-terminate.delete.hook.machine.cluster.x-k8s.io/rke2-cleanup": "",
        "pre-drain.delete.hook.machine.cluster.x-k8s.io/rke2-lb-exclusion": "",
        "k0s.controlplane.cluster.x-k8s.io/k0s-config": "{}"});
    let mut child = machine("v1beta2", &parent, json!({}), own_annotations.clone());
    child["metadata"]["labels"] = json!({"cluster.x-k8s.io/cluster-name": "c1",
                                         "cluster.x-k8s.io/control-plane": "true",
                                         "cluster.x-k8s.io/control-plane-name": "rke2-cp",
                                         "k0smotron.io/control-plane-worker-enabled": "true"});
    let (_, stored) = run("CREATE", child, &lookup);
    assert_eq!(
        stored["metadata"]["labels"],
        json!({"cluster.x-k8s.io/cluster-name": "c1", "cluster.x-k8s.io/control-plane": "true",
               "cluster.x-k8s.io/control-plane-name": "rke2-cp",
               "k0smotron.io/control-plane-worker-enabled": "true",
               "platform.example.com/team": "payments"})
    );
    let mut annotations = own_annotations;
    annotations["platform.example.com/owner"] = json!("team-payments");
    assert_eq!(stored["metadata"]["annotations"], annotations);
}

#[test]
fn infra_machines_and_bootstrap_configs_follow_a_control_plane_owner_either_way() {
    let docker_machine = |parent: &Value, controller: bool| {
        json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DockerMachine",
               "metadata": {"name": "cp-x7k2p", "namespace": "default",
                            "labels": {"cluster.x-k8s.io/cluster-name": "c1", "cluster.x-k8s.io/control-plane": ""},
                            "ownerReferences": [owner(parent, controller)]},
               "spec": {}})
    };
    // Kairos creates both with `controller: true`, CAPRKE2 and KCP without.
    for (parent, controller) in [(kairos(), true), (rke2("v1beta2", Value::Null), false)] {
        let lookup = MapLookup::default().with_object(parent.clone());
        let child = docker_machine(&parent, controller);
        assert_valid(&child);
        let (_, stored) = run("CREATE", child, &lookup);
        assert_eq!(
            stored["metadata"]["labels"],
            expected_labels(json!({})),
            "{}",
            parent["kind"]
        );
    }
    let parent = rke2("v1beta2", Value::Null);
    let rke2_config = json!({"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta2", "kind": "RKE2Config",
                             "metadata": {"name": "rke2-cp-f2x9q", "namespace": "default",
                                          "labels": {"cluster.x-k8s.io/cluster-name": "c1",
                                                     "cluster.x-k8s.io/control-plane": ""},
                                          "ownerReferences": [owner(&parent, false)]},
                             "spec": {}});
    assert_valid(&rke2_config);
    let (_, stored) = run(
        "CREATE",
        rke2_config,
        &MapLookup::default().with_object(parent),
    );
    assert_eq!(stored["metadata"]["labels"], expected_labels(json!({})));
    assert_eq!(
        stored["metadata"]["annotations"],
        json!({"platform.example.com/owner": "team-payments"})
    );
}

#[test]
fn in_place_fields_are_read_where_the_parent_s_shape_holds_them() {
    // (parent, the Machine's v1beta2 spec.deletion it gives)
    let cases = [
        // v1beta2 contract shape under a v1beta2 name
        (
            rke2("v1beta2", json!({"nodeDrainTimeoutSeconds": 45})),
            json!({"nodeDrainTimeoutSeconds": 45}),
        ),
        // v1beta1 contract shape under a v1beta1 name
        (
            rke2("v1beta1", json!({"nodeDrainTimeout": "1m"})),
            json!({"nodeDrainTimeoutSeconds": 60}),
        ),
        // v1beta1 contract shape under a v1beta2 name: read by shape
        (kairos(), json!({"nodeDrainTimeoutSeconds": 90})),
    ];
    for (parent, deletion) in cases {
        assert_valid(&parent);
        let lookup = MapLookup::default().with_object(parent.clone());
        let (_, stored) = run(
            "CREATE",
            machine("v1beta2", &parent, json!({}), json!({})),
            &lookup,
        );
        assert_eq!(stored["spec"]["deletion"], deletion, "{}", parent["kind"]);
        // A kind whose version names its shape (RKE2ControlPlane) is asked
        // for that shape's paths; another (KairosControlPlane, a v1beta1
        // shape under v1beta2) for both and the path that tells them apart.
        let masks = &lookup.field_masks()[0];
        let probed = parent["kind"] == "KairosControlPlane";
        let v1beta2 = parent["apiVersion"].as_str().unwrap().ends_with("v1beta2");
        assert_eq!(
            masks.contains("spec.machineTemplate.spec.infrastructureRef"),
            probed,
            "{masks:?}"
        );
        assert_eq!(
            masks.contains("spec.machineTemplate.nodeDrainTimeout"),
            probed || !v1beta2,
            "{masks:?}"
        );
        assert_eq!(
            masks.contains("spec.machineTemplate.spec.deletion.nodeDrainTimeoutSeconds"),
            probed || v1beta2,
            "{masks:?}"
        );
    }
}

#[test]
fn control_planes_without_the_contract_path_leave_their_objects_alone() {
    for parent in [talos(), microk8s()] {
        assert_valid(&parent);
        let lookup = MapLookup::default().with_object(parent.clone());
        for version in ["v1beta1", "v1beta2"] {
            let child = machine(version, &parent, json!({}), json!({}));
            let (outcome, stored) = run("CREATE", child.clone(), &lookup);
            assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
            assert_eq!(stored, child, "{} {version}", parent["kind"]);
        }
    }
}

/// A Cluster at `version` whose topology sets every in-place field a
/// control plane can take, and its ClusterClass, which declares machine
/// infrastructure (so the machine template's metadata flows too). The
/// policy reads them at its child's version, as the API server serves them.
fn topology_parents(version: &str) -> MapLookup {
    let taints = json!([{"key": "example.com/dedicated", "value": "control-plane",
                         "effect": "NoSchedule", "propagation": "Always"}]);
    let gates = json!([{"conditionType": "example.com/CNIReady"}]);
    let labels = json!({"labels": {"platform.example.com/team": "payments"}});
    let v1beta1 = version == "v1beta1";
    let topology = if v1beta1 {
        json!({"class": "cp-class", "version": "v1.31.0",
               "controlPlane": {"replicas": 3, "metadata": labels, "nodeDrainTimeout": "2m",
                                "nodeVolumeDetachTimeout": "5m", "nodeDeletionTimeout": "30s",
                                "readinessGates": gates, "taints": taints}})
    } else {
        json!({"classRef": {"name": "cp-class"}, "version": "v1.31.0",
               "controlPlane": {"replicas": 3, "metadata": labels,
                                "deletion": {"nodeDrainTimeoutSeconds": 120, "nodeVolumeDetachTimeoutSeconds": 300,
                                             "nodeDeletionTimeoutSeconds": 30},
                                "readinessGates": gates, "taints": taints}})
    };
    let template = |group: &str, kind: &str| json!({"apiVersion": format!("{group}/{version}"), "kind": kind, "name": "cp"});
    let (control_plane, infrastructure) = (
        template(GROUP, "KubeadmControlPlaneTemplate"),
        template("infrastructure.cluster.x-k8s.io", "DockerMachineTemplate"),
    );
    let class_control_plane = if v1beta1 {
        json!({"ref": control_plane, "machineInfrastructure": {"ref": infrastructure}})
    } else {
        json!({"templateRef": control_plane, "machineInfrastructure": {"templateRef": infrastructure}})
    };
    let api_version = format!("cluster.x-k8s.io/{version}");
    MapLookup::default()
        .with_object(json!({"apiVersion": api_version, "kind": "Cluster",
                            "metadata": {"name": "c1", "namespace": "default"},
                            "spec": {"topology": topology}}))
        .with_object(json!({"apiVersion": api_version, "kind": "ClusterClass",
                            "metadata": {"name": "cp-class", "namespace": "default"},
                            "spec": {"controlPlane": class_control_plane}}))
}

/// `control_plane` as the topology controller creates it for Cluster `c1`.
fn topology_owned(mut control_plane: Value) -> Value {
    control_plane["metadata"]["labels"] =
        json!({"cluster.x-k8s.io/cluster-name": "c1", "topology.cluster.x-k8s.io/owned": ""});
    control_plane
}

/// An AWSManagedControlPlane (CAPA v2.11, EKS): no machine template.
fn eks() -> Value {
    json!({"apiVersion": format!("{GROUP}/v1beta2"), "kind": "AWSManagedControlPlane",
           "metadata": {"name": "eks-cp", "namespace": "default"},
           "spec": {"region": "eu-west-1", "version": "v1.31"}})
}

/// CAPI writes a topology control plane's in-place fields whatever its
/// kind, and the API server drops what the kind's CRD lacks; the policy
/// writes only what the CRD declares (capi/rules/schema_gaps.rs), so the
/// object it returns is one the cluster stores as it is, and validate mode
/// accepts it: otherwise every write would be refused, for ever.
#[test]
fn a_topology_control_plane_gets_only_the_fields_its_crd_declares() {
    let gates = json!([{"conditionType": "example.com/CNIReady"}]);
    let taints = json!([{"key": "example.com/dedicated", "value": "control-plane",
                         "effect": "NoSchedule", "propagation": "Always"}]);
    // (control plane, its machine template as the policy leaves it: the
    // fields other than metadata and the infrastructure reference)
    let cases = [
        (
            rke2("v1beta2", Value::Null),
            json!({"spec": {"deletion": {"nodeDrainTimeoutSeconds": 120,
            "nodeVolumeDetachTimeoutSeconds": 300, "nodeDeletionTimeoutSeconds": 30}}}),
        ),
        (
            rke2("v1beta1", Value::Null),
            json!({"nodeDrainTimeout": "2m0s",
            "nodeVolumeDetachTimeout": "5m0s", "nodeDeletionTimeout": "30s"}),
        ),
        (k0s("v1beta1"), json!({})),
        (k0s("v1beta2"), json!({})),
        (kairos(), json!({"nodeDrainTimeout": "90s"})),
        (eks(), Value::Null),
    ];
    for (control_plane, kept) in cases {
        let kind = format!("{} {}", control_plane["kind"], control_plane["apiVersion"]);
        let version = control_plane["apiVersion"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap();
        let lookup = topology_parents(version);
        let child = topology_owned(control_plane);
        assert_valid(&child);
        let (outcome, stored) = run("CREATE", child.clone(), &lookup);
        assert!(matches!(outcome.verdict, Verdict::Allow(_)), "{kind}");
        assert_valid(&stored);
        let template = &stored["spec"]["machineTemplate"];
        if kept.is_null() {
            assert_eq!(template, &Value::Null, "{kind}");
        } else {
            let mut rest = template.clone();
            let rest = rest.as_object_mut().unwrap();
            let metadata = rest.remove("metadata").unwrap();
            assert_eq!(
                metadata["labels"]["platform.example.com/team"], "payments",
                "{kind}"
            );
            rest.remove("infrastructureRef");
            if let Some(spec) = rest.get_mut("spec").and_then(Value::as_object_mut) {
                spec.remove("infrastructureRef");
            }
            assert_eq!(Value::Object(rest.clone()), kept, "{kind}");
        }
        assert_eq!(
            stored["metadata"]["labels"]["platform.example.com/team"], "payments",
            "{kind}"
        );
        // The stored object is what mutate mode returns, unchanged.
        let (outcome, _) = run_with("UPDATE", stored.clone(), &lookup, r#"{"mode": "validate"}"#);
        assert!(
            matches!(outcome.verdict, Verdict::Allow(_)),
            "{kind}: {:?}",
            outcome.verdict
        );
    }
    // KubeadmControlPlane, the reference, declares every field.
    let kcp = |version: &str| {
        let template = if version == "v1beta1" {
            json!({"infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                          "kind": "DockerMachineTemplate", "name": "cp"}})
        } else {
            json!({"spec": {"infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io",
                                                   "kind": "DockerMachineTemplate", "name": "cp"}}})
        };
        json!({"apiVersion": format!("{GROUP}/{version}"), "kind": "KubeadmControlPlane",
               "metadata": {"name": "kcp", "namespace": "default"},
               "spec": {"replicas": 3, "version": "v1.31.0", "machineTemplate": template, "kubeadmConfigSpec": {}}})
    };
    for version in ["v1beta1", "v1beta2"] {
        let lookup = topology_parents(version);
        let (_, stored) = run("CREATE", topology_owned(kcp(version)), &lookup);
        let template = &stored["spec"]["machineTemplate"];
        let (fields, drain) = if version == "v1beta1" {
            (template, &template["nodeDrainTimeout"])
        } else {
            (
                &template["spec"],
                &template["spec"]["deletion"]["nodeDrainTimeoutSeconds"],
            )
        };
        assert_eq!(
            drain,
            &if version == "v1beta1" {
                json!("2m0s")
            } else {
                json!(120)
            }
        );
        assert_eq!(
            (&fields["readinessGates"], &fields["taints"]),
            (&gates, &taints),
            "{version}"
        );
    }
}
