//! The cost per entry of a keyed list stays flat from 1,000 to 10,000
//! entries, in the parent's list, in the child's and in both (matching
//! entries by scanning once made a Cluster with 10,000 readiness gates take
//! 5 s in wasm, over policy-server's 2 s timeout).
//!
//! Work is counted, not timed: every evaluation runs the whole `validate`
//! path (decode, decide, apply, encode, as the wasm module does) and counts
//! its heap allocations (this binary's allocator) and its key operations:
//! list keys hashed, and pairs of list keys compared
//! (`wire::key_operations`, which the core counts when its
//! `count-key-operations` feature is on, as for its own tests). A scan per
//! entry costs no allocation but a comparison per entry scanned, so the key
//! operations are what a quadratic merge shows in; the allocations catch a
//! list copied per entry. Allocations are deterministic; key operations
//! are too but for the few comparisons a hash collision adds (the hash is
//! seeded at random: a handful per 1,000 keys). Per entry, 10,000 entries
//! may cost at most 1.5× what 1,000 do.
//! BENCHMARKS.md, "Cost per entry, 1,000 to 10,000", gives the same
//! dimensions and the others in instructions.

use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::wire;
use metadata_propagation_core::wire::key_operations;
use serde_json::{Value, json};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting this thread's allocations (the test
/// harness runs tests on threads of their own).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every call is passed on to the system allocator unchanged; the
// count is a const-initialised thread-local, which never allocates.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's layout, as GlobalAlloc::alloc requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: as for `dealloc`, and `new_size` is the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What one evaluation cost.
#[derive(Debug, Clone, Copy)]
struct Cost {
    allocations: u64,
    key_operations: u64,
}

/// A request and the parents its look-ups find, for one list length.
struct Case {
    payload: Vec<u8>,
    lookup: MapLookup,
}

/// Evaluates `case` twice and counts the second evaluation: the first
/// pays for what is set up once per thread.
fn cost(case: &Case) -> Cost {
    let evaluate = || wire::validate_with(&case.payload, &case.lookup);
    let first = evaluate();
    let (allocations, key_operations_before) = (ALLOCATIONS.with(Cell::get), key_operations());
    let second = evaluate();
    let cost = Cost {
        allocations: ALLOCATIONS.with(Cell::get) - allocations,
        key_operations: key_operations() - key_operations_before,
    };
    assert_eq!(first, second, "the same request gives the same answer");
    cost
}

/// Per entry, `n` entries cost at most 1.5× what 1,000 do.
fn assert_flat(dimension: &str, case: impl Fn(usize) -> Case, n: usize) {
    let (small, large) = (cost(&case(1_000)), cost(&case(n)));
    let ratio = |small: u64, large: u64| (large as f64 / n as f64) / (small.max(1) as f64 / 1e3);
    let allocations = ratio(small.allocations, large.allocations);
    let key_operations = ratio(small.key_operations, large.key_operations);
    eprintln!(
        "{dimension}: 1,000 -> {small:?}, {n} -> {large:?}: per entry x{allocations:.2} \
         allocations, x{key_operations:.2} key operations"
    );
    assert!(
        allocations <= 1.5,
        "{dimension}: allocations per entry grow x{allocations:.2} from 1,000 to {n} entries"
    );
    assert!(
        key_operations <= 1.5,
        "{dimension}: key operations per entry grow x{key_operations:.2} from 1,000 to {n} \
         entries ({} and {})",
        small.key_operations,
        large.key_operations
    );
}

const N: usize = 10_000;

fn gate(i: usize) -> Value {
    json!({"conditionType": format!("platform.example.com/Gate{i:05}")})
}

fn taint(i: usize) -> Value {
    json!({"key": format!("platform.example.com/taint-{i:05}"), "effect": "NoSchedule",
           "propagation": "Always"})
}

