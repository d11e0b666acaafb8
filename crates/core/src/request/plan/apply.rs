//! Applying a plan to the object it was computed for: each edit once, in
//! plan order, changing only what it names.

use super::{Edit, FieldEdit, MapEdit, Plan};
use crate::json::fields::Path;
use crate::json::keyed_list::{self, EntryKey};
use serde_json::{Map, Value};

impl Plan {
    /// Applies the plan to `object`, creating missing maps on the way and
    /// leaving every field the plan does not name untouched.
    ///
    /// Capabilities build plans only after reading the same paths with
    /// [`crate::json::fields`], which rejects non-object intermediates, so the only
    /// non-object values met here are absent or `null` ones.
    pub fn apply(&self, object: &mut Value) {
        self.clone().apply_owned(object);
    }

    /// [`Plan::apply`], consuming the plan: its field values move into the
    /// object instead of being cloned.
    pub(crate) fn apply_owned(self, object: &mut Value) {
        let mut edits = self.edits.into_iter().peekable();
        while let Some(edit) = edits.next() {
            match edit {
                Edit::Map(edit) => apply_map_edit(object, edit),
                Edit::Field(FieldEdit {
                    path,
                    entry: Some(key),
                    value,
                    ..
                }) => {
                    // One field flow decides a whole keyed list, so its
                    // entries are consecutive edits: applied together, the
                    // list is indexed once instead of scanned per entry.
                    let mut entries = vec![(key, value)];
                    while let Some(Edit::Field(next)) =
                        edits.next_if(|next| same_list(&path, &entries[0].0, next))
                    {
                        entries.extend(next.entry.map(|key| (key, next.value)));
                    }
                    apply_entry_edits(object, &path, entries);
                }
                Edit::Field(edit) => {
                    if let Some((parent, last)) = field_parent(object, &edit.path) {
                        if edit.value.is_null() {
                            parent.remove(last);
                            continue;
                        }
                        parent.insert(last.to_owned(), edit.value);
                    }
                }
            }
        }
    }
}

/// True when `edit` sets an entry of the keyed list at `path` whose keys
/// name the same fields as `key`.
fn same_list(path: &Path, key: &EntryKey, edit: &Edit) -> bool {
    matches!(edit, Edit::Field(FieldEdit { path: other, entry: Some(other_key), .. })
        if other == path && other_key.same_fields(key))
}

/// The object holding the field at `path` and the field's name, creating
/// missing parent objects.
fn field_parent<'a, 'p>(
    object: &'a mut Value,
    path: &'p Path,
) -> Option<(&'a mut Map<String, Value>, &'p str)> {
    let (last, parents) = path.split_last()?;
    let mut current = object;
    for segment in parents {
        current = as_object_mut(current, true)?
            .entry(segment)
            .or_insert_with(|| Value::Object(Map::new()));
    }
    Some((as_object_mut(current, true)?, last))
}

/// Replaces each entry of the keyed list at `path` that has the key of one
/// of `entries` in place, and appends the others, creating the list (and
/// its parents) when missing.
fn apply_entry_edits(object: &mut Value, path: &Path, entries: Vec<(EntryKey, Value)>) {
    let Some((parent, last)) = field_parent(object, path) else {
        return;
    };
    let list = parent
        .entry(last)
        .or_insert_with(|| Value::Array(Vec::new()));
    if list.is_null() {
        *list = Value::Array(Vec::new());
    }
    if let Value::Array(list) = list {
        keyed_list::upsert(list, entries);
    }
}

/// Applies `edit`.
fn apply_map_edit(object: &mut Value, edit: MapEdit) {
    let Some((last, parents)) = edit.path.split_last() else {
        return;
    };
    // Removals alone never create anything: with no map there is nothing to remove.
    let create = !edit.set.is_empty();
    let edit_len = edit.set.len();
    let mut current = object;
    for segment in parents {
        let Some(map) = as_object_mut(current, create) else {
            return;
        };
        current = if create {
            map.entry(segment)
                .or_insert_with(|| Value::Object(Map::new()))
        } else {
            match map.get_mut(segment) {
                Some(next) => next,
                None => return,
            }
        };
    }
    let Some(parent) = as_object_mut(current, create) else {
        return;
    };
    if !create && !parent.contains_key(last) {
        return;
    }
    let target = parent
        .entry(last)
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(map) = as_object_mut(target, create) {
        for key in edit.remove.keys() {
            map.remove(key);
        }
        if map.is_empty() {
            // A map the object lacks, or held only what was removed (a tag
            // field the policy fills): the edit's map moves in, built once.
            *map = edit.set;
        } else if map.len() <= edit_len {
            // As many keys set as the map holds, or more: the map is rebuilt
            // in one pass from the two sorted runs, the set's last so its
            // values win, as inserts would, instead of searched once per key.
            let mut members: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
            members.extend(edit.set);
            *map = members.into_iter().collect();
        } else {
            map.extend(edit.set);
        }
        if edit.drop_when_empty && map.is_empty() {
            parent.remove(last);
        }
    }
}

/// The object behind `value`; with `create`, an explicit `null` becomes an
/// empty object.
fn as_object_mut(value: &mut Value, create: bool) -> Option<&mut Map<String, Value>> {
    if create && value.is_null() {
        *value = Value::Object(Map::new());
    }
    value.as_object_mut()
}
