//! What an input does to the fixtures: [`Mutation`]s that replace, remove or
//! extend a node of the child or of a parent with a [`Small`] value, and
//! [`FieldMutation`]s that do the same with a [`Rich`] value or write one at
//! an in-place field's path.
//!
//! `Small` and `Mutation<Small>` decode as they always did: a derived enum
//! picks its variant by scaling a `u32` to the variant count, so one more
//! variant would give a third of the saved inputs' values another meaning.
//! What `Small` cannot build, a keyed list's entries, is [`Rich`]'s, which
//! only the input's trailing `Fields` reaches.

use arbitrary::Arbitrary;
use serde_json::{Map, Value, json};

use crate::fixtures::FIXTURES;
use crate::node::{Node, edit};

/// The in-place fields' names, as the rule table (`crates/core/src/capi/rules/`)
/// spells them on a child, a parent, a topology entry or a class, in either
/// version.
pub const FIELD_NAMES: &[&str] = &[
    "minReadySeconds",
    "readinessGates",
    "taints",
    "deletion",
    "order",
    "deletePolicy",
    "strategy",
    "machineNaming",
    "machineNamingStrategy",
    "nodeDrainTimeout",
    "nodeVolumeDetachTimeout",
    "nodeDeletionTimeout",
    "nodeDrainTimeoutSeconds",
    "nodeVolumeDetachTimeoutSeconds",
    "nodeDeletionTimeoutSeconds",
];

/// The keys of a readiness gate (`conditionType` keys the list) and of a
/// taint (`key` and `effect` key it).
pub const ENTRY_KEYS: &[&str] = &[
    "conditionType",
    "polarity",
    "key",
    "effect",
    "value",
    "propagation",
];

/// Where the rule table's in-place fields sit, relative to the object: the
/// object's spec, a Machine's template spec (MachineDeployment, MachineSet,
/// MachinePool), a control plane's machine template (v1beta1, v1beta2), a
/// Cluster's topology entries and a ClusterClass's classes (index 0 is the
/// entry the fixtures name). [`FieldMutation::Set`] writes one of
/// [`FIELD_PATHS`] under one of them.
const FIELD_HOMES: &[&[&str]] = &[
    &["spec"],
    &["spec", "template", "spec"],
    &["spec", "machineTemplate"],
    &["spec", "machineTemplate", "spec"],
    &["spec", "topology", "controlPlane"],
    &["spec", "topology", "workers", "machineDeployments", "0"],
    &["spec", "topology", "workers", "machinePools", "0"],
    &["spec", "controlPlane"],
    &["spec", "workers", "machineDeployments", "0"],
    &["spec", "workers", "machinePools", "0"],
    &[],
];

/// The in-place fields' paths relative to a [`FIELD_HOMES`] entry, v1beta1's
/// and v1beta2's.
const FIELD_PATHS: &[&[&str]] = &[
    &["minReadySeconds"],
    &["readinessGates"],
    &["taints"],
    &["deletion"],
    &["deletion", "order"],
    &["deletion", "nodeDrainTimeoutSeconds"],
    &["deletion", "nodeVolumeDetachTimeoutSeconds"],
    &["deletion", "nodeDeletionTimeoutSeconds"],
    &["nodeDrainTimeout"],
    &["nodeVolumeDetachTimeout"],
    &["nodeDeletionTimeout"],
    &["deletePolicy"],
    &["strategy", "rollingUpdate", "deletePolicy"],
    &["machineNaming"],
    &["machineNamingStrategy"],
    &["template", "spec", "readinessGates"],
    &["template", "spec", "taints"],
];

#[derive(Arbitrary, Debug)]
pub enum Small {
    Null,
    Bool(bool),
    Number(i64),
    Text(String),
    Texts(Vec<String>),
    Map(Vec<(String, String)>),
    NestedMap(Vec<(String, Vec<(String, String)>)>),
}

impl IntoValue for Small {
    fn into_value(self) -> Value {
        let map = |entries: Vec<(String, String)>| {
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect(),
            )
        };
        match self {
            Small::Null => Value::Null,
            Small::Bool(b) => json!(b),
            Small::Number(n) => json!(n),
            Small::Text(s) => json!(s),
            Small::Texts(v) => json!(v),
            Small::Map(entries) => map(entries),
            Small::NestedMap(entries) => Value::Object(
                entries
                    .into_iter()
                    .map(|(k, inner)| (k, map(inner)))
                    .collect(),
            ),
        }
    }
}

/// A value [`Small`] cannot build: the entries of a keyed list, or a value a
/// fixture holds at an in-place field.
#[derive(Arbitrary, Debug)]
pub enum Rich {
    Small(Small),
    /// A list of small objects with string fields, such as readiness gates
    /// and taints: keys and values drawn as often from the real ones as
    /// not, so that entries repeat a key, lack one, hold one more, or name
    /// the parent's entry.
    Entries(Vec<Vec<(Key, Text)>>),
    /// One of [`Fixtures::field_values`](crate::fixtures::Fixtures), modulo
    /// their count: a parent's value, or the other version's.
    Seen(u16),
}

/// An entry's key: one of [`ENTRY_KEYS`] (modulo their count), or any.
#[derive(Arbitrary, Debug)]
pub enum Key {
    Known(u8),
    Other(String),
}

/// An entry's value: one of the fixtures' (`Fixtures::entry_texts`, modulo
/// their count), or any.
#[derive(Arbitrary, Debug)]
pub enum Text {
    Seen(u8),
    Other(String),
}

/// What can be written at a node: a JSON value.
pub trait IntoValue {
    fn into_value(self) -> Value;
}

