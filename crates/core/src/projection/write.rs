//! Writing a split object back: the kept parts byte for byte, the decoded
//! parts from the (maybe edited) value, and the keys a map edit fills merged
//! in as the map is written.

use super::{Member, Shape};
use crate::plan::MapFill;
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
    pub fn write(
        &self,
        value: &Value,
        edited: &[&[&str]],
        out: &mut Vec<u8>,
    ) -> Result<(), serde_json::Error> {
        self.write_filled(value, edited, &[], out)
    }

    /// [`Shape::write`], merging each of `fills` into the map at its path
    /// as it writes it: the keys in order, a fill's value winning over the
    /// map's, the bytes those keys would have had inserted into the map
    /// first ([`crate::plan::Plan::apply_leaving_fills`] leaves them out
    /// only where [`Shape::writes_whole`] says the map is written here).
    pub fn write_filled(
        &self,
        value: &Value,
        edited: &[&[&str]],
        fills: &[MapFill],
        out: &mut Vec<u8>,
    ) -> Result<(), serde_json::Error> {
        let writer = Writer { edited, fills };
        writer.shaped(self, value, &mut Vec::new(), out)
    }

    /// Whether the value at `path` is written whole (decoded through this
    /// shape whole, or not in it at all, so new), not member by member
    /// around parts kept as text: where a [`MapFill`] can be merged in.
    pub fn writes_whole(&self, path: &[&str]) -> bool {
        let mut shape = self;
        for segment in path {
            match shape {
                Shape::Decoded | Shape::Text(_) => return true,
                // Written through the last occurrence of a repeated key.
                Shape::Object(members) => match members.iter().rev().find(|(k, _)| k == segment) {
                    Some((_, Member::Read(inner))) => shape = inner,
                    Some((_, Member::Kept(_))) => return false,
                    None => return true,
                },
                Shape::Array(_) => return false,
            }
        }
        matches!(shape, Shape::Decoded | Shape::Text(_))
    }
}

/// What [`Shape::write_filled`] writes with: the plan's edited paths and
/// the fills left for it.
struct Writer<'w> {
    edited: &'w [&'w [&'w str]],
    fills: &'w [MapFill],
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
                            write_str(key, out)?;
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
                            write_str(key, out)?;
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
                            self.whole_member(key, item, path, out)?;
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
            _ => self.whole(value, path, out),
        }
    }

    /// `value` written whole at `path`, the fill of a map at or below it
    /// merged in. Maps are walked only on the way to a fill; the rest is
    /// written as it is. Fills never lie inside arrays: a plan's map paths
    /// name no index, and applying one never walks into an array.
    fn whole<'s>(
        &self,
        value: &'s Value,
        path: &mut Vec<&'s str>,
        out: &mut Vec<u8>,
    ) -> Result<(), serde_json::Error> {
        let Value::Object(map) = value else {
            return write_value(value, out);
        };
        if !self.fills.iter().any(|fill| fill.path.starts_with(path)) {
            return write_value(value, out);
        }
        let fill = self.fills.iter().find(|fill| fill.path == path.as_slice());
        // The object's members, but those the fill sets, then the fill's:
        // no member is matched by position, so nothing rests on the order a
        // serde_json map iterates in.
        let set = fill.map(|fill| &fill.set);
        out.push(b'{');
        let mut first = true;
        let mut comma = |out: &mut Vec<u8>| {
            if !std::mem::take(&mut first) {
                out.push(b',');
            }
        };
        for (key, item) in map {
            if !set.is_some_and(|set| set.contains_key(key)) {
                comma(out);
                self.whole_member(key, item, path, out)?;
            }
        }
        for (key, text) in set.into_iter().flatten() {
            comma(out);
            write_str(key, out)?;
            out.push(b':');
            write_str(text, out)?;
        }
        out.push(b'}');
        Ok(())
    }

    /// `"key":` and the member's value written whole, at `path` + `key`.
    fn whole_member<'s>(
        &self,
        key: &'s str,
        item: &'s Value,
        path: &mut Vec<&'s str>,
        out: &mut Vec<u8>,
    ) -> Result<(), serde_json::Error> {
        write_str(key, out)?;
        out.push(b':');
        path.push(key);
        self.whole(item, path, out)?;
        path.pop();
        Ok(())
    }
}

/// `value` as `serde_json::to_writer` writes it, byte for byte, with the
/// strings that need no escape (nearly all of them: keys, label and tag
/// values) copied whole between their quotes instead of passed through
/// serde's escaping writer a fragment at a time.
pub(super) fn write_value(value: &Value, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    match value {
        Value::String(text) => write_str(text, out),
        Value::Object(map) => {
            out.push(b'{');
            for (index, (key, item)) in map.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_str(key, out)?;
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

/// A JSON string: serde_json escapes `"`, `\` and the control characters
/// below U+0020, and nothing else, so a string without them is its text
/// between quotes.
fn write_str(text: &str, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    if needs_escape(text.as_bytes()) {
        return serde_json::to_writer(out, text);
    }
    out.reserve(text.len() + 2);
    out.push(b'"');
    out.extend_from_slice(text.as_bytes());
    out.push(b'"');
    Ok(())
}

/// Whether `text` holds a byte JSON escapes: `"`, `\` or one below U+0020.
/// Eight bytes at a time, as one `u64` (wasm has 64-bit integers; its
/// `usize` is 32 bits): a byte of `x` is below `n` when subtracting `n`
/// from it borrows into its top bit, and equal to `c` when `x ^ c` is zero
/// there. A borrow only ever spills above a byte that matched, so the
/// answer for the whole word is exact. Every tag the policy writes passes
/// here, and the byte-at-a-time loop was the writer's largest cost.
pub(super) fn needs_escape(text: &[u8]) -> bool {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    const QUOTE: u64 = u64::from_le_bytes([b'"'; 8]);
    const BACKSLASH: u64 = u64::from_le_bytes([b'\\'; 8]);
    const SPACE: u64 = u64::from_le_bytes([0x20; 8]);
    let mut words = text.chunks_exact(8);
    for word in &mut words {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        let x = u64::from_le_bytes(bytes);
        // A byte of 0x80 or more (UTF-8 beyond ASCII) is none of the three;
        // `!x` keeps its top bit out of the answer.
        let below_space = x.wrapping_sub(SPACE);
        let quote = (x ^ QUOTE).wrapping_sub(ONES);
        let backslash = (x ^ BACKSLASH).wrapping_sub(ONES);
        if (below_space | quote | backslash) & !x & HIGH != 0 {
            return true;
        }
    }
    (words.remainder().iter()).any(|&byte| byte < 0x20 || byte == b'"' || byte == b'\\')
}

/// Whether an edit at one of `edited` may have changed what `path` holds:
/// it wrote at or below `path`, or at an ancestor of it.
fn touched(path: &[&str], edited: &[&[&str]]) -> bool {
    edited
        .iter()
        .any(|edit| edit.starts_with(path) || path.starts_with(edit))
}
