//! The ownership tree of a dump: ClusterClass → Cluster → control plane,
//! MachineDeployments and MachinePools → MachineSets → Machines → their
//! InfraMachines and BootstrapConfigs.
//!
//! An object's parent is, in this order: for a Cluster, its ClusterClass
//! (v1beta1 `spec.topology.class` / `classNamespace`, v1beta2
//! `spec.topology.classRef`, read with the policy's own
//! [`capi::cluster_class`]); the owner named by its controller
//! ownerReference; any other owner named by an ownerReference (a freshly
//! created InfraMachine is owned by its MachineSet without the controller
//! flag, a user-managed MachineDeployment by its Cluster; an InfraCluster
//! by its Cluster); for a topology-owned object or an infrastructure object
//! (an InfraCluster before the Cluster controller has claimed it, an
//! InfraMachine whose owner is not in the dump) without owners, the Cluster
//! named by its `cluster.x-k8s.io/cluster-name` label. Only objects in the
//! dump count: an
//! object whose parent is not in the dump is a root, as is every XR.
//!
//! Siblings and roots are sorted by kind rank (the order of the chain above,
//! then every other kind), then namespace and name, so the tree is the same
//! whatever order the dump lists its objects in.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use metadata_propagation_core::capi;
use metadata_propagation_core::lookup::ObjectRef;
use serde_json::Value;

mod identity;

pub use identity::Identity;

const CORE: &str = "cluster.x-k8s.io";
const INFRASTRUCTURE: &str = "infrastructure.cluster.x-k8s.io";

/// Where a kind sits in the chain; every kind outside it comes last.
fn kind_rank(group: &str, kind: &str) -> u8 {
    match (group, kind) {
        (CORE, "ClusterClass") => 0,
        (CORE, "Cluster") => 1,
        ("controlplane.cluster.x-k8s.io", _) => 2,
        (CORE, "MachineDeployment") => 3,
        (CORE, "MachinePool") => 4,
        (CORE, "MachineSet") => 5,
        (CORE, "Machine") => 6,
        (INFRASTRUCTURE, _) => 7,
        ("bootstrap.cluster.x-k8s.io", _) => 8,
        (CORE, _) => 9,
        _ => 10,
    }
}

/// Kind rank, then namespace and name (cluster-scoped first), then kind
/// and group to separate objects that share a name.
pub fn order(a: &Identity, b: &Identity) -> Ordering {
    fn key(i: &Identity) -> (u8, Option<&str>, &str, &str, &str) {
        (
            kind_rank(i.group(), i.kind()),
            i.namespace(),
            i.name(),
            i.kind(),
            i.group(),
        )
    }
    key(a).cmp(&key(b))
}

/// The tree over the objects `0..n` of a dump: each object's parent, and
/// each object's children as one run of a shared list (a live audit has
/// one tree node per object of the cluster).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    /// Each object's parent ([`NO_PARENT`]: a root).
    parent: Vec<u32>,
    /// Where each object's children start in `children`; one more entry
    /// marks the end of the last object's.
    first_child: Vec<u32>,
    /// Every object's children, sorted, object by object.
    children: Vec<u32>,
    /// The roots, sorted.
    roots: Vec<u32>,
}

/// A root's parent in [`Tree::of_parents`].
pub const NO_PARENT: u32 = u32::MAX;

fn index(i: u32) -> usize {
    i as usize
}

/// Object `i`'s place in a tree (fewer than `u32::MAX` objects).
pub fn narrow(i: usize) -> u32 {
    u32::try_from(i).expect("fewer than u32::MAX objects")
}

/// `identity`'s hash in a table of 4-byte places (the objects seen, the
/// parents kept), under fixed keys: the same run, the same table.
pub(crate) fn place_hash(identity: &Identity) -> u64 {
    let mut hasher = DefaultHasher::new();
    identity.hash(&mut hasher);
    hasher.finish()
}

impl Tree {
    /// The tree of `objects`, whose identities are `identities` (distinct).
    pub fn build(objects: &[&Value], identities: &[Identity]) -> Tree {
        let index: BTreeMap<&Identity, usize> = identities
            .iter()
            .enumerate()
            .map(|(i, id)| (id, i))
            .collect();
        let find = |identity: &Identity| index.get(identity).copied();
        let parent: Vec<u32> = objects
            .iter()
            .zip(identities)
            .enumerate()
            .map(|(i, (object, identity))| {
                let parent = parent_of(object, identity, &find).filter(|&p| p != i);
                parent.map_or(NO_PARENT, narrow)
            })
            .collect();
        Tree::of_parents(parent, &|i| &identities[i])
    }

