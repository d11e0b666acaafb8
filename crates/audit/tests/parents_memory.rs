//! What a live audit keeps of each possible parent, under the test bed's
//! three policies (those `make bench-live-audit` audits with): the
//! Machines of a cluster, kept for the look-ups of their InfraMachines and
//! of any managed resource they might compose (every kind's labels and
//! annotations). Siblings carry the same labels and share one view, and
//! each parent takes its identity and a place in a table that grows a
//! chunk at a time: about 140 bytes a Machine, where a view of its own
//! took about 390.

mod counting;

use std::sync::atomic::Ordering;

use cluster_audit::AuditSettings;
use cluster_audit::live::Parents;
use metadata_propagation_core::lookup::ObjectRef;
use metadata_propagation_core::projection::Projection;
use metadata_propagation_core::request::GroupVersionKind;
use serde_json::{Value, json};

use counting::{LIVE, measuring};

/// The test bed's policies' settings (cluster/policies, examples).
const SETTINGS: [&str; 3] = [
    r#"{"capi": {"inPlaceFields": true}, "cloudTags": {"capiInfrastructure": true,
        "propagatingLabels": ["environment", "cost-center", "acme.io/team"]}}"#,
    r#"{"cloudTags": {"propagatingLabels": ["platform/env", "platform/cost-center"],
        "providerPath": "spec.parameters.provider"}}"#,
    r#"{"cloudTags": {"managedResources": {"families": ["aws", "azure", "gcp"]},
        "propagatingLabels": ["environment", "cost-center", "acme.io/team"],
        "tagKeys": {"acme.io/team": "team"}}}"#,
];

fn kind(api_version: &str, kind: &str) -> GroupVersionKind {
    let (group, version) = api_version.split_once('/').unwrap();
    GroupVersionKind {
        group: group.to_owned(),
        version: version.to_owned(),
        kind: kind.to_owned(),
    }
}

/// Machine `i` of a cluster of `sets` MachineSets, as the bench stores it:
/// the labels its MachineSet's template propagates, the same for the five
/// Machines of a set.
fn machine(i: usize, sets: usize) -> Value {
    let set = i % sets;
    let (cluster, md) = (format!("c{}", set / 4), format!("md{set}"));
    json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
        "metadata": {"name": format!("m{i:06}"), "namespace": "bench", "uid": format!("uid-m{i}"),
            "resourceVersion": "4711", "generation": 1, "creationTimestamp": "2026-11-29T00:00:00Z",
            "labels": {"cluster.x-k8s.io/cluster-name": cluster, "cluster.x-k8s.io/deployment-name": md,
                       "cluster.x-k8s.io/set-name": format!("{md}-ms"), "cost-center": "cc-pool",
                       "nodepool": md},
            "annotations": {"pre-drain.delete.hook.machine.cluster.x-k8s.io/wait-for-volumes": "storage-operator"},
            "ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
                "name": format!("{md}-ms"), "uid": format!("uid-ms{set}"), "controller": true}],
            "managedFields": [{"manager": "manager", "operation": "Update", "apiVersion": "v1",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {}}}}]},
        "spec": {"clusterName": cluster, "version": "v1.34.4", "bootstrap": {"dataSecretName": "boot"},
            "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSMachine",
                                  "name": format!("m{i:06}")}}})
}

/// The bytes `Parents` holds after keeping `n` Machines, five to a
/// MachineSet, and the parents themselves.
fn kept(n: usize) -> (usize, Parents) {
    let settings: Vec<AuditSettings> = (SETTINGS.iter())
        .map(|s| AuditSettings::from_json(s.as_bytes()).unwrap())
        .collect();
    let kinds = [
        kind("cluster.x-k8s.io/v1beta2", "Machine"),
        kind("infrastructure.cluster.x-k8s.io/v1beta2", "AWSMachine"),
        kind("ec2.aws.m.upbound.io/v1beta1", "VPC"),
    ];
    let before = LIVE.load(Ordering::Relaxed);
    let mut parents = Parents::for_kinds(&settings, &kinds);
    for i in 0..n {
        parents.keep(&machine(i, n / 5));
    }
    (LIVE.load(Ordering::Relaxed) - before, parents)
}

#[test]
fn a_possible_parent_keeps_its_identity_and_shares_its_view_with_its_siblings() {
    let _alone = measuring();
    let (small, _) = kept(2_000);
    let (large, parents) = kept(20_000);
    let per_parent = (large - small) / 18_000;
    eprintln!("{small} bytes for 2,000 Machines, {large} for 20,000: {per_parent} bytes a Machine");
    assert!(per_parent <= 170, "{per_parent} bytes a Machine");

    // Each is still answered from its own view.
    let (first, last) = (machine(0, 4_000), machine(19_999, 4_000));
    let labels = Projection::of(&[&["metadata", "labels"]]);
    for object in [first, last] {
        let answer = parents.answer(&ObjectRef::of(&object), &labels);
        let expected = json!({"metadata": {"labels": object["metadata"]["labels"]}});
        assert_eq!(answer.unwrap().unwrap(), expected);
    }
}
