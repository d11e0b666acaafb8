//! Decoding more of an object already split: what a wider projection keeps
//! beyond what the split decoded, from the parts the split kept as text.
//!
//! The wire splits a request's object as the payload is read, before the
//! settings; a composite resource's provider path the settings move is
//! read only once they are known. The members that path reaches were kept
//! as text by the first split, so they are split from that text here, in
//! place, and the object is never written back to be split again. The
//! result is what splitting the written-back object through the wider
//! projection gives: the same value, and a shape that writes the same
//! bytes, edited or not.

use super::whole::decode_whole;
use super::{Member, Projection, Shape};
use serde_json::Value;

impl<'j> Shape<'j> {
    /// Decodes into `value` (what was split through this shape) what
    /// `projection` keeps beyond it.
    pub(crate) fn refine(
        &mut self,
        value: &mut Value,
        projection: &Projection<'_>,
    ) -> Result<(), serde_json::Error> {
        if projection.all {
            return self.complete(value);
        }
        match (self, value) {
            (Shape::Object(members), Value::Object(map)) => {
                for (key, member) in members.iter_mut() {
                    let Some(child) = projection.child(key) else {
                        continue;
                    };
                    match member {
                        Member::Kept(text) => {
                            let text: &'j _ = *text;
                            let (read, shape) = match child.all {
                                true => (decode_whole(text)?, Shape::Text(text)),
                                false => child.split(text.get().as_bytes())?,
                            };
                            map.insert(key.as_ref().to_owned(), read);
                            *member = Member::Read(shape);
                        }
                        Member::Read(shape) => {
                            if let Some(read) = map.get_mut(key.as_ref()) {
                                shape.refine(read, child)?;
                            }
                        }
                    }
                }
                Ok(())
            }
            (Shape::Array(shapes), Value::Array(items)) => {
                for (shape, item) in shapes.iter_mut().zip(items) {
                    shape.refine(item, projection)?;
                }
                Ok(())
            }
            // Decoded whole, or a scalar where the projection expected
            // structure: nothing more to decode.
            _ => Ok(()),
        }
    }

    /// Decodes the rest of a subtree the split decoded in part, now kept
    /// whole: the value whole, and a shape that writes what was split as
    /// it would be written back, unless an edit touches it
    /// ([`Shape::Rewritten`]), as a member decoded whole from its text is.
    fn complete(&mut self, value: &mut Value) -> Result<(), serde_json::Error> {
        match self {
            Shape::Decoded | Shape::Text(_) | Shape::Rewritten(_) => return Ok(()),
            Shape::Object(_) | Shape::Array(_) => {}
        }
        self.decode_kept(value)?;
        let inner = std::mem::replace(self, Shape::Decoded);
        *self = Shape::Rewritten(Box::new(inner));
        Ok(())
    }