    /// The tree over objects whose parents are known (`parent[i]`, an
    /// index of the objects, or [`NO_PARENT`]), object `i` being
    /// `identity(i)`.
    pub fn of_parents<'i>(mut parent: Vec<u32>, identity: &dyn Fn(usize) -> &'i Identity) -> Tree {
        break_cycles(&mut parent, identity);
        let mut count = vec![0u32; parent.len() + 1];
        for &p in parent.iter().filter(|&&p| p != NO_PARENT) {
            count[index(p) + 1] += 1;
        }
        for i in 1..count.len() {
            count[i] += count[i - 1];
        }
        let first_child = count;
        let mut next = first_child.clone();
        let roots_count = parent.iter().filter(|&&p| p == NO_PARENT).count();
        let mut children = vec![0u32; parent.len() - roots_count];
        let mut roots = Vec::with_capacity(roots_count);
        for (i, &p) in parent.iter().enumerate() {
            match p {
                NO_PARENT => roots.push(narrow(i)),
                p => {
                    children[index(next[index(p)])] = narrow(i);
                    next[index(p)] += 1;
                }
            }
        }
        drop(next);
        let sort = |list: &mut [u32]| {
            list.sort_by(|&a, &b| order(identity(index(a)), identity(index(b))));
        };
        for i in 0..parent.len() {
            sort(&mut children[index(first_child[i])..index(first_child[i + 1])]);
        }
        sort(&mut roots);
        Tree {
            parent,
            first_child,
            children,
            roots,
        }
    }

    /// Object `i`'s parent.
    pub fn parent(&self, i: usize) -> Option<usize> {
        Some(self.parent[i]).filter(|&p| p != NO_PARENT).map(index)
    }

    /// Object `i`'s children, sorted.
    pub fn children(&self, i: usize) -> impl DoubleEndedIterator<Item = usize> + '_ {
        let run = index(self.first_child[i])..index(self.first_child[i + 1]);
        self.children[run].iter().map(|&c| index(c))
    }

    /// The roots, sorted.
    pub fn roots(&self) -> impl DoubleEndedIterator<Item = usize> + '_ {
        self.roots.iter().map(|&r| index(r))
    }

    /// How many objects the tree holds.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// Every object, parents before children, siblings in order, with its
    /// depth (roots are at 0), one at a time: a report of a cluster is
    /// walked without a list of all its objects.
    pub fn walk(&self) -> Walk<'_> {
        Walk {
            tree: self,
            roots: self.roots.iter(),
            stack: Vec::new(),
            left: self.parent.len(),
        }
    }
}

/// [`Tree::walk`]: the subtree of one root at a time, each object's
/// children stacked as it is visited.
pub struct Walk<'t> {
    tree: &'t Tree,
    roots: std::slice::Iter<'t, u32>,
    stack: Vec<(usize, usize)>,
    left: usize,
}

impl Iterator for Walk<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        let (node, depth) = match self.stack.pop() {
            Some(next) => next,
            None => (index(*self.roots.next()?), 0),
        };
        let children = self.tree.children(node).rev();
        self.stack.extend(children.map(|c| (c, depth + 1)));
        self.left = self.left.saturating_sub(1);
        Some((node, depth))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        // Every object is under a root (cycles are broken).
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Walk<'_> {}

/// `object`'s parent among the objects `find` knows (by identity).
pub(crate) fn parent_of(
    object: &Value,
    identity: &Identity,
    find: &dyn Fn(&Identity) -> Option<usize>,
) -> Option<usize> {
    let namespace = identity.namespace();
    if (identity.group(), identity.kind()) == (CORE, "Cluster")
        && let Some(class) = cluster_class(object, find)
    {
        return Some(class);
    }
    // Malformed ownerReferences give no parent here; the policy's
    // evaluation of the object reports them.
    let refs = capi::owners(object);
    let owner_found = |(owner, _): &(ObjectRef, bool)| {
        // Owners are in the object's namespace, or cluster-scoped.
        [namespace, None]
            .into_iter()
            .find_map(|ns| find(&Identity::new(owner.group(), &owner.kind, ns, &owner.name)))
    };
    let controller = refs
        .iter()
        .filter(|(_, controller)| *controller)
        .find_map(owner_found);
    let any = || refs.iter().find_map(owner_found);
    controller.or_else(any).or_else(|| {
        let cluster = capi::labelled_cluster(object)?;
        find(&Identity::new(CORE, "Cluster", namespace, cluster))
    })
}

fn cluster_class(cluster: &Value, find: &dyn Fn(&Identity) -> Option<usize>) -> Option<usize> {
    let (name, class_namespace) = capi::cluster_class(cluster)?;
    find(&Identity::new(
        CORE,
        "ClusterClass",
        Some(class_namespace),
        name,
    ))
}

