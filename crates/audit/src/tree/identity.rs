//! What identifies an object of an audit, kept small: a live audit keeps
//! one per object of the cluster.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::Arc;

use metadata_propagation_core::lookup::ObjectRef;
use serde_json::Value;

/// What identifies an object in a dump: group, kind, namespace, name. The
/// version is left out: an ownerReference may name its owner at another
/// version than the one the dump was printed at. A live audit keeps one
/// per object of the cluster, so the kind and the namespace, which many
/// objects share, are kept once ([`shared`]); the name is the object's own.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Identity {
    kind: Arc<GroupKind>,
    namespace: Option<Arc<String>>,
    name: Box<str>,
}

/// API group ("" for the core group) and kind, in that order (the order
/// identities sort by).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct GroupKind {
    group: String,
    kind: String,
}

/// The kinds and namespaces named so far: few (a cluster's CRDs and
/// namespaces), each kept once however many objects name it.
#[derive(Default)]
struct Shared {
    kinds: BTreeSet<Arc<GroupKind>>,
    namespaces: BTreeSet<Arc<String>>,
}

thread_local! {
    static SHARED: RefCell<Shared> = RefCell::default();
}

/// The one copy of `group`/`kind` and of `namespace`.
fn shared(
    group: &str,
    kind: &str,
    namespace: Option<&str>,
) -> (Arc<GroupKind>, Option<Arc<String>>) {
    SHARED.with(|shared| {
        let Shared { kinds, namespaces } = &mut *shared.borrow_mut();
        let key = GroupKind {
            group: group.to_owned(),
            kind: kind.to_owned(),
        };
        let kind = match kinds.get(&key) {
            Some(kind) => Arc::clone(kind),
            None => {
                let kind = Arc::new(key);
                kinds.insert(Arc::clone(&kind));
                kind
            }
        };
        let namespace = namespace.map(|namespace| match namespaces.get(&namespace.to_owned()) {
            Some(namespace) => Arc::clone(namespace),
            None => {
                let namespace = Arc::new(namespace.to_owned());
                namespaces.insert(Arc::clone(&namespace));
                namespace
            }
        });
        (kind, namespace)
    })
}

impl Identity {
    /// The identity of a checked Kubernetes object (see
    /// [`crate::dump::kubernetes_objects`]).
    pub fn of(object: &Value) -> Identity {
        Identity::of_ref(&ObjectRef::of(object))
    }

    /// The identity of the object a look-up asks for.
    pub fn of_ref(reference: &ObjectRef) -> Identity {
        let namespace = reference.namespace.as_deref().filter(|ns| !ns.is_empty());
        Identity::new(
            reference.group(),
            &reference.kind,
            namespace,
            &reference.name,
        )
    }

    pub(super) fn new(group: &str, kind: &str, namespace: Option<&str>, name: &str) -> Identity {
        let (kind, namespace) = shared(group, kind, namespace);
        Identity {
            kind,
            namespace,
            name: name.into(),
        }
    }

    /// API group ("" for the core group).
    pub fn group(&self) -> &str {
        &self.kind.group
    }

    /// Kind.
    pub fn kind(&self) -> &str {
        &self.kind.kind
    }

    /// Namespace; `None` for cluster-scoped objects.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref().map(String::as_str)
    }

    /// Name.
    pub fn name(&self) -> &str {
        &self.name
    }
}
