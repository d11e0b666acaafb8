//! CAPI in-place fields (docs/capi.md, "In-place fields: timeouts,
//! minReadySeconds, readiness gates, taints"): what the conformance
//! rows (capi_conformance.rs) do not show on an edge, the look-up masks the
//! rule table's rows give, validate mode's report, the explanation and
//! malformed values. Every output is checked against the real CRD schemas.

use super::support;

use metadata_propagation_core::evaluate::{evaluate, explain};
use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::outcome::{Outcome, Verdict};
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::settings::Settings;
use serde_json::{Value, json};
use support::crd_schema;

const METADATA_ONLY: &str = r#"{"capi": {"inPlaceFields": false}}"#;
const VALIDATE: &str = r#"{"mode": "validate"}"#;

fn run_with(
    operation: &str,
    object: Value,
    lookup: &MapLookup,
    settings: &str,
) -> (Outcome, Value) {
    let settings = Settings::from_json(settings.as_bytes()).unwrap();
    let request = AdmissionRequest::for_object(operation, object);
    let outcome = evaluate(&request, &settings, lookup);
    let mut mutated = request.object.clone();
    if let Verdict::Allow(plan) = &outcome.verdict {
        plan.apply(&mut mutated);
        let mut again = AdmissionRequest::for_object(operation, mutated.clone());
        again.object = mutated.clone();
        let second = evaluate(&again, &settings, lookup);
        assert!(
            second.plan().is_some_and(|p| p.is_empty()),
            "a second evaluation changes {:?}",
            second.verdict
        );
    }
    if let Err(e) = crd_schema::check_output(&request.object, &mutated) {
        panic!("{e}");
    }
    (outcome, mutated)
}

fn run(operation: &str, object: Value, lookup: &MapLookup) -> (Outcome, Value) {
    run_with(operation, object, lookup, "{}")
}

fn masks(lookup: &MapLookup) -> Vec<Vec<String>> {
    lookup
        .field_masks()
        .into_iter()
        .map(|m| m.into_iter().collect())
        .collect()
}

fn reference(version: &str, group: &str, kind: &str) -> Value {
    if version == "v1beta1" {
        json!({"apiVersion": format!("{group}/v1beta1"), "kind": kind, "name": "capi-quickstart-md-0"})
    } else {
        json!({"apiGroup": group, "kind": kind, "name": "capi-quickstart-md-0"})
    }
}

/// A Machine spec (or template spec) as its CRD requires it.
fn machine_spec(version: &str, template: bool) -> Value {
    let (bootstrap, infrastructure) = if template {
        ("KubeadmConfigTemplate", "DockerMachineTemplate")
    } else {
        ("KubeadmConfig", "DockerMachine")
    };
    json!({"clusterName": "capi-quickstart", "version": "v1.31.0",
           "bootstrap": {"configRef": reference(version, "bootstrap.cluster.x-k8s.io", bootstrap)},
           "infrastructureRef": reference(version, "infrastructure.cluster.x-k8s.io", infrastructure)})
}

