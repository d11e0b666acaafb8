//! Machine → Node: which of a Machine's labels and annotations CAPI syncs
//! to its Node (the `node-labels` / `node-annotations` audit annotations,
//! computed after the policy's own mutation), and the warnings for template
//! labels that will never reach a Node. CAPI's own cases
//! (TestGetManagedLabels, TestGetManagedAnnotations) are rows in
//! capi_conformance.rs; these add the warnings, which rows cannot check.

use super::support;

use metadata_propagation_core::lookup::MapLookup;
use serde_json::json;
use support::quick_start::{machine_deployment, machine_spec, run, run_with};

#[test]
fn machine_deployment_template_warns_about_labels_that_never_reach_the_node() {
    let mut md = machine_deployment("v1beta2");
    md["spec"]["template"]["metadata"]["labels"]["node.kubernetes.io/exclude-from-external-load-balancers"] =
        json!("true");
    let lookup = MapLookup::default();
    let (outcome, _) = run("CREATE", md.clone(), &lookup);
    assert_eq!(outcome.warnings.len(), 1);
    assert!(outcome.warnings[0].starts_with(
        "label \"node.kubernetes.io/exclude-from-external-load-balancers\" in \
         spec.template.metadata.labels will not be synced to the Node"
    ));
    assert!(
        outcome.audit_annotations.is_empty(),
        "only Machines get node audit annotations"
    );
    let (synced, _) = run_with(
        "CREATE",
        md,
        &lookup,
        r#"{"capi":{"additionalSyncMachineLabels":["^node\\.kubernetes\\.io/exclude"]}}"#,
    );
    assert!(synced.warnings.is_empty());
}

#[test]
fn machine_node_sync_is_computed_after_propagation() {
    let kcp = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane",
                     "metadata": {"name": "capi-quickstart-cp", "namespace": "default"},
                     "spec": {"machineTemplate": {"metadata": {
                         "labels": {"node-role.kubernetes.io/control-plane": "",
                                    "topology.k8s.io/zone": "eu-1a"},
                         "annotations": {"node.cluster.x-k8s.io/maintenance-window": "sun"}}}}});
    let machine = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
                         "metadata": {"name": "capi-quickstart-cp-x1", "namespace": "default",
                                      "labels": {"cluster.x-k8s.io/cluster-name": "capi-quickstart",
                                                 "cluster.x-k8s.io/control-plane": "",
                                                 "cluster.x-k8s.io/control-plane-name": "capi-quickstart-cp"},
                                      "ownerReferences": [{"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
                                                           "kind": "KubeadmControlPlane", "name": "capi-quickstart-cp",
                                                           "uid": "k", "controller": true}]},
                         "spec": machine_spec("v1beta2", "KubeadmConfig", "DockerMachine")});
    let lookup = MapLookup::default().with_object(kcp);
    let (outcome, m) = run("CREATE", machine, &lookup);
    assert_eq!(
        m["metadata"]["labels"]["node-role.kubernetes.io/control-plane"],
        ""
    );
    assert_eq!(
        outcome.audit_annotations["node-labels"],
        "node-role.kubernetes.io/control-plane"
    );
    assert_eq!(
        outcome.audit_annotations["node-annotations"],
        "node.cluster.x-k8s.io/maintenance-window"
    );
    assert_eq!(outcome.warnings.len(), 1);
    assert!(outcome.warnings[0].contains("\"topology.k8s.io/zone\" in metadata.labels"));
}