/// A KubeadmControlPlane the topology controller owns (v1beta1), under
/// Cluster `c` of class `quick-start`, whose topology's control plane sets
/// `fields`; the KCP's machine template holds `template`.
fn topology_kcp(operation: &str, fields: Value, template: Value, settings: Value) -> Case {
    let kcp = json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmControlPlane",
        "metadata": {"name": "c-x7k2p", "namespace": "ns", "labels": {
            "cluster.x-k8s.io/cluster-name": "c", "topology.cluster.x-k8s.io/owned": ""}},
        "spec": {"machineTemplate": template, "replicas": 3, "version": "v1.31.4"},
    });
    let cluster = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "c", "namespace": "ns"},
        "spec": {"topology": {"class": "quick-start", "version": "v1.31.4",
            "controlPlane": fields}},
    });
    let class = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "ClusterClass",
        "metadata": {"name": "quick-start", "namespace": "ns"},
        "spec": {"controlPlane": {"metadata": {"labels": {"platform.example.com/class": "qs"}}}},
    });
    let request = json!({
        "uid": "3f9a1c52",
        "kind": {"group": "controlplane.cluster.x-k8s.io", "version": "v1beta1",
                 "kind": "KubeadmControlPlane"},
        "operation": operation,
        "namespace": "ns",
        "object": kcp,
    });
    Case {
        payload: serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap(),
        lookup: MapLookup::default().with_object(cluster).with_object(class),
    }
}

/// The Cluster lists n readiness gates; the new KCP has none (n added).
fn parent_gates(n: usize) -> Case {
    let gates: Vec<Value> = (0..n).map(gate).collect();
    topology_kcp(
        "CREATE",
        json!({"readinessGates": gates}),
        json!({}),
        json!({}),
    )
}

/// The KCP holds n readiness gates; the Cluster lists its last one and one
/// it lacks (one added).
fn child_gates(n: usize) -> Case {
    let held: Vec<Value> = (0..n).map(gate).collect();
    let gates = [gate(n - 1), gate(n)];
    topology_kcp(
        "UPDATE",
        json!({"readinessGates": gates}),
        json!({"readinessGates": held}),
        json!({}),
    )
}

/// Both hold the same n gates, the KCP in reverse order and every other
/// one with the other polarity (n / 2 corrected in place).
fn both_gates_in(settings: Value) -> impl Fn(usize) -> Case {
    move |n| {
        let with = |i: usize, polarity: &str| {
            let mut gate = gate(i);
            gate["polarity"] = json!(polarity);
            gate
        };
        let gates: Vec<Value> = (0..n).map(|i| with(i, "Positive")).collect();
        let held: Vec<Value> = (0..n)
            .rev()
            .map(|i| with(i, if i % 2 == 1 { "Negative" } else { "Positive" }))
            .collect();
        topology_kcp(
            "UPDATE",
            json!({"readinessGates": gates}),
            json!({"readinessGates": held}),
            settings.clone(),
        )
    }
}

/// The Cluster lists n taints (keyed by key and effect); the KCP has none.
fn parent_taints(n: usize) -> Case {
    let taints: Vec<Value> = (0..n).map(taint).collect();
    topology_kcp("CREATE", json!({"taints": taints}), json!({}), json!({}))
}

/// The Cluster lists each of n gates twice: the first of each wins.
fn duplicated_parent_gates(n: usize) -> Case {
    let gates: Vec<Value> = (0..n).chain(0..n).map(gate).collect();
    topology_kcp(
        "CREATE",
        json!({"readinessGates": gates}),
        json!({}),
        json!({}),
    )
}

#[test]
fn a_parent_list_costs_the_same_per_entry_at_10000_entries() {
    assert_flat("parent's readiness gates", parent_gates, N);
    assert_flat("parent's taints", parent_taints, N);
    assert_flat("parent's gates, each twice", duplicated_parent_gates, N);
}

#[test]
fn a_child_list_costs_the_same_per_entry_at_10000_entries() {
    assert_flat("child's readiness gates", child_gates, N);
}

#[test]
fn both_lists_cost_the_same_per_entry_at_10000_entries() {
    assert_flat("both lists", both_gates_in(json!({})), N);
    assert_flat(
        "both lists, validate mode",
        both_gates_in(json!({"mode": "validate"})),
        N,
    );
}
