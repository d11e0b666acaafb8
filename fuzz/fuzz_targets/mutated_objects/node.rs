//! [`Node`]: a fixture as an input edits it, copying only the maps and lists
//! on the way to an edited node, and [`edit`], which finds the `n`th node by
//! counting instead of listing every node's path.

use serde_json::Value;
use std::collections::BTreeMap;

/// A fixture as an input edits it. Unedited parts stay shared with the
/// fixture; an edit opens the objects and arrays on its way ([`Node::open`])
/// and owns what it writes. Edits act on a `Node` exactly as they would on
/// the fixture's `Value` copied whole (serde_json's maps are sorted, as a
/// `BTreeMap` is; checked when the fixtures load).
pub enum Node<'a> {
    Shared(&'a Value),
    Owned(Value),
    Map(BTreeMap<String, Node<'a>>),
    List(Vec<Node<'a>>),
}

/// How many nodes `value` has, itself included.
fn count(value: &Value) -> usize {
    1 + match value {
        Value::Object(map) => map.values().map(count).sum(),
        Value::Array(items) => items.iter().map(count).sum(),
        _ => 0,
    }
}

impl<'a> Node<'a> {
    pub fn count(&self) -> usize {
        match self {
            Node::Shared(value) => count(value),
            Node::Owned(value) => count(value),
            Node::Map(map) => 1 + map.values().map(Node::count).sum::<usize>(),
            Node::List(items) => 1 + items.iter().map(Node::count).sum::<usize>(),
        }
    }

    /// An object or array as a `Map` or `List` of its entries; a scalar
    /// stays as it is.
    pub fn open(&mut self) {
        *self = match std::mem::replace(self, Node::Owned(Value::Null)) {
            Node::Shared(Value::Object(map)) => Node::Map(
                map.iter()
                    .map(|(k, v)| (k.clone(), Node::Shared(v)))
                    .collect(),
            ),
            Node::Shared(Value::Array(items)) => {
                Node::List(items.iter().map(Node::Shared).collect())
            }
            Node::Owned(Value::Object(map)) => {
                Node::Map(map.into_iter().map(|(k, v)| (k, Node::Owned(v))).collect())
            }
            Node::Owned(Value::Array(items)) => {
                Node::List(items.into_iter().map(Node::Owned).collect())
            }
            other => other,
        }
    }

    pub fn into_value(self) -> Value {
        match self {
            Node::Shared(value) => value.clone(),
            Node::Owned(value) => value,
            Node::Map(map) => Value::Object(
                map.into_iter()
                    .map(|(k, node)| (k, node.into_value()))
                    .collect(),
            ),
            Node::List(items) => Value::Array(items.into_iter().map(Node::into_value).collect()),
        }
    }

    /// The bytes `serde_json::to_vec` gives for [`Node::into_value`].
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Node::Shared(value) => serde_json::to_writer(out, value).unwrap(),
            Node::Owned(value) => serde_json::to_writer(out, value).unwrap(),
            Node::Map(map) => {
                out.push(b'{');
                for (i, (key, node)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    serde_json::to_writer(&mut *out, key).unwrap();
                    out.push(b':');
                    node.write_json(out);
                }
                out.push(b'}');
            }
            Node::List(items) => {
                out.push(b'[');
                for (i, node) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    node.write_json(out);
                }
                out.push(b']');
            }
        }
    }

    /// The string at `path`, if there is one.
    pub fn text(&self, path: &[&str]) -> Option<&str> {
        match self {
            Node::Shared(value) => text_at(value, path),
            Node::Owned(value) => text_at(value, path),
            Node::Map(map) => {
                let (first, rest) = path.split_first()?;
                map.get(*first)?.text(rest)
            }
            Node::List(_) => None,
        }
    }
}

/// The string at `path` in `value`, if there is one.
fn text_at<'v>(value: &'v Value, path: &[&str]) -> Option<&'v str> {
    path.iter()
        .try_fold(value, |value, key| value.get(key))?
        .as_str()
}

/// Calls `action` with the container of `target`'s `node`th node (modulo
/// the node count, depth-first, the root first), opened, and the node's key
/// in it (an array index as text), or with the root and `""` for the root.
pub fn edit<'a>(target: &mut Node<'a>, node: u16, action: impl FnOnce(&mut Node<'a>, &str)) {
    let mut n = node as usize % target.count();
    let mut container = target;
    container.open();
    if n == 0 {
        return action(container, "");
    }
    n -= 1;
    loop {
        // `n` counts from the container's first child (0), depth-first.
        let mut found = None;
        let mut each = |i: usize, child: &Node| {
            let size = child.count();
            if n < size {
                found = Some(i);
                true
            } else {
                n -= size;
                false
            }
        };
        match &*container {
            Node::Map(map) => map.values().enumerate().any(|(i, c)| each(i, c)),
            Node::List(items) => items.iter().enumerate().any(|(i, c)| each(i, c)),
            _ => false,
        };
        let Some(i) = found else { return };
        if n == 0 {
            let key = match &*container {
                Node::Map(map) => map.keys().nth(i).cloned().unwrap_or_default(),
                _ => i.to_string(),
            };
            return action(container, &key);
        }
        n -= 1;
        container = match container {
            Node::Map(map) => map.values_mut().nth(i),
            Node::List(items) => items.get_mut(i),
            _ => None,
        }
        .expect("the child just counted");
        container.open();
    }
}
