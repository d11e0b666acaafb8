//! A plan laid over the object it was computed for: a second capability
//! adding its map edits to the plan of the first (CAPI metadata, then an
//! infrastructure object's cloud tags), and reading a map as the plan will
//! leave it, so one decision sees what the other has decided.

use super::{Edit, MapEdit, Plan};
use crate::json::fields::{self, FieldError, StringMap};
use serde_json::Value;

impl Plan {
    /// Adds a map edit, folded into the plan's edit of the same map if it
    /// has one (one edit per map path: one line per map in reports). Where
    /// both touch a key, `edit` decides it, and a correction still reports
    /// the value the object held.
    pub(crate) fn merge(&mut self, edit: MapEdit) {
        let existing = self.edits.iter_mut().find_map(|e| match e {
            Edit::Map(e) if e.path == edit.path => Some(e),
            _ => None,
        });
        let Some(existing) = existing else {
            return self.push(edit);
        };
        for (key, why) in edit.remove {
            // A key the earlier edit added goes again; one the object holds
            // is removed from it.
            let added_only =
                existing.set.remove(&key).is_some() && !existing.replaced.contains_key(&key);
            existing.replaced.remove(&key);
            if !added_only {
                existing.remove.insert(key, why);
            }
        }
        for (key, value) in edit.set {
            // `edit` compared with the map as the earlier edit leaves it:
            // what it replaces is the object's only where that edit did
            // not set the key.
            if !existing.set.contains_key(&key)
                && let Some(was) = edit.replaced.get(&key)
            {
                existing.replaced.insert(key.clone(), was.clone());
            }
            existing.remove.remove(&key);
            existing.set.insert(key, value);
        }
        existing.drop_when_empty |= edit.drop_when_empty;
    }

    /// The string map at `path` of `object` as it will be stored: the
    /// object's own entries overlaid by this plan's edits for that path.
    pub(crate) fn resulting_map<'a>(
        &'a self,
        object: &'a Value,
        path: &[&str],
    ) -> Result<StringMap<'a>, FieldError> {
        let mut map = fields::string_map(object, path)?;
        for edit in self.map_edits().filter(|e| e.path == path) {
            for key in edit.remove.keys() {
                map.remove(key.as_str());
            }
            map.extend(edit.entries());
        }
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ANNOTATIONS: &[&str] = &["metadata", "annotations"];

    fn edit(set: &[(&str, &str)], replaced: &[(&str, &str)], remove: &[&str]) -> MapEdit {
        fn owned<M: FromIterator<(String, String)>>(pairs: &[(&str, &str)]) -> M {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        }
        MapEdit {
            set: (set.iter())
                .map(|(k, v)| (k.to_string(), Value::from(*v)))
                .collect(),
            replaced: owned(replaced),
            remove: remove
                .iter()
                .map(|k| (k.to_string(), "stale".into()))
                .collect(),
            ..MapEdit::new(ANNOTATIONS)
        }
    }

    #[test]
    fn merge_folds_into_the_edit_of_the_same_map() {
        let object = json!({"metadata": {"annotations": {"held": "0", "old": "x"}}});
        let mut plan = Plan::default();
        plan.push(edit(&[("a", "1"), ("held", "1")], &[("held", "0")], &[]));
        // Computed over the map as the first edit leaves it.
        plan.merge(edit(
            &[("a", "2"), ("held", "2"), ("b", "3")],
            &[("a", "1"), ("held", "1")],
            &["old"],
        ));
        assert_eq!(plan.edits.len(), 1);
        let merged = plan.map_edits().next().unwrap();
        // "a" was added by the first edit: still an addition for the object.
        assert_eq!(
            merged,
            &edit(
                &[("a", "2"), ("b", "3"), ("held", "2")],
                &[("held", "0")],
                &["old"]
            )
        );
        let mut applied = object.clone();
        plan.apply(&mut applied);
        assert_eq!(
            applied,
            json!({"metadata": {"annotations": {"a": "2", "b": "3", "held": "2"}}})
        );
    }

    #[test]
    fn merge_removing_a_key_the_earlier_edit_added_leaves_the_object_alone() {
        let mut plan = Plan::default();
        plan.push(edit(&[("a", "1")], &[], &[]));
        plan.merge(edit(&[], &[], &["a"]));
        assert_eq!(plan.map_edits().next(), Some(&edit(&[], &[], &[])));
    }

    #[test]
    fn resulting_map_overlays_the_plans_edits() {
        let object = json!({"metadata": {"annotations": {"keep": "k", "old": "x"}}});
        let mut plan = Plan::default();
        plan.push(edit(&[("new", "n")], &[], &["old"]));
        let map = plan.resulting_map(&object, ANNOTATIONS).unwrap();
        assert_eq!(map, [("keep", "k"), ("new", "n")].into());
    }
}