impl IntoValue for Rich {
    fn into_value(self) -> Value {
        match self {
            Rich::Small(small) => small.into_value(),
            Rich::Entries(entries) => Value::Array(
                entries
                    .into_iter()
                    .map(|fields| {
                        Value::Object(
                            fields
                                .into_iter()
                                .map(|(key, text)| (key.into_string(), text.into_value()))
                                .collect(),
                        )
                    })
                    .collect(),
            ),
            Rich::Seen(i) => {
                let values = &FIXTURES.field_values;
                values[usize::from(i) % values.len()].clone()
            }
        }
    }
}

impl Key {
    fn into_string(self) -> String {
        match self {
            Key::Known(i) => ENTRY_KEYS[usize::from(i) % ENTRY_KEYS.len()].to_owned(),
            Key::Other(key) => key,
        }
    }
}

impl Text {
    fn into_value(self) -> Value {
        Value::String(match self {
            Text::Seen(i) => {
                let texts = &FIXTURES.entry_texts;
                texts[usize::from(i) % texts.len()].clone()
            }
            Text::Other(text) => text,
        })
    }
}

/// A node of the child or of a parent replaced, removed or extended with a
/// `V`.
#[derive(Arbitrary, Debug)]
pub enum Mutation<V = Small> {
    Replace {
        in_parent: Option<u8>,
        node: u16,
        value: V,
    },
    Remove {
        in_parent: Option<u8>,
        node: u16,
    },
    Insert {
        in_parent: Option<u8>,
        node: u16,
        key: String,
        value: V,
    },
}

/// What the input's trailing `Fields` does to the child or a parent.
#[derive(Arbitrary, Debug)]
pub enum FieldMutation {
    /// A [`Mutation`] with a [`Rich`] value.
    Edit(Mutation<Rich>),
    /// `value` written at an in-place field's path ([`FIELD_PATHS`], modulo
    /// their count) under one of its homes ([`FIELD_HOMES`], likewise), the
    /// maps on the way created, a scalar on the way replaced by a map; an
    /// index past a list's end writes nothing.
    Set {
        in_parent: Option<u8>,
        home: u8,
        path: u8,
        value: Rich,
    },
}

impl FieldMutation {
    /// The parent the mutation edits, or `None` for the child.
    pub fn in_parent(&self) -> Option<u8> {
        match self {
            FieldMutation::Edit(mutation) => mutation.in_parent(),
            FieldMutation::Set { in_parent, .. } => *in_parent,
        }
    }
}

/// Applies `mutation` to `target`.
pub fn apply_field(target: &mut Node, mutation: FieldMutation) {
    match mutation {
        FieldMutation::Edit(mutation) => apply(target, mutation),
        FieldMutation::Set {
            home, path, value, ..
        } => {
            let home = FIELD_HOMES[usize::from(home) % FIELD_HOMES.len()];
            let path = FIELD_PATHS[usize::from(path) % FIELD_PATHS.len()];
            set(target, home.iter().chain(path), value.into_value());
        }
    }
}

/// Writes `value` at `path` in `target` (see [`FieldMutation::Set`]).
pub fn set<'p>(target: &mut Node, path: impl IntoIterator<Item = &'p &'p str>, value: Value) {
    let mut path = path.into_iter().peekable();
    let mut node = target;
    while let Some(key) = path.next() {
        node.open();
        if !matches!(node, Node::Map(_) | Node::List(_)) {
            *node = Node::Map(Default::default());
        }
        let last = path.peek().is_none();
        let slot = match node {
            Node::Map(map) => map
                .entry((*key).to_owned())
                .or_insert_with(|| Node::Owned(Value::Object(Map::new()))),
            Node::List(items) => match key.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                Some(slot) => slot,
                None => return,
            },
            _ => unreachable!("opened into a map or list above"),
        };
        if last {
            *slot = Node::Owned(value);
            return;
        }
        node = slot;
    }
}

impl<V> Mutation<V> {
    /// The parent the mutation edits (modulo the parent count), or `None`
    /// for the child.
    pub fn in_parent(&self) -> Option<u8> {
        match self {
            Mutation::Replace { in_parent, .. }
            | Mutation::Remove { in_parent, .. }
            | Mutation::Insert { in_parent, .. } => *in_parent,
        }
    }
}

/// Applies `mutation` to `target`.
pub fn apply(target: &mut Node, mutation: Mutation<impl IntoValue>) {
    match mutation {
        Mutation::Replace { node, value, .. } => {
            edit(target, node, |container, key| match container {
                Node::Map(map) if !key.is_empty() => {
                    map.insert(key.to_owned(), Node::Owned(value.into_value()));
                }
                Node::List(items) => {
                    if let Some(slot) = key.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                        *slot = Node::Owned(value.into_value());
                    }
                }
                other if key.is_empty() => *other = Node::Owned(value.into_value()),
                _ => {}
            })
        }
        Mutation::Remove { node, .. } => edit(target, node, |container, key| match container {
            Node::Map(map) => {
                map.remove(key);
            }
            Node::List(items) => {
                if let Ok(i) = key.parse::<usize>()
                    && i < items.len()
                {
                    items.remove(i);
                }
            }
            _ => {}
        }),
        Mutation::Insert {
            node,
            key: new_key,
            value,
            ..
        } => edit(target, node, |container, key| {
            // `Value::get_mut` with a key: an object's entry, never an
            // array's.
            let node = match container {
                _ if key.is_empty() => Some(container),
                Node::Map(map) => map.get_mut(key),
                _ => None,
            };
            if let Some(node) = node {
                node.open();
                if let Node::Map(map) = node {
                    map.insert(new_key, Node::Owned(value.into_value()));
                }
            }
        }),
    }
}
