//! What an input does to the fixtures: [`Mutation`]s that replace, remove or
//! extend a node of the child or of a parent with a [`Small`] value.

use arbitrary::Arbitrary;
use serde_json::{Value, json};

use crate::node::{Node, edit};

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

impl Small {
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

#[derive(Arbitrary, Debug)]
pub enum Mutation {
    Replace {
        in_parent: Option<u8>,
        node: u16,
        value: Small,
    },
    Remove {
        in_parent: Option<u8>,
        node: u16,
    },
    Insert {
        in_parent: Option<u8>,
        node: u16,
        key: String,
        value: Small,
    },
}

impl Mutation {
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
pub fn apply(target: &mut Node, mutation: Mutation) {
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