/// The in-place fields of a MachineDeployment as the quick-start sets them
/// (CAPI test/e2e/data: nodeDrainTimeout and nodeDeletionTimeout, a
/// readiness gate, `minReadySeconds`, deletion order Oldest).
fn machine_deployment(version: &str) -> Value {
    let mut spec = machine_spec(version, true);
    let mut md = json!({
        "apiVersion": format!("cluster.x-k8s.io/{version}"), "kind": "MachineDeployment",
        "metadata": {"name": "capi-quickstart-md-0", "namespace": "default",
                     "labels": {"cluster.x-k8s.io/cluster-name": "capi-quickstart"}},
        "spec": {"clusterName": "capi-quickstart", "replicas": 3,
                 "selector": {"matchLabels": {"cluster.x-k8s.io/cluster-name": "capi-quickstart"}},
                 "template": {"metadata": {"labels": {"env": "prod"}}}}
    });
    spec["readinessGates"] = json!([{"conditionType": "example.com/NetworkReady"}]);
    if version == "v1beta1" {
        spec["nodeDrainTimeout"] = json!("5m");
        spec["nodeDeletionTimeout"] = json!("30s");
        md["spec"]["minReadySeconds"] = json!(20);
        md["spec"]["strategy"] = json!({"type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0, "deletePolicy": "Oldest"}});
        md["spec"]["machineNamingStrategy"] =
            json!({"template": "{{ .machineSet.name }}-{{ .random }}"});
    } else {
        spec["deletion"] =
            json!({"nodeDrainTimeoutSeconds": 300, "nodeDeletionTimeoutSeconds": 30});
        spec["minReadySeconds"] = json!(20);
        md["spec"]["deletion"] = json!({"order": "Oldest"});
        md["spec"]["machineNaming"] = json!({"template": "{{ .machineSet.name }}-{{ .random }}"});
    }
    md["spec"]["template"]["spec"] = spec;
    md
}

/// A MachineSet of that MachineDeployment, as CAPI created it before the
/// MachineDeployment changed: stale timeouts, a gate of its own, no
/// `minReadySeconds`.
fn machine_set(version: &str, md_version: &str) -> Value {
    let mut spec = machine_spec(version, true);
    spec["readinessGates"] = json!([{"conditionType": "user.example.com/Mine"}]);
    if version == "v1beta1" {
        spec["nodeDrainTimeout"] = json!("10s");
        spec["nodeDeletionTimeout"] = json!("30s");
    } else {
        spec["deletion"] = json!({"nodeDrainTimeoutSeconds": 10, "nodeDeletionTimeoutSeconds": 30});
    }
    json!({
        "apiVersion": format!("cluster.x-k8s.io/{version}"), "kind": "MachineSet",
        "metadata": {"name": "capi-quickstart-md-0-7d8f9", "namespace": "default",
                     "labels": {"cluster.x-k8s.io/cluster-name": "capi-quickstart",
                                "cluster.x-k8s.io/deployment-name": "capi-quickstart-md-0",
                                "machine-template-hash": "1234567", "env": "prod"},
                     "ownerReferences": [{"apiVersion": format!("cluster.x-k8s.io/{md_version}"),
                                          "kind": "MachineDeployment", "name": "capi-quickstart-md-0",
                                          "uid": "a1", "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"clusterName": "capi-quickstart", "replicas": 3,
                 "selector": {"matchLabels": {"machine-template-hash": "1234567"}},
                 "template": {"metadata": {"labels": {"env": "prod", "machine-template-hash": "1234567"}},
                              "spec": spec}}
    })
}

/// TestComputeDesiredMS / TestComputeDesiredMachineSet rows cover this edge
/// but for one field: none writes a v1beta1 `machineNamingStrategy`.
#[test]
fn machine_deployment_fields_reach_its_machine_sets_in_both_versions() {
    for version in ["v1beta1", "v1beta2"] {
        let lookup = MapLookup::default().with_object(machine_deployment(version));
        let (_, ms) = run("UPDATE", machine_set(version, version), &lookup);
        let template = &ms["spec"]["template"]["spec"];
        assert_eq!(
            template["readinessGates"],
            json!([{"conditionType": "user.example.com/Mine"}, {"conditionType": "example.com/NetworkReady"}]),
            "{version}: the MachineSet's own gate stays, the MachineDeployment's is appended"
        );
        if version == "v1beta1" {
            assert_eq!(
                template["nodeDrainTimeout"], "5m0s",
                "written as Go writes it"
            );
            assert_eq!(template["nodeDeletionTimeout"], "30s");
            assert_eq!(ms["spec"]["minReadySeconds"], 20);
            assert_eq!(ms["spec"]["deletePolicy"], "Oldest");
            assert_eq!(
                ms["spec"]["machineNamingStrategy"]["template"],
                "{{ .machineSet.name }}-{{ .random }}"
            );
        } else {
            assert_eq!(
                template["deletion"],
                json!({"nodeDrainTimeoutSeconds": 300, "nodeDeletionTimeoutSeconds": 30})
            );
            assert_eq!(template["minReadySeconds"], 20);
            assert_eq!(ms["spec"]["deletion"], json!({"order": "Oldest"}));
            assert_eq!(
                ms["spec"]["machineNaming"]["template"],
                "{{ .machineSet.name }}-{{ .random }}"
            );
        }
    }
}

/// A v1beta1 MachineSet holds `minReadySeconds: 0` as no field. A
/// v1beta2 MachineDeployment's 0 (CAPI v1.11 and later apply it) removes the
/// MachineSet's other value, with a warning; validate mode reports it; a
/// v1beta1 MachineDeployment's 0 (v1.10 omits it from its apply) does not.
#[test]
fn a_v1beta2_parents_zero_min_ready_seconds_removes_a_v1beta1_machine_sets_value() {
    let mut md = machine_deployment("v1beta2");
    md["spec"]["template"]["spec"]["minReadySeconds"] = json!(0);
    let lookup = MapLookup::default().with_object(md);
    let mut ms = machine_set("v1beta1", "v1beta2");
    ms["spec"]["minReadySeconds"] = json!(10);
    let (outcome, mutated) = run("UPDATE", ms.clone(), &lookup);
    assert_eq!(mutated["spec"].get("minReadySeconds"), None);
    assert!(
        outcome.warnings.contains(
            &"spec.minReadySeconds removed (was 10): the parent's \
              spec.template.spec.minReadySeconds is 0, which this apiVersion holds as the field's \
              absence"
                .to_owned()
        ),
        "{:?}",
        outcome.warnings
    );
    let (outcome, _) = run_with("UPDATE", ms.clone(), &lookup, VALIDATE);
    let Verdict::Reject { message, .. } = &outcome.verdict else {
        panic!(
            "validate mode allowed the MachineSet: {:?}",
            outcome.verdict
        );
    };
    assert!(
        message.contains(
            "spec.minReadySeconds: is 10 (expected absent: the parent's 0, held as no field, from \
             MachineDeployment default/capi-quickstart-md-0 (cluster.x-k8s.io/v1beta2) \
             spec.template.spec.minReadySeconds)"
        ),
        "{message}"
    );
    let request = AdmissionRequest::for_object("UPDATE", ms);
    let (_, explanation) = explain(&request, &Settings::default(), &lookup);
    let field = support::capi_part(&explanation)
        .fields
        .iter()
        .find(|f| f.path == "spec.minReadySeconds");
    assert_eq!(field.map(|f| f.change.as_str()), Some("removed"));

    let mut md = machine_deployment("v1beta1");
    md["spec"]["minReadySeconds"] = json!(0);
    let lookup = MapLookup::default().with_object(md);
    let mut ms = machine_set("v1beta1", "v1beta1");
    ms["spec"]["minReadySeconds"] = json!(10);
    let (_, mutated) = run("UPDATE", ms, &lookup);
    assert_eq!(mutated["spec"]["minReadySeconds"], 10);
}

#[test]
fn the_rows_widen_the_look_up_masks_per_parent_version() {
    let lookup = MapLookup::default().with_object(machine_deployment("v1beta1"));
    run("UPDATE", machine_set("v1beta1", "v1beta1"), &lookup);
    // The first look-up is the evaluation's; `run` evaluates twice.
    assert_eq!(
        masks(&lookup)[0],
        [
            "metadata.annotations",
            "spec.machineNamingStrategy",
            "spec.minReadySeconds",
            "spec.strategy.rollingUpdate.deletePolicy",
            "spec.template.metadata.annotations",
            "spec.template.metadata.labels",
            "spec.template.spec.nodeDeletionTimeout",
            "spec.template.spec.nodeDrainTimeout",
            "spec.template.spec.nodeVolumeDetachTimeout",
            "spec.template.spec.readinessGates",
            "spec.template.spec.taints",
        ]
    );
    let lookup = MapLookup::default().with_object(machine_deployment("v1beta2"));
    run("UPDATE", machine_set("v1beta2", "v1beta2"), &lookup);
    assert_eq!(
        masks(&lookup)[0],
        [
            "metadata.annotations",
            "spec.deletion.order",
            "spec.machineNaming",
            "spec.template.metadata.annotations",
            "spec.template.metadata.labels",
            "spec.template.spec.deletion.nodeDeletionTimeoutSeconds",
            "spec.template.spec.deletion.nodeDrainTimeoutSeconds",
            "spec.template.spec.deletion.nodeVolumeDetachTimeoutSeconds",
            "spec.template.spec.minReadySeconds",
            "spec.template.spec.readinessGates",
            "spec.template.spec.taints",
        ]
    );
    let lookup = MapLookup::default().with_object(machine_deployment("v1beta2"));
    run_with(
        "UPDATE",
        machine_set("v1beta2", "v1beta2"),
        &lookup,
        METADATA_ONLY,
    );
    assert_eq!(
        masks(&lookup)[0],
        [
            "metadata.annotations",
            "spec.template.metadata.annotations",
            "spec.template.metadata.labels"
        ]
    );
}

/// A keyed list holding the parent's entries in another order is equal
/// too: no row has one (compute_desired_machine_set.yaml's cross-version
/// row has the equal durations).
#[test]
fn values_equal_by_meaning_are_never_rewritten() {
    let lookup = MapLookup::default().with_object(machine_deployment("v1beta2"));
    let mut ms = machine_set("v1beta1", "v1beta2");
    let spec = &mut ms["spec"];
    spec["template"]["spec"]["nodeDrainTimeout"] = json!("5m");
    spec["template"]["spec"]["readinessGates"] = json!([{"conditionType": "example.com/NetworkReady"}, {"conditionType": "user.example.com/Mine"}]);
    spec["minReadySeconds"] = json!(20);
    spec["deletePolicy"] = json!("Oldest");
    spec["machineNamingStrategy"] = json!({"template": "{{ .machineSet.name }}-{{ .random }}"});
    let (outcome, _) = run("UPDATE", ms, &lookup);
    assert_eq!(
        outcome,
        Outcome::allow(),
        "\"5m\" is 300 seconds; gate order carries no meaning"
    );
}

#[test]
fn validate_mode_names_each_field_deviation_with_its_source() {
    let lookup = MapLookup::default().with_object(machine_deployment("v1beta2"));
    let (outcome, _) = run_with(
        "UPDATE",
        machine_set("v1beta2", "v1beta2"),
        &lookup,
        VALIDATE,
    );
    let Verdict::Reject { message, code } = &outcome.verdict else {
        panic!(
            "validate mode allowed a deviating MachineSet: {:?}",
            outcome.verdict
        );
    };
    assert_eq!(*code, 400);
    let from = |path: &str| {
        format!("MachineDeployment default/capi-quickstart-md-0 (cluster.x-k8s.io/v1beta2) {path}")
    };
    let expected = [
        format!(
            "spec.deletion.order: missing (expected \"Oldest\", from {})",
            from("spec.deletion.order")
        ),
        format!(
            "spec.machineNaming: missing (expected {{\"template\":\"{{{{ .machineSet.name }}}}-{{{{ .random }}}}\"}}, from {})",
            from("spec.machineNaming")
        ),
        format!(
            "spec.template.spec.deletion.nodeDrainTimeoutSeconds: is 10 (expected 300, from {})",
            from("spec.template.spec.deletion.nodeDrainTimeoutSeconds")
        ),
        format!(
            "spec.template.spec.minReadySeconds: missing (expected 20, from {})",
            from("spec.template.spec.minReadySeconds")
        ),
        format!(
            "spec.template.spec.readinessGates[conditionType=\"example.com/NetworkReady\"]: missing \
             (expected {{\"conditionType\":\"example.com/NetworkReady\"}}, from {})",
            from("spec.template.spec.readinessGates")
        ),
    ];
    assert_eq!(
        message.as_str(),
        format!(
            "the object deviates from the metadata propagation contract (validate mode): {}",
            expected.join("; ")
        )
    );
}

#[test]
fn the_explanation_shows_each_field_next_to_the_labels() {
    let lookup = MapLookup::default().with_object(machine_deployment("v1beta2"));
    let request = AdmissionRequest::for_object("UPDATE", machine_set("v1beta2", "v1beta2"));
    let (_, explanation) = explain(&request, &Settings::default(), &lookup);
    let fields: Vec<(&str, &str)> = support::capi_part(&explanation)
        .fields
        .iter()
        .map(|f| (f.path.as_str(), f.change.as_str()))
        .collect();
    assert_eq!(
        fields,
        [
            ("spec.template.spec.minReadySeconds", "added"),
            ("spec.deletion.order", "added"),
            ("spec.machineNaming", "added"),
            (
                "spec.template.spec.readinessGates[conditionType=\"example.com/NetworkReady\"]",
                "added"
            ),
            (
                "spec.template.spec.deletion.nodeDrainTimeoutSeconds",
                "corrected"
            ),
            (
                "spec.template.spec.deletion.nodeVolumeDetachTimeoutSeconds",
                "not set by the parent"
            ),
            (
                "spec.template.spec.deletion.nodeDeletionTimeoutSeconds",
                "unchanged"
            ),
            ("spec.template.spec.taints", "not set by the parent"),
        ]
    );
    let text = explanation.to_string();
    assert!(
        text.contains(
            "  spec.template.spec.deletion.nodeDrainTimeoutSeconds = 300: flows from MachineDeployment \
             default/capi-quickstart-md-0 (cluster.x-k8s.io/v1beta2) \
             spec.template.spec.deletion.nodeDrainTimeoutSeconds (corrected; child had 10)"
        ),
        "{text}"
    );
}

fn machine(version: &str, owner: Value, spec_extra: Value) -> Value {
    let mut spec = machine_spec(version, false);
    for (key, value) in spec_extra.as_object().unwrap() {
        spec[key] = value.clone();
    }
    json!({"apiVersion": format!("cluster.x-k8s.io/{version}"), "kind": "Machine",
           "metadata": {"name": "capi-quickstart-md-0-7d8f9-abcde", "namespace": "default",
                        "labels": {"cluster.x-k8s.io/cluster-name": "capi-quickstart"},
                        "ownerReferences": [owner]},
           "spec": spec})
}

fn owner(api_version: &str, kind: &str, name: &str) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": "b2",
           "controller": true, "blockOwnerDeletion": true})
}

/// On CREATE, and on a v1beta1 Machine: gates and taints from its
/// MachineSet (the TestComputeDesiredMachine rows write them at v1beta2
/// only), and the parent's value over a webhook default.
#[test]
fn machine_set_fields_reach_a_new_machine() {
    for version in ["v1beta1", "v1beta2"] {
        let mut ms = machine_set(version, version);
        ms["spec"]["template"]["spec"]["taints"] = json!([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule", "propagation": "Always"}]);
        if version == "v1beta2" {
            ms["spec"]["template"]["spec"]["minReadySeconds"] = json!(15);
        }
        let lookup = MapLookup::default().with_object(ms);
        let deletion_default = if version == "v1beta1" {
            json!({"nodeDeletionTimeout": "10s"})
        } else {
            json!({"deletion": {"nodeDeletionTimeoutSeconds": 10}})
        };
        let child = machine(
            version,
            owner(
                &format!("cluster.x-k8s.io/{version}"),
                "MachineSet",
                "capi-quickstart-md-0-7d8f9",
            ),
            deletion_default,
        );
        let (_, m) = run("CREATE", child, &lookup);
        assert_eq!(
            m["spec"]["readinessGates"],
            json!([{"conditionType": "user.example.com/Mine"}])
        );
        assert_eq!(m["spec"]["taints"][0]["key"], "dedicated");
        if version == "v1beta1" {
            assert_eq!(m["spec"]["nodeDrainTimeout"], "10s");
            assert_eq!(
                m["spec"]["nodeDeletionTimeout"], "30s",
                "the parent's value over the webhook default"
            );
            assert!(
                m["spec"].get("minReadySeconds").is_none(),
                "v1beta1 Machines have none"
            );
        } else {
            assert_eq!(
                m["spec"]["deletion"],
                json!({"nodeDrainTimeoutSeconds": 10, "nodeDeletionTimeoutSeconds": 30})
            );
            assert_eq!(m["spec"]["minReadySeconds"], 15);
        }
    }
}

fn kubeadm_control_plane(version: &str) -> Value {
    let template = if version == "v1beta1" {
        json!({"infrastructureRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                     "kind": "DockerMachineTemplate", "name": "capi-quickstart-control-plane"},
               "nodeDrainTimeout": "1m", "readinessGates": [{"conditionType": "example.com/CNIReady"}]})
    } else {
        json!({"spec": {"infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io",
                                               "kind": "DockerMachineTemplate", "name": "capi-quickstart-control-plane"},
                        "deletion": {"nodeDrainTimeoutSeconds": 60},
                        "readinessGates": [{"conditionType": "example.com/CNIReady"}]}})
    };
    json!({"apiVersion": format!("controlplane.cluster.x-k8s.io/{version}"), "kind": "KubeadmControlPlane",
           "metadata": {"name": "capi-quickstart-cp", "namespace": "default"},
           "spec": {"replicas": 3, "version": "v1.31.0", "machineTemplate": template,
                    "kubeadmConfigSpec": {}}})
}

/// The KubeadmControlPlane's gate appended after KCP's mandatory ones, in
/// both versions (the Test_ComputeDesiredMachine rows append one at
/// v1beta2 only).
#[test]
fn control_plane_machines_keep_the_gates_kcp_always_adds() {
    for version in ["v1beta1", "v1beta2"] {
        let lookup = MapLookup::default().with_object(kubeadm_control_plane(version));
        let mandatory = json!([{"conditionType": "APIServerPodHealthy"},
                               {"conditionType": "ControllerManagerPodHealthy"},
                               {"conditionType": "SchedulerPodHealthy"},
                               {"conditionType": "EtcdPodHealthy"},
                               {"conditionType": "EtcdMemberHealthy"}]);
        let mut child = machine(
            version,
            owner(
                &format!("controlplane.cluster.x-k8s.io/{version}"),
                "KubeadmControlPlane",
                "capi-quickstart-cp",
            ),
            json!({"readinessGates": mandatory}),
        );
        child["spec"]["minReadySeconds"] = Value::Null;
        child["spec"]
            .as_object_mut()
            .unwrap()
            .remove("minReadySeconds");
        let (_, m) = run("UPDATE", child, &lookup);
        let gates: Vec<&str> = m["spec"]["readinessGates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["conditionType"].as_str().unwrap())
            .collect();
        assert_eq!(
            gates,
            [
                "APIServerPodHealthy",
                "ControllerManagerPodHealthy",
                "SchedulerPodHealthy",
                "EtcdPodHealthy",
                "EtcdMemberHealthy",
                "example.com/CNIReady"
            ]
        );
        let drain = if version == "v1beta1" {
            m["spec"]["nodeDrainTimeout"].clone()
        } else {
            m["spec"]["deletion"]["nodeDrainTimeoutSeconds"].clone()
        };
        assert_eq!(
            drain,
            if version == "v1beta1" {
                json!("1m0s")
            } else {
                json!(60)
            }
        );
    }
}

fn topology_cluster(version: &str) -> Value {
    let (topology, md) = if version == "v1beta1" {
        (
            json!({"class": "quick-start", "version": "v1.31.0",
                "controlPlane": {"replicas": 3, "nodeDrainTimeout": "2m"}}),
            json!({"class": "default-worker", "name": "md-0", "replicas": 2, "minReadySeconds": 5,
                "readinessGates": [{"conditionType": "topology.example.com/Ready"}]}),
        )
    } else {
        (
            json!({"classRef": {"name": "quick-start"}, "version": "v1.31.0",
                "controlPlane": {"replicas": 3, "deletion": {"nodeDrainTimeoutSeconds": 120}}}),
            json!({"class": "default-worker", "name": "md-0", "replicas": 2, "minReadySeconds": 5,
                "readinessGates": [{"conditionType": "topology.example.com/Ready"}]}),
        )
    };
    let mut cluster = json!({"apiVersion": format!("cluster.x-k8s.io/{version}"), "kind": "Cluster",
                             "metadata": {"name": "capi-quickstart", "namespace": "default"},
                             "spec": {"topology": topology}});
    cluster["spec"]["topology"]["workers"] = json!({"machineDeployments": [md]});
    cluster
}

/// The class sets every field the topology sets, differently, and more.
fn quick_start_class(version: &str) -> Value {
    let (cp, worker) = if version == "v1beta1" {
        (
            json!({"nodeDrainTimeout": "10m", "nodeDeletionTimeout": "1m"}),
            json!({"class": "default-worker", "minReadySeconds": 50, "nodeDrainTimeout": "90s",
                "readinessGates": [{"conditionType": "class.example.com/A"}, {"conditionType": "class.example.com/B"}],
                "strategy": {"rollingUpdate": {"deletePolicy": "Newest"}}}),
        )
    } else {
        (
            json!({"deletion": {"nodeDrainTimeoutSeconds": 600, "nodeDeletionTimeoutSeconds": 60}}),
            json!({"class": "default-worker", "minReadySeconds": 50, "deletion": {"nodeDrainTimeoutSeconds": 90, "order": "Newest"},
                "readinessGates": [{"conditionType": "class.example.com/A"}, {"conditionType": "class.example.com/B"}]}),
        )
    };
    json!({"apiVersion": format!("cluster.x-k8s.io/{version}"), "kind": "ClusterClass",
           "metadata": {"name": "quick-start", "namespace": "default"},
           "spec": {"controlPlane": cp, "workers": {"machineDeployments": [worker]}}})
}

fn topology_machine_deployment(version: &str) -> Value {
    let mut md = machine_deployment(version);
    md["metadata"]["labels"] = json!({"cluster.x-k8s.io/cluster-name": "capi-quickstart",
                                      "topology.cluster.x-k8s.io/owned": "",
                                      "topology.cluster.x-k8s.io/deployment-name": "md-0"});
    md
}

/// Field by field at v1beta1 as well, each field at its v1beta1 path (the
/// TestComputeMachineDeployment rows mix topology and class at v1beta1 for
/// deletePolicy only).
#[test]
fn topology_wins_over_the_class_field_by_field_and_a_list_comes_whole_from_one_side() {
    for version in ["v1beta1", "v1beta2"] {
        let lookup = MapLookup::default()
            .with_object(topology_cluster(version))
            .with_object(quick_start_class(version));
        let (_, md) = run("UPDATE", topology_machine_deployment(version), &lookup);
        let spec = &md["spec"];
        assert_eq!(
            spec["template"]["spec"]["readinessGates"],
            json!([{"conditionType": "example.com/NetworkReady"}, {"conditionType": "topology.example.com/Ready"}]),
            "{version}: the topology's list, none of the class's; the MachineDeployment's own gate stays"
        );
        if version == "v1beta1" {
            assert_eq!(spec["minReadySeconds"], 5, "topology");
            assert_eq!(
                spec["template"]["spec"]["nodeDrainTimeout"], "1m30s",
                "class"
            );
            assert_eq!(
                spec["strategy"]["rollingUpdate"]["deletePolicy"], "Newest",
                "class"
            );
            assert_eq!(
                spec["strategy"]["rollingUpdate"]["maxSurge"], 1,
                "the rest of the strategy stays"
            );
        } else {
            assert_eq!(spec["template"]["spec"]["minReadySeconds"], 5, "topology");
            assert_eq!(
                spec["template"]["spec"]["deletion"]["nodeDrainTimeoutSeconds"], 90,
                "class"
            );
            assert_eq!(spec["deletion"]["order"], "Newest", "class");
        }
    }
}

#[test]
fn topology_field_sources_name_the_cluster_or_the_class() {
    let lookup = MapLookup::default()
        .with_object(topology_cluster("v1beta2"))
        .with_object(quick_start_class("v1beta2"));
    let (outcome, _) = run_with(
        "UPDATE",
        topology_machine_deployment("v1beta2"),
        &lookup,
        VALIDATE,
    );
    let Verdict::Reject { message, .. } = &outcome.verdict else {
        panic!("{:?}", outcome.verdict);
    };
    assert!(
        message.contains(
            "spec.template.spec.minReadySeconds: is 20 (expected 5, from Cluster default/capi-quickstart \
             (cluster.x-k8s.io/v1beta2) spec.topology.workers.machineDeployments[name=\"md-0\"].minReadySeconds)"
        ),
        "{message}"
    );
    assert!(
        message.contains(
            "spec.deletion.order: is \"Oldest\" (expected \"Newest\", from ClusterClass default/quick-start \
             (cluster.x-k8s.io/v1beta2) spec.workers.machineDeployments[class=\"default-worker\"].deletion.order)"
        ),
        "{message}"
    );
    assert_eq!(
        masks(&lookup)[1],
        [
            "spec.workers.machineDeployments.class",
            "spec.workers.machineDeployments.deletion.nodeDeletionTimeoutSeconds",
            "spec.workers.machineDeployments.deletion.nodeDrainTimeoutSeconds",
            "spec.workers.machineDeployments.deletion.nodeVolumeDetachTimeoutSeconds",
            "spec.workers.machineDeployments.deletion.order",
            "spec.workers.machineDeployments.metadata.annotations",
            "spec.workers.machineDeployments.metadata.labels",
            "spec.workers.machineDeployments.minReadySeconds",
            "spec.workers.machineDeployments.readinessGates",
            "spec.workers.machineDeployments.taints",
        ]
    );
}

/// Topology and class each setting a timeout at v1beta1 too (the
/// TestComputeControlPlane rows mix the two at v1beta2 only).
#[test]
fn topology_control_plane_gets_the_timeouts_at_its_contract_path() {
    for version in ["v1beta1", "v1beta2"] {
        let lookup = MapLookup::default()
            .with_object(topology_cluster(version))
            .with_object(quick_start_class(version));
        let mut kcp = kubeadm_control_plane(version);
        kcp["metadata"]["labels"] = json!({"cluster.x-k8s.io/cluster-name": "capi-quickstart",
                                           "topology.cluster.x-k8s.io/owned": ""});
        let (_, cp) = run("UPDATE", kcp, &lookup);
        let template = &cp["spec"]["machineTemplate"];
        if version == "v1beta1" {
            assert_eq!(template["nodeDrainTimeout"], "2m0s", "topology");
            assert_eq!(template["nodeDeletionTimeout"], "1m0s", "class");
        } else {
            assert_eq!(
                template["spec"]["deletion"],
                json!({"nodeDrainTimeoutSeconds": 120, "nodeDeletionTimeoutSeconds": 60})
            );
        }
    }
}

#[test]
fn malformed_field_values_are_rejected_naming_the_object_and_field() {
    let mut md = machine_deployment("v1beta1");
    md["spec"]["template"]["spec"]["nodeDrainTimeout"] = json!("five minutes");
    let lookup = MapLookup::default().with_object(md);
    let (outcome, _) = run("UPDATE", machine_set("v1beta1", "v1beta1"), &lookup);
    assert_eq!(
        outcome.verdict,
        Verdict::Reject {
            message: "cannot propagate Cluster API metadata: parent MachineDeployment \
                      default/capi-quickstart-md-0 (cluster.x-k8s.io/v1beta1) of this MachineSet is \
                      malformed: spec.template.spec.nodeDrainTimeout: \"five minutes\" is not a duration \
                      such as \"5m0s\" or \"90s\""
                .into(),
            code: 400
        }
    );

    let mut class = quick_start_class("v1beta2");
    class["spec"]["workers"]["machineDeployments"][0]["deletion"]["order"] = json!(3);
    let lookup = MapLookup::default()
        .with_object(topology_cluster("v1beta2"))
        .with_object(class);
    let (outcome, _) = run("UPDATE", topology_machine_deployment("v1beta2"), &lookup);
    let Verdict::Reject { message, .. } = &outcome.verdict else {
        panic!("{:?}", outcome.verdict);
    };
    assert_eq!(
        message,
        "cannot propagate Cluster API metadata: parent ClusterClass default/quick-start \
         (cluster.x-k8s.io/v1beta2) of this MachineDeployment is malformed: \
         spec.workers.machineDeployments[class=\"default-worker\"].deletion.order: expected a string, found a number"
    );

    let mut ms = machine_set("v1beta2", "v1beta2");
    ms["spec"]["template"]["spec"]["readinessGates"] = json!({"conditionType": "x"});
    let lookup = MapLookup::default().with_object(machine_deployment("v1beta2"));
    let (outcome, _) = run("UPDATE", ms, &lookup);
    assert_eq!(
        outcome.verdict,
        Verdict::Reject {
            message: "cannot propagate Cluster API metadata: spec.template.spec.readinessGates: expected a \
                      list, found an object"
                .into(),
            code: 400
        }
    );
}

/// CAPI never creates a worker whose class the ClusterClass lacks; if one
/// exists, its topology entry still applies, with nothing from the class
/// (docs/capi.md, "Cluster API: what flows where", on a parent not
/// found).
#[test]
fn a_worker_whose_class_the_cluster_class_lacks_gets_its_topology_entry_only() {
    for version in ["v1beta1", "v1beta2"] {
        let mut class = quick_start_class(version);
        class["spec"]["workers"]["machineDeployments"][0]["class"] = json!("another-worker");
        let lookup = MapLookup::default()
            .with_object(topology_cluster(version))
            .with_object(class);
        let before = topology_machine_deployment(version);
        let (_, md) = run("UPDATE", before.clone(), &lookup);
        let spec = &md["spec"]["template"]["spec"];
        assert_eq!(
            spec["readinessGates"],
            json!([{"conditionType": "example.com/NetworkReady"}, {"conditionType": "topology.example.com/Ready"}]),
            "{version}: the topology's gate added"
        );
        let (min_ready, drain) = if version == "v1beta1" {
            (&md["spec"]["minReadySeconds"], "nodeDrainTimeout")
        } else {
            (&spec["minReadySeconds"], "deletion")
        };
        assert_eq!(min_ready, 5, "{version}: the topology's");
        assert_eq!(
            spec[drain], before["spec"]["template"]["spec"][drain],
            "{version}: the class's drain timeout is not there to flow"
        );
    }
}
