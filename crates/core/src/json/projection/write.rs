//! Writing a split object back: the kept parts byte for byte, the decoded
//! parts from the (maybe edited) value.

use super::{Member, Shape};
use crate::json::fields::Path;
use crate::json::quote;
use serde_json::Value;

impl Shape<'_> {
    /// Writes `value` (what was decoded through this shape, maybe edited)
    /// with the kept parts back in place: members in the order they came,
    /// kept ones byte for byte, decoded ones from `value`. A member the
    /// value no longer holds is left out; members the value gained are
    /// appended in its order. Where the value no longer has the shape's
    /// structure, the value is written whole.
    ///
    /// `edited` lists the paths the plan applied to `value` wrote (each
    /// edit changes the subtree at its path and may create the objects on
    /// the way): a member decoded whole from its text ([`Shape::Text`])
    /// at a path that is neither on nor below one of them holds what it
    /// held, and is written back as its text.
    pub(crate) fn write(
        &self,
        value: &Value,
        edited: &[Path],
        out: &mut Vec<u8>,
    ) -> Result<(), serde_json::Error> {
        let writer = Writer { edited };
        writer.shaped(self, value, &mut Vec::new(), out)
    }
}

/// What [`Shape::write`] writes with: the plan's edited paths.
struct Writer<'w> {
    edited: &'w [Path],
}

impl Writer<'_> {
    fn shaped<'s>(
        &self,
        shape: &'s Shape<'_>,
        value: &'s Value,
        path: &mut Vec<&'s str>,
        out: &mut Vec<u8>,
    ) -> Result<(), serde_json::Error> {
        let edited = self.edited;
        match (shape, value) {
            (Shape::Text(text), _) if !touched(path, edited) => {
                out.extend_from_slice(text.get().as_bytes());
                Ok(())
            }
            (Shape::Rewritten(shape), _) if !touched(path, edited) => {
                self.shaped(shape, value, path, out)
            }
            (Shape::Object(members), Value::Object(map)) => {
                out.push(b'{');
                let mut first = true;
                let mut comma = |out: &mut Vec<u8>| {
                    if !std::mem::take(&mut first) {
                        out.push(b',');
                    }
                };
                let mut written = 0;
                for (index, (key, member)) in members.iter().enumerate() {
                    match member {
                        Member::Kept(text) => {
                            comma(out);
                            quote::write_json_string(key, out);
                            out.push(b':');
                            out.extend_from_slice(text.get().as_bytes());
                        }
                        // A repeated key was decoded once, to its last
                        // value: written where it first came, through the
                        // shape (and text) of its last occurrence.
                        Member::Read(_) => {
                            let repeated = members[..index].iter().any(|(k, _)| k == key);
                            let Some(item) = map.get(key.as_ref()).filter(|_| !repeated) else {
                                continue;
                            };
                            let last = members[index..].iter().rev().find_map(|(k, m)| match m {
                                Member::Read(shape) if k == key => Some(shape),
                                _ => None,
                            });
                            let Some(shape) = last else { continue };
                            comma(out);
                            quote::write_json_string(key, out);
                            out.push(b':');
                            path.push(key);
                            self.shaped(shape, item, path, out)?;
                            path.pop();
                            written += 1;
                        }
                    }
                }
                if written < map.len() {
                    for (key, item) in map {
                        let read = members
                            .iter()
                            .any(|(k, m)| matches!(m, Member::Read(_)) && k == key);
                        if !read {
                            comma(out);
                            quote::write_json_string(key, out);
                            out.push(b':');
                            write_value(item, out)?;
                        }
                    }
                }
                out.push(b'}');
                Ok(())
            }
            // Paths through arrays name no index, as edits' paths never do:
            // every item is at the array's path.
            (Shape::Array(shapes), Value::Array(items)) if shapes.len() == items.len() => {
                out.push(b'[');
                for (index, (shape, item)) in shapes.iter().zip(items).enumerate() {
                    if index > 0 {
                        out.push(b',');
                    }
                    self.shaped(shape, item, path, out)?;
                }
                out.push(b']');
                Ok(())
            }
            _ => write_value(value, out),
        }
    }
}

/// `value` as `serde_json::to_writer` writes it, byte for byte, with the
/// strings written by [`quote::write_json_string`]: the runs between
/// escapes (nearly every string is one run: keys, label and tag values)
/// copied whole instead of searched a byte at a time.
pub(super) fn write_value(value: &Value, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    match value {
        Value::String(text) => {
            quote::write_json_string(text, out);
            Ok(())
        }
        Value::Object(map) => {
            out.push(b'{');
            for (index, (key, item)) in map.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                quote::write_json_string(key, out);
                out.push(b':');
                write_value(item, out)?;
            }
            out.push(b'}');
            Ok(())
        }
        Value::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_value(item, out)?;
            }
            out.push(b']');
            Ok(())
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => serde_json::to_writer(out, value),
    }
}

/// Whether an edit at one of `edited` may have changed what `path` holds:
/// it wrote at or below `path`, or at an ancestor of it.
fn touched(path: &[&str], edited: &[Path]) -> bool {
    edited
        .iter()
        .any(|edit| edit.starts_with(path) || edit.is_prefix_of(path))
}