/// Whether a look-up can ask for an object of `identity`'s kind: every
/// kind but the leaves of the chain (InfraMachines and other
/// infrastructure objects, BootstrapConfigs) and Crossplane's managed
/// resources (`spec.forProvider`, which no object is composed under).
pub(crate) fn may_be_parent(identity: &Identity, object: &Value) -> bool {
    let leaf = matches!(kind_rank(identity.group(), identity.kind()), 7 | 8);
    !leaf && object["spec"].get("forProvider").is_none()
}

/// The rank of `identity`'s kind in the chain: the order a live audit
/// lists kinds in, parents first.
pub fn rank(group: &str, kind: &str) -> u8 {
    kind_rank(group, kind)
}

/// Ownership in a consistent dump has no cycles; in one that has, the
/// object that sorts first in each cycle becomes a root. Each object's chain
/// of parents is walked once: a walk stops at an object already checked.
fn break_cycles<'i>(parent: &mut [u32], identity: &dyn Fn(usize) -> &'i Identity) {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum State {
        Unvisited,
        OnPath,
        Checked,
    }
    let mut state = vec![State::Unvisited; parent.len()];
    for start in 0..parent.len() {
        let mut path = Vec::new();
        let mut node = Some(start);
        while let Some(n) = node {
            match state[n] {
                State::Checked => break,
                State::OnPath => {
                    let at = path.iter().position(|&p| p == n).unwrap_or(0);
                    let first = path[at..]
                        .iter()
                        .copied()
                        .min_by(|&a, &b| order(identity(a), identity(b)))
                        .unwrap_or(n);
                    parent[first] = NO_PARENT;
                    break;
                }
                State::Unvisited => {
                    state[n] = State::OnPath;
                    path.push(n);
                    node = Some(parent[n]).filter(|&p| p != NO_PARENT).map(index);
                }
            }
        }
        for n in path {
            state[n] = State::Checked;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(api_version: &str, kind: &str, name: &str, metadata: Value) -> Value {
        let mut object = json!({"apiVersion": api_version, "kind": kind,
            "metadata": {"name": name, "namespace": "default"}});
        if let Value::Object(extra) = metadata {
            for (k, v) in extra {
                object["metadata"][k] = v;
            }
        }
        object
    }

    fn owned_by(kind: &str, name: &str, controller: bool) -> Value {
        json!({"ownerReferences": [{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": kind,
            "name": name, "uid": "u", "controller": controller}]})
    }

    fn tree_of(objects: &[Value]) -> (Tree, Vec<String>) {
        let refs: Vec<&Value> = objects.iter().collect();
        let identities: Vec<Identity> = objects.iter().map(Identity::of).collect();
        let names = identities
            .iter()
            .map(|i| format!("{} {}", i.kind(), i.name()))
            .collect();
        (Tree::build(&refs, &identities), names)
    }

    /// The tree as indented lines, for literal expectations.
    fn lines(tree: &Tree, names: &[String]) -> Vec<String> {
        tree.walk()
            .map(|(i, depth)| format!("{}{}", "  ".repeat(depth), names[i]))
            .collect()
    }

    #[test]
    fn tree_follows_class_owners_and_topology_whatever_the_dump_order() {
        let v2 = "cluster.x-k8s.io/v1beta2";
        let objects = [
            object(v2, "Machine", "m-b", owned_by("MachineSet", "ms", true)),
            object(
                "infrastructure.cluster.x-k8s.io/v1beta2",
                "DockerMachine",
                "m-a",
                owned_by("Machine", "m-a", true),
            ),
            object(v2, "Machine", "m-a", owned_by("MachineSet", "ms", true)),
            object(
                v2,
                "MachineSet",
                "ms",
                owned_by("MachineDeployment", "md", true),
            ),
            object(
                v2,
                "MachineDeployment",
                "md",
                json!({"labels": {"topology.cluster.x-k8s.io/owned": "",
                    "cluster.x-k8s.io/cluster-name": "c"}}),
            ),
            json!({"apiVersion": v2, "kind": "Cluster",
                "metadata": {"name": "c", "namespace": "default"},
                "spec": {"topology": {"classRef": {"name": "cc"}}}}),
            object(v2, "ClusterClass", "cc", json!({})),
            object(v2, "MachinePool", "mp", owned_by("Cluster", "c", false)),
            json!({"apiVersion": "platform.example.org/v1alpha1", "kind": "XNetwork",
                "metadata": {"name": "net"}}),
            object(
                v2,
                "Machine",
                "orphan",
                owned_by("MachineSet", "gone", true),
            ),
        ];
        let (tree, names) = tree_of(&objects);
        assert_eq!(
            lines(&tree, &names),
            [
                "ClusterClass cc",
                "  Cluster c",
                "    MachineDeployment md",
                "      MachineSet ms",
                "        Machine m-a",
                "          DockerMachine m-a",
                "        Machine m-b",
                "    MachinePool mp",
                "Machine orphan",
                "XNetwork net",
            ]
        );
        let mut reversed = objects.to_vec();
        reversed.reverse();
        let (tree, names) = tree_of(&reversed);
        assert_eq!(lines(&tree, &names)[4], "        Machine m-a");
    }

    #[test]
    fn tree_places_infrastructure_under_its_cluster_or_machine() {
        let v2 = "cluster.x-k8s.io/v1beta2";
        let infra = "infrastructure.cluster.x-k8s.io/v1beta2";
        let cluster_name = json!({"labels": {"cluster.x-k8s.io/cluster-name": "c"}});
        let objects = [
            object(infra, "AWSMachine", "m-0", owned_by("Machine", "m-0", true)),
            object(infra, "AWSCluster", "c", owned_by("Cluster", "c", true)),
            object(v2, "Machine", "m-0", json!({})),
            // not yet claimed by the Cluster controller: its label names the Cluster
            object(infra, "AWSCluster", "c-handmade", cluster_name.clone()),
            // its Machine is not in the dump: under the Cluster its label names
            object(infra, "AWSMachine", "m-1", {
                let mut metadata = owned_by("Machine", "m-1", true);
                metadata["labels"] = cluster_name["labels"].clone();
                metadata
            }),
            object(v2, "Cluster", "c", json!({})),
            // a CAPI core object is placed by the label only when topology-owned
            object(v2, "Machine", "m-2", cluster_name),
        ];
        let (tree, names) = tree_of(&objects);
        assert_eq!(
            lines(&tree, &names),
            [
                "Cluster c",
                "  AWSCluster c",
                "  AWSCluster c-handmade",
                "  AWSMachine m-1",
                "Machine m-0",
                "  AWSMachine m-0",
                "Machine m-2",
            ]
        );
    }

    #[test]
    fn tree_v1beta1_cluster_finds_its_class_in_class_namespace() {
        let v1 = "cluster.x-k8s.io/v1beta1";
        let mut class = object(v1, "ClusterClass", "cc", json!({}));
        class["metadata"]["namespace"] = json!("classes");
        let objects = [
            json!({"apiVersion": v1, "kind": "Cluster",
                "metadata": {"name": "c", "namespace": "default"},
                "spec": {"topology": {"class": "cc", "classNamespace": "classes"}}}),
            class,
            object(v1, "ClusterClass", "cc", json!({})),
        ];
        let (tree, names) = tree_of(&objects);
        assert_eq!(tree.parent(0), Some(1));
        assert_eq!(
            lines(&tree, &names),
            ["ClusterClass cc", "  Cluster c", "ClusterClass cc"]
        );
    }

    #[test]
    fn tree_prefers_the_controller_owner_and_breaks_cycles() {
        let v1 = "cluster.x-k8s.io/v1beta1";
        let mut infra = object(
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "DockerMachine",
            "m",
            owned_by("MachineSet", "ms", false),
        );
        infra["metadata"]["ownerReferences"]
            .as_array_mut()
            .unwrap()
            .push(
                json!({"apiVersion": v1, "kind": "Machine", "name": "m", "uid": "u",
                "controller": true}),
            );
        let objects = [
            infra,
            object(v1, "Machine", "m", json!({})),
            object(v1, "MachineSet", "ms", json!({})),
            object(v1, "MachineSet", "a", owned_by("MachineSet", "b", true)),
            object(v1, "MachineSet", "b", owned_by("MachineSet", "a", true)),
            object(v1, "MachineSet", "c", owned_by("MachineSet", "b", true)),
            object(v1, "MachineSet", "z", owned_by("MachineSet", "x", true)),
            object(v1, "MachineSet", "y", owned_by("MachineSet", "z", true)),
            object(v1, "MachineSet", "x", owned_by("MachineSet", "y", true)),
        ];
        let (tree, _) = tree_of(&objects);
        assert_eq!(tree.parent(0), Some(1));
        // a and b own each other: a sorts first and becomes the root; c,
        // owned by b, stays under it
        assert_eq!(
            (3..6).map(|i| tree.parent(i)).collect::<Vec<_>>(),
            [None, Some(3), Some(4)]
        );
        // x → z → y → x, walked from z: x sorts first
        assert_eq!(
            (6..9).map(|i| tree.parent(i)).collect::<Vec<_>>(),
            [Some(8), Some(6), None]
        );
    }
}
