//! The Cluster API quick-start's worker objects, as their CRDs accept them,
//! and one run of the core on a child: the fixtures the CAPI metadata, node
//! sync and settings tests share.

use metadata_propagation_core::evaluate::evaluate;
use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::outcome::{Outcome, Verdict};
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::settings::Settings;
use serde_json::{Value, json};

/// Evaluates `object` under the default settings: see [`run_with`].
pub(crate) fn run(operation: &str, object: Value, lookup: &MapLookup) -> (Outcome, Value) {
    run_with(operation, object, lookup, "{}")
}

/// Evaluates `object` under `settings`, applies the plan when allowed, and
/// checks the output against the object's CRD: (outcome, mutated object).
pub(crate) fn run_with(
    operation: &str,
    object: Value,
    lookup: &MapLookup,
    settings: &str,
) -> (Outcome, Value) {
    let settings = Settings::from_json(settings.as_bytes()).unwrap();
    let req = AdmissionRequest::for_object(operation, object);
    let outcome = evaluate(&req, &settings, lookup);
    let mut mutated = req.object.clone();
    if let Verdict::Allow(plan) = &outcome.verdict {
        plan.apply(&mut mutated);
    }
    if let Err(e) = super::crd_schema::check_output(&req.object, &mutated) {
        panic!("{e}");
    }
    (outcome, mutated)
}

/// A Machine's `spec`, or a template's `spec.template.spec`, with what its
/// CRD requires: a bootstrap config and an infrastructure reference (v1beta1
/// references name an apiVersion, v1beta2 ones an apiGroup). The children
/// built here are objects their CRD accepts, so [`run_with`]'s schema check
/// on the output means something.
pub(crate) fn machine_spec(
    version: &str,
    bootstrap_kind: &str,
    infrastructure_kind: &str,
) -> Value {
    let reference = |group: &str, kind: &str| {
        if version == "v1beta1" {
            json!({"apiVersion": format!("{group}/v1beta1"), "kind": kind, "name": "capi-quickstart-md-0"})
        } else {
            json!({"apiGroup": group, "kind": kind, "name": "capi-quickstart-md-0"})
        }
    };
    json!({"clusterName": "capi-quickstart", "version": "v1.31.0",
           "bootstrap": {"configRef": reference("bootstrap.cluster.x-k8s.io", bootstrap_kind)},
           "infrastructureRef": reference("infrastructure.cluster.x-k8s.io", infrastructure_kind)})
}

/// A MachineDeployment's or MachineSet's `spec.template.spec`.
pub(crate) fn template_spec(version: &str) -> Value {
    machine_spec(version, "KubeadmConfigTemplate", "DockerMachineTemplate")
}

/// The quick-start's worker MachineDeployment: template labels (one CAPI
/// syncs to the Node), a top-level label that never flows, and annotations
/// of which CAPI copies only some.
pub(crate) fn machine_deployment(version: &str) -> Value {
    json!({
        "apiVersion": format!("cluster.x-k8s.io/{version}"),
        "kind": "MachineDeployment",
        "metadata": {
            "name": "capi-quickstart-md-0", "namespace": "default",
            "labels": {"cluster.x-k8s.io/cluster-name": "capi-quickstart", "md-only": "never-flows"},
            "annotations": {
                "machinedeployment.clusters.x-k8s.io/revision": "3",
                "kubectl.kubernetes.io/last-applied-configuration": "{}",
                "platform.example.com/owner": "team-a"
            }
        },
        "spec": {
            "clusterName": "capi-quickstart", "replicas": 3,
            "selector": {"matchLabels": {"cluster.x-k8s.io/cluster-name": "capi-quickstart"}},
            "template": {
                "metadata": {
                    "labels": {"cluster.x-k8s.io/cluster-name": "capi-quickstart", "env": "prod",
                               "node-role.kubernetes.io/worker": ""},
                    "annotations": {"platform.example.com/cost-center": "42"}
                },
                "spec": template_spec(version)
            }
        }
    })
}

/// A MachineSet of [`machine_deployment`], owned by it, as CAPI created it
/// before the MachineDeployment changed: a stale `env`, a label of its own.
pub(crate) fn machine_set(version: &str) -> Value {
    json!({
        "apiVersion": format!("cluster.x-k8s.io/{version}"),
        "kind": "MachineSet",
        "metadata": {
            "name": "capi-quickstart-md-0-7d8f9", "namespace": "default",
            "labels": {"cluster.x-k8s.io/cluster-name": "capi-quickstart",
                       "cluster.x-k8s.io/deployment-name": "capi-quickstart-md-0",
                       "machine-template-hash": "1234567", "env": "staging", "user/added": "keep"},
            "annotations": {"machinedeployment.clusters.x-k8s.io/revision": "3"},
            "ownerReferences": [{"apiVersion": format!("cluster.x-k8s.io/{version}"), "kind": "MachineDeployment",
                                 "name": "capi-quickstart-md-0", "uid": "a1", "controller": true,
                                 "blockOwnerDeletion": true}]
        },
        "spec": {
            "clusterName": "capi-quickstart", "replicas": 3,
            "selector": {"matchLabels": {"machine-template-hash": "1234567"}},
            "template": {"metadata": {"labels": {"machine-template-hash": "1234567"}},
                         "spec": template_spec(version)}
        },
        "status": {"replicas": 3}
    })
}
