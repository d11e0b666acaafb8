//! What a live audit keeps of each possible parent, under the test bed's
//! three policies (those `make bench-live-audit` audits with). A managed
//! resource's composite resource (XR) keeps its labels and annotations for
//! the MRs it composes: the XRs of a team carry the same ones and share one
//! view, and each takes its identity and a place in a table that grows a
//! chunk at a time. A Machine is no composite resource (no XR is of a
//! Cluster API group) and no InfraMachine's parent: it keeps nothing, where
//! it kept its labels and annotations (141 bytes a Machine) while the XR's
//! look-up was declared of any group.

mod counting;
mod test_bed;

use std::sync::atomic::Ordering;

use cluster_audit::live::Parents;
use metadata_propagation_core::lookup::ObjectRef;
use metadata_propagation_core::projection::Projection;
use metadata_propagation_core::request::GroupVersionKind;
use serde_json::{Value, json};

use counting::{LIVE, measuring};

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

/// XR `i` of `teams` teams, five to a team: the team's labels and
/// annotations, which its MRs take their tags from.
fn xr(i: usize, teams: usize) -> Value {
    let team = i % teams;
    json!({"apiVersion": "platform.example.org/v1alpha1", "kind": "XDatabase",
        "metadata": {"name": format!("db{i:06}"), "namespace": "bench", "uid": format!("uid-db{i}"),
            "resourceVersion": "4711", "generation": 1, "creationTimestamp": "2026-11-29T00:00:00Z",
            "labels": {"acme.io/team": format!("team{team}"), "environment": "prod",
                       "cost-center": format!("cc-{team}")},
            "annotations": {"cloud-tags.plexsphere.io/labels": "environment"},
            "managedFields": [{"manager": "manager", "operation": "Update", "apiVersion": "v1",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {}}}}]},
        "spec": {"crossplane": {}, "parameters": {"provider": "aws", "size": "small"}}})
}

/// The bytes `Parents` holds after keeping `n` objects `make` makes, five
/// to a set (of a MachineSet, of a team), and the parents themselves.
fn kept(n: usize, make: fn(usize, usize) -> Value) -> (usize, Parents) {
    let kinds = [
        kind("cluster.x-k8s.io/v1beta2", "Machine"),
        kind("infrastructure.cluster.x-k8s.io/v1beta2", "AWSMachine"),
        kind("ec2.aws.m.upbound.io/v1beta1", "VPC"),
    ];
    let before = LIVE.load(Ordering::Relaxed);
    let mut parents = Parents::for_kinds(&test_bed::policies(), &kinds);
    for i in 0..n {
        parents.keep(&make(i, n / 5));
    }
    (LIVE.load(Ordering::Relaxed).saturating_sub(before), parents)
}

/// The bytes a parent `make` makes keeps: between 2,000 and 20,000 kept.
fn per_parent(make: fn(usize, usize) -> Value) -> (usize, Parents) {
    let (small, _) = kept(2_000, make);
    let (large, parents) = kept(20_000, make);
    let per_parent = large.saturating_sub(small) / 18_000;
    eprintln!("{small} bytes for 2,000, {large} for 20,000: {per_parent} bytes a parent");
    (per_parent, parents)
}

#[test]
fn an_xr_keeps_its_identity_and_shares_its_view_with_its_team() {
    let _alone = measuring();
    let (per_xr, parents) = per_parent(xr);
    // Measured: 115 bytes an XR.
    assert!(per_xr <= 125, "{per_xr} bytes an XR");

    // Each is still answered from its own view.
    let labels = Projection::of(&[&["metadata", "labels"]]);
    for object in [xr(0, 4_000), xr(19_999, 4_000)] {
        let answer = parents.answer(&ObjectRef::of(&object), &labels);
        let expected = json!({"metadata": {"labels": object["metadata"]["labels"]}});
        assert_eq!(answer.unwrap().unwrap(), expected);
    }
}

#[test]
fn a_machine_is_no_parent_of_the_kinds_listed_and_keeps_nothing() {
    let _alone = measuring();
    let (per_machine, parents) = per_parent(machine);
    assert_eq!(per_machine, 0, "{per_machine} bytes a Machine");
    // A look-up of one would be asked of the cluster.
    let labels = Projection::of(&[&["metadata", "labels"]]);
    let answer = parents.answer(&ObjectRef::of(&machine(0, 4_000)), &labels);
    assert!(answer.is_none());
}