    /// Every member of the subtree kept as text, decoded whole into
    /// `value`.
    fn decode_kept(&mut self, value: &mut Value) -> Result<(), serde_json::Error> {
        match (self, value) {
            (Shape::Object(members), Value::Object(map)) => {
                for (key, member) in members.iter_mut() {
                    match member {
                        Member::Kept(text) => {
                            let text: &'j _ = *text;
                            map.insert(key.as_ref().to_owned(), decode_whole(text)?);
                            *member = Member::Read(Shape::Text(text));
                        }
                        Member::Read(shape) => {
                            if let Some(read) = map.get_mut(key.as_ref()) {
                                shape.decode_kept(read)?;
                            }
                        }
                    }
                }
                Ok(())
            }
            (Shape::Array(shapes), Value::Array(items)) => {
                for (shape, item) in shapes.iter_mut().zip(items) {
                    shape.decode_kept(item)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::fields::Path;
    use serde_json::json;

    /// `object` split through `narrow`, then refined to `wide`, against the
    /// way it was done before: written back, and split again through
    /// `wide`. The values are equal, and the shapes write the same bytes,
    /// with no edit and with an edit at each of `edits`.
    fn refines_as_a_second_split(object: &str, narrow: &[&[&str]], wide: &[&[&str]]) {
        let text = object.as_bytes();
        let (narrow, wide) = (Projection::of(narrow), Projection::of(wide));
        let (mut value, mut shape) = narrow.split(text).unwrap();
        let mut written = Vec::new();
        shape.write(&value, &[], &mut written).unwrap();
        let (again, again_shape) = wide.split(&written).unwrap();
        shape.refine(&mut value, &wide).unwrap();
        assert_eq!(value, again, "{object}");
        let edits: [&[&str]; 3] = [
            &["spec", "cloudTags"],
            &["spec", "parameters"],
            &["metadata"],
        ];
        // An edit creates the objects on its way, as the plan's do; a path
        // through a scalar is no place for one.
        let room = |edit: &[&str]| {
            (0..=edit.len()).all(|at| {
                let above = edit[..at].iter().try_fold(&value, |v, s| v.get(*s));
                above.is_none_or(|v| v.is_object() || v.is_null())
            })
        };
        for edit in [None].into_iter().chain(edits.map(Some)) {
            if edit.is_some_and(|edit| !room(edit)) {
                continue;
            }
            let edited: Vec<Path> = edit.map(Path::Static).into_iter().collect();
            let (mut ours, mut theirs) = (value.clone(), again.clone());
            if let Some(edit) = edit {
                for target in [&mut ours, &mut theirs] {
                    let mut at = &mut *target;
                    for segment in edit {
                        at = &mut at[*segment];
                    }
                    at["added"] = json!("x");
                }
            }
            let (mut a, mut b) = (Vec::new(), Vec::new());
            shape.write(&ours, &edited, &mut a).unwrap();
            again_shape.write(&theirs, &edited, &mut b).unwrap();
            assert_eq!(
                String::from_utf8(a).unwrap(),
                String::from_utf8(b).unwrap(),
                "{object} edited at {edit:?}"
            );
        }
    }

    /// A composite resource as an API server may write it: members out of
    /// key order (so that writing a value whole shows), an escape, numbers
    /// of each kind, arrays of objects and of scalars.
    const COMPOSITE: &str = r#"{"kind":"XNetwork","apiVersion":"platform.example.org/v1alpha1",
        "metadata":{"name":"n","labels":{"team":"a"},"annotations":{"z":"1","a":"2"}},
        "spec":{"parameters":{"region":"eu-1","provider":"aws","sizes":[1,2.5,3e2]},
        "forProvider":{"nested":{"b":[{"cloud":"x"},{"y":"\u00e9"}]},"cloud":"hetzner"},
        "items":[{"keep":{"k":1},"cloud":"a"},{"other":true},"scalar"],
        "cloudTags":{"plexsphere:team":"a"}},
        "status":{"conditions":[{"type":"Ready"}]}}"#;

    const DEFAULT: [&[&str]; 3] = [
        &["metadata", "labels"],
        &["spec", "parameters", "provider"],
        &["spec", "cloudTags"],
    ];

    #[test]
    fn a_moved_provider_path_is_decoded_from_the_text_the_split_kept() {
        let moved: [&[&str]; 4] = [
            &["spec", "forProvider", "cloud"],
            &["spec", "items", "cloud"],
            &["spec", "forProvider", "nested", "b", "cloud"],
            &["status"],
        ];
        for path in moved {
            let wide = [DEFAULT[0], DEFAULT[1], DEFAULT[2], path];
            refines_as_a_second_split(COMPOSITE, &DEFAULT, &wide);
        }
    }

    #[test]
    fn a_path_that_keeps_whole_what_was_split_in_part_writes_as_its_text_would() {
        let wider: [&[&str]; 3] = [&["spec", "parameters"], &["spec"], &["metadata"]];
        for path in wider {
            let wide = [DEFAULT[0], DEFAULT[1], DEFAULT[2], path];
            refines_as_a_second_split(COMPOSITE, &DEFAULT, &wide);
        }
        // Not an object where the path goes on: kept as it is.
        let scalar = r#"{"spec":{"parameters":"text","cloudTags":1}}"#;
        let wide = [
            DEFAULT[0],
            DEFAULT[1],
            DEFAULT[2],
            &["spec", "parameters", "region"],
        ];
        refines_as_a_second_split(scalar, &DEFAULT, &wide);
    }
}
