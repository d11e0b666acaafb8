//! Decoding only the parts of an object the policy reads.
//!
//! A parent (MachineDeployment, KubeadmControlPlane, Cluster, ClusterClass)
//! arrives from the host as a whole object of several KiB; the rules read a
//! few maps of it. Decoding through a [`Projection`] skips everything else
//! without allocating (serde's `IgnoredAny`), which was most of the cost of a
//! look-up in the benchmark. Arrays are traversed implicitly, as in
//! Kubewarden's field masks: a path through an array applies to every item.

mod refine;
mod whole;
mod write;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;
use whole::{Whole, decode_whole};

/// The set of paths to keep; everything outside them is dropped. Equal when
/// built from the same paths in the same order, as every projection the
/// rules build for one kind and version is (what a cache of look-up answers
/// keyed by projection needs). The segments are borrowed, from the rules'
/// static paths or from the settings (a composite resource's provider path).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Projection<'p> {
    /// Keep the whole subtree at this node.
    all: bool,
    /// Keyed by the paths' own segments: building a projection allocates no
    /// key, on every request. A node has a handful of children, so a list
    /// searched in order is as fast to read as a map and cheaper to build
    /// (it is built on every request, and a fresh instance keeps nothing).
    children: Vec<(&'p str, Projection<'p>)>,
}

impl<'p> Projection<'p> {
    /// The projection keeping exactly `paths` (and everything below them).
    pub fn of(paths: &[&[&'p str]]) -> Self {
        let mut root = Projection::default();
        root.keep_all(paths.iter().copied());
        root
    }

    /// Keeps each of `paths` (and everything below them) as well.
    pub(crate) fn keep_all<'a, 's: 'a + 'p>(
        &mut self,
        paths: impl IntoIterator<Item = &'a [&'s str]>,
    ) {
        for path in paths {
            self.keep(path.iter().copied());
        }
    }

    /// Whether it keeps nothing.
    pub(crate) fn is_empty(&self) -> bool {
        !self.all && self.children.is_empty()
    }

    /// Keeps the path of `segments` (and everything below it) as well.
    pub(crate) fn keep(&mut self, segments: impl IntoIterator<Item = &'p str>) {
        let mut node = self;
        for segment in segments {
            node = node.child_mut(segment);
        }
        node.all = true;
    }

    fn child(&self, segment: &str) -> Option<&Projection<'p>> {
        self.children
            .iter()
            .find(|(name, _)| *name == segment)
            .map(|(_, child)| child)
    }

    fn child_mut(&mut self, segment: &'p str) -> &mut Projection<'p> {
        let at = match self.children.iter().position(|(name, _)| *name == segment) {
            Some(at) => at,
            None => {
                self.children.push((segment, Projection::default()));
                self.children.len() - 1
            }
        };
        &mut self.children[at].1
    }

    /// The projection as Kubewarden `field_masks`: one dot path per kept
    /// subtree, sorted (the SDK sends a `BTreeSet`). A host that honours
    /// them prunes everything else but `metadata` before serialising the
    /// object into the guest; [`Projection::decode`] still guards against a
    /// host that ignores them. Paths never overlap, so the host's pruning
    /// keeps exactly what the decode keeps.
    pub fn field_masks(&self) -> BTreeSet<String> {
        // One buffer grows and shrinks along the walk: one allocation per
        // mask, paid on every look-up.
        fn walk(node: &Projection<'_>, prefix: &mut String, out: &mut BTreeSet<String>) {
            if node.all {
                out.insert(prefix.clone());
                return;
            }
            for (segment, child) in &node.children {
                let len = prefix.len();
                if len > 0 {
                    prefix.push('.');
                }
                prefix.push_str(segment);
                walk(child, prefix, out);
                prefix.truncate(len);
            }
        }
        let mut masks = BTreeSet::new();
        walk(self, &mut String::new(), &mut masks);
        masks
    }

    /// Keeps what `other` keeps as well: the mask of one look-up that
    /// answers a reader of either.
    pub fn unite(&mut self, other: &Projection<'p>) {
        if self.all {
            return;
        }
        if other.all {
            // Paths never overlap: the whole subtree replaces its parts.
            self.all = true;
            self.children.clear();
            return;
        }
        for (segment, theirs) in &other.children {
            self.child_mut(segment).unite(theirs);
        }
    }

    /// Decodes `json` keeping only the projected paths.
    pub fn decode(&self, json: &[u8]) -> Result<Value, serde_json::Error> {
        let mut deserializer = serde_json::Deserializer::from_str(text(json)?);
        let (value, _) = Seed {
            projection: self,
            keep: false,
        }
        .deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok(value)
    }

    /// Decodes `json` keeping only the projected paths, and the [`Shape`]
    /// that writes the rest back as it came: the skipped parts are borrowed
    /// from `json`, not decoded. One pass over the text, as [`decode`](Self::decode).
    pub(crate) fn split<'j>(
        &self,
        json: &'j [u8],
    ) -> Result<(Value, Shape<'j>), serde_json::Error> {
        let mut deserializer = serde_json::Deserializer::from_str(text(json)?);
        let split = self.splitter().deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok(split)
    }

    /// [`split`](Self::split) as a seed, for a value inside a larger
    /// document: the payload's object, split as the payload is read.
    pub(crate) fn splitter<'de>(
        &self,
    ) -> impl DeserializeSeed<'de, Value = (Value, Shape<'de>)> + '_ {
        Seed {
            projection: self,
            keep: true,
        }
    }
}

/// `json` as text, checked to be UTF-8 in one pass, for serde_json to read.
///
/// Every decode in the module reads text (`Deserializer::from_str`), never
/// bytes: each reader is its own copy of serde_json's decoders in the
/// module, and from bytes serde_json checks each string it decodes for
/// UTF-8 on its own, which costs more than this one pass over the whole
/// input (most of which is strings).
pub(crate) fn text(json: &[u8]) -> Result<&str, serde_json::Error> {
    std::str::from_utf8(json).map_err(|e| {
        de::Error::custom(format_args!(
            "not UTF-8: invalid byte at offset {}",
            e.valid_up_to()
        ))
    })
}

/// Where a projected decode left parts of the text undecoded, so they can be
/// written back byte for byte around the decoded (and maybe edited) parts.
#[derive(Debug, Clone)]
pub(crate) enum Shape<'j> {
    /// Decoded whole: the value is written.
    Decoded,
    /// A member decoded whole from this text: written back as the text
    /// when no edit of the plan touched it (the host parses it again either
    /// way), as the value otherwise. Copying the text costs a fraction of
    /// encoding the value: the labels of a composite resource, read for its
    /// tags and never edited, are written back this way.
    Text(&'j RawValue),
    /// An object with some members decoded and others kept as text, in the
    /// order they came.
    Object(Vec<(Cow<'j, str>, Member<'j>)>),
    /// An array whose items each have their own shape.
    Array(Vec<Shape<'j>>),
    /// A subtree split in part, then decoded whole ([`Shape::refine`]):
    /// written through its shape, as its text would be, when no edit of the
    /// plan touched it, as the value otherwise.
    Rewritten(Box<Shape<'j>>),
}

/// One member of a [`Shape::Object`].
#[derive(Debug, Clone)]
pub(crate) enum Member<'j> {
    /// Outside the projection: the text as it came.
    Kept(&'j RawValue),
    /// Inside it: decoded into the value under the same key.
    Read(Shape<'j>),
}

/// The projected decode: `keep` says whether to keep the skipped parts as
/// text ([`Projection::split`]) or skip them ([`Projection::decode`]). A
/// field, not a type parameter: one copy of the decoder in the module.
#[derive(Clone, Copy)]
struct Seed<'a, 'p> {
    projection: &'a Projection<'p>,
    keep: bool,
}

impl<'de> DeserializeSeed<'de> for Seed<'_, '_> {
    type Value = (Value, Shape<'de>);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        if self.projection.all {
            Ok((Whole.deserialize(deserializer)?, Shape::Decoded))
        } else {
            deserializer.deserialize_any(ProjectionVisitor(self))
        }
    }
}

struct ProjectionVisitor<'a, 'p>(Seed<'a, 'p>);

/// An object key, borrowed from the input unless it holds an escape.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

impl<'de> Visitor<'de> for ProjectionVisitor<'_, '_> {
    type Value = (Value, Shape<'de>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut kept = Map::new();
        let mut members = Vec::new();
        // Keys are borrowed from the input where they can be: most are
        // skipped, and only a kept one needs a `String`.
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let Seed { projection, keep } = self.0;
            match projection.child(key.as_ref()) {
                // Kept as text too: the member is scanned twice, once for
                // its text and once decoded from it, which costs less than
                // encoding it again when nothing edits it.
                Some(child) if keep && child.all => {
                    let text = map.next_value::<&'de RawValue>()?;
                    let value = decode_whole(text).map_err(de::Error::custom)?;
                    members.push((key.clone(), Member::Read(Shape::Text(text))));
                    kept.insert(key.into_owned(), value);
                }
                Some(child) => {
                    let child = Seed {
                        projection: child,
                        keep,
                    };
                    let (value, shape) = map.next_value_seed(child)?;
                    if keep {
                        members.push((key.clone(), Member::Read(shape)));
                    }
                    kept.insert(key.into_owned(), value);
                }
                None if keep => {
                    let text = map.next_value::<&'de RawValue>()?;
                    members.push((key, Member::Kept(text)));
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok((Value::Object(kept), Shape::Object(members)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        let mut shapes = Vec::new();
        while let Some((item, shape)) = seq.next_element_seed(self.0)? {
            items.push(item);
            if self.0.keep {
                shapes.push(shape);
            }
        }
        Ok((Value::Array(items), Shape::Array(shapes)))
    }

    // Scalars where the projection expected structure are kept as they are,
    // so the reader reports the wrong type with the field's name.
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok((Value::Bool(v), Shape::Decoded))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok((Value::from(v), Shape::Decoded))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok((Value::from(v), Shape::Decoded))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok((Value::from(v), Shape::Decoded))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok((Value::String(v.to_owned()), Shape::Decoded))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok((Value::String(v), Shape::Decoded))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok((Value::Null, Shape::Decoded))
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok((Value::Null, Shape::Decoded))
    }
}

#[cfg(test)]
mod tests {
    use super::write::write_value;
    use super::*;
    use crate::json::fields::Path;
    use serde_json::json;

    // Only the tests compare projections: a declaration against another.
    impl Projection<'_> {
        /// Whether everything `other` keeps, this keeps: a value split
        /// through this one holds whatever a reader of `other`'s paths reads.
        pub(crate) fn covers(&self, other: &Projection<'_>) -> bool {
            self.all
                || (!other.all
                    && other.children.iter().all(|(segment, theirs)| {
                        self.child(segment).is_some_and(|ours| ours.covers(theirs))
                    }))
        }
    }

    /// Decoded whole, a value is what `Value::deserialize` gives: repeated
    /// keys (the last wins), unsorted keys, objects on either side of the
    /// bulk-build threshold, numbers of every kind, and the raw-value key.
    #[test]
    fn whole_decodes_like_value() {
        let many: String = (0..30)
            .rev()
            .map(|i| format!("\"k{i:02}\":{{\"v\":[{i},-{i},{i}.5,null,true,\"s\\u00e9\"]}}"))
            .collect::<Vec<_>>()
            .join(",");
        let texts = [
            r#"{"b":1,"a":2,"b":3}"#.to_owned(),
            format!(r#"{{{many},"k05":"again","k29":{{}}}}"#),
            format!(r#"[{{{many}}},{{}},[],"x",18446744073709551615,-9223372036854775808,1e400]"#),
            r#"{"$serde_json::private::RawValue":"[1,{\"a\":2}]"}"#.to_owned(),
            r#"{"$serde_json::private::RawValue":"not json"}"#.to_owned(),
        ];
        for text in &texts {
            let mut ours = serde_json::Deserializer::from_str(text);
            let ours = Whole.deserialize(&mut ours).map_err(|e| e.to_string());
            let theirs = serde_json::from_str::<Value>(text).map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "{text}");
        }
    }

    #[test]
    fn decode_keeps_projected_paths_and_drops_the_rest() {
        let md = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
                        "metadata": {"name": "md", "labels": {"a": "1"}, "annotations": {"b": "2"},
                                     "managedFields": [{"manager": "x"}]},
                        "spec": {"replicas": 3, "template": {"metadata": {"labels": {"env": "prod"}},
                                                             "spec": {"version": "v1.31.0"}}},
                        "status": {"phase": "Running"}});
        let projection = Projection::of(&[
            &["metadata", "annotations"],
            &["spec", "template", "metadata"],
        ]);
        let bytes = serde_json::to_vec(&md).unwrap();
        assert_eq!(
            projection.decode(&bytes).unwrap(),
            json!({"metadata": {"annotations": {"b": "2"}},
                   "spec": {"template": {"metadata": {"labels": {"env": "prod"}}}}})
        );
    }

    #[test]
    fn decode_traverses_arrays_implicitly() {
        let cluster = json!({"spec": {"topology": {"workers": {"machineDeployments": [
            {"name": "md-0", "class": "c", "replicas": 2, "metadata": {"labels": {"x": "1"}}},
            {"name": "md-1", "class": "c"}]}}}});
        let projection = Projection::of(&[
            &["spec", "topology", "workers", "machineDeployments", "name"],
            &[
                "spec",
                "topology",
                "workers",
                "machineDeployments",
                "metadata",
            ],
        ]);
        assert_eq!(
            projection
                .decode(&serde_json::to_vec(&cluster).unwrap())
                .unwrap(),
            json!({"spec": {"topology": {"workers": {"machineDeployments": [
                {"name": "md-0", "metadata": {"labels": {"x": "1"}}}, {"name": "md-1"}]}}}})
        );
    }

    #[test]
    fn decode_keeps_wrong_types_for_the_reader_to_report() {
        let md = json!({"spec": {"template": "oops", "other": 1}});
        let projection = Projection::of(&[&["spec", "template", "metadata"]]);
        assert_eq!(
            projection
                .decode(&serde_json::to_vec(&md).unwrap())
                .unwrap(),
            json!({"spec": {"template": "oops"}})
        );
    }

    #[test]
    fn field_masks_name_each_kept_subtree_once_in_sorted_order() {
        let projection = Projection::of(&[
            &["spec", "template", "metadata", "labels"],
            &["metadata", "annotations"],
            &["spec", "template", "metadata"],
            &["spec", "template", "metadata", "annotations"],
            &["spec", "topology", "workers", "machineDeployments", "name"],
        ]);
        assert_eq!(
            projection.field_masks().into_iter().collect::<Vec<_>>(),
            [
                "metadata.annotations",
                "spec.template.metadata",
                "spec.topology.workers.machineDeployments.name"
            ]
        );
    }

    /// What no text is kept for is written as serde_json writes it, byte
    /// for byte: escapes, control characters, non-ASCII, numbers, nesting.
    #[test]
    fn values_are_written_as_serde_json_writes_them() {
        let values = [
            json!({"plexsphere:team/a": "caf\u{e9}", "q\"uote": "back\\slash", "tab\t": "\u{1}\u{1f}\u{7f}",
                   "n": [1, -2, 2.5, 1e300, null, true, false, {}, [], ""], "emoji": "😀\u{2028}"}),
            json!("plain"),
            json!([{"a": {"b": {"c": ["d", 0.1]}}}]),
            json!(18446744073709551615u64),
        ];
        for value in &values {
            let mut ours = Vec::new();
            write_value(value, &mut ours).unwrap();
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string(value).unwrap()
            );
        }
    }

    #[test]
    fn covers_what_it_keeps_and_not_more() {
        let xr = xr_projection();
        assert!(xr.covers(&xr));
        assert!(xr.covers(&Projection::of(&[
            &["metadata", "labels", "a"],
            &["spec", "cloudTags"]
        ])));
        assert!(xr.covers(&Projection::default()));
        assert!(!xr.covers(&Projection::of(&[&["spec", "parameters"]])));
        assert!(!xr.covers(&Projection::of(&[&["spec", "other", "provider"]])));
        assert!(!xr.covers(&Projection::of(&[&["metadata"]])));
        assert!(!Projection::of(&[&["spec"]]).covers(&xr_projection()));
        assert!(Projection::of(&[&["metadata"], &["spec"]]).covers(&xr));
    }

    #[test]
    fn united_it_keeps_what_either_keeps() {
        let topology: &[&[&str]] = &[
            &["spec", "topology", "classRef", "name"],
            &["spec", "topology", "controlPlane", "metadata", "labels"],
        ];
        let labels: &[&[&str]] = &[&["metadata", "labels"], &["metadata", "annotations"]];
        let mut both = Projection::of(topology);
        both.unite(&Projection::of(labels));
        assert_eq!(
            both.field_masks().into_iter().collect::<Vec<_>>(),
            [
                "metadata.annotations",
                "metadata.labels",
                "spec.topology.classRef.name",
                "spec.topology.controlPlane.metadata.labels",
            ]
        );
        assert!(both.covers(&Projection::of(topology)) && both.covers(&Projection::of(labels)));
        // A whole subtree absorbs the paths under it, on either side.
        both.unite(&Projection::of(&[&["spec", "topology"]]));
        assert_eq!(
            both.field_masks().into_iter().collect::<Vec<_>>(),
            ["metadata.annotations", "metadata.labels", "spec.topology"]
        );
        both.unite(&Projection::of(&[&["spec", "topology", "workers"]]));
        assert_eq!(both.field_masks().len(), 3);
    }

    #[test]
    fn decode_rejects_invalid_json() {
        assert!(Projection::of(&[&["a"]]).decode(b"{\"a\": ").is_err());
        assert!(Projection::of(&[&["a"]]).decode(b"{} trailing").is_err());
    }

    const XR: &str = r#"{"apiVersion": "example.org/v1", "metadata": {"name": "x",
        "labels": {"team": "caf\u00e9", "b": 1e2},
        "annotations": {"a": "1"}}, "spec": {"parameters": {"provider": "aws", "n": 1.50},
        "cloudTags": {"plexsphere:team": "old"}}, "status": {"ready": true}}"#;

    fn xr_projection() -> Projection<'static> {
        Projection::of(&[
            &["metadata", "labels"],
            &["metadata", "annotations"],
            &["spec", "cloudTags"],
            &["spec", "parameters", "provider"],
        ])
    }

    /// What no edit touched goes back as it came, byte for byte, decoded
    /// members included (escapes, spacing, number spellings); what an edit
    /// wrote is encoded from the value.
    #[test]
    fn members_no_edit_touched_are_written_as_their_text() {
        let projection = xr_projection();
        let (mut value, shape) = projection.split(XR.as_bytes()).unwrap();
        value["spec"]["cloudTags"]["plexsphere:team"] = json!("café");
        value["metadata"]["annotations"]["new"] = json!("2");
        let mut out = Vec::new();
        let edited = [
            Path::Static(&["spec", "cloudTags"]),
            Path::Static(&["metadata", "annotations"]),
        ];
        shape.write(&value, &edited, &mut out).unwrap();
        let expected = r#"{"apiVersion":"example.org/v1","metadata":{"name":"x","labels":{"team": "caf\u00e9", "b": 1e2},"annotations":{"a":"1","new":"2"}},"spec":{"parameters":{"provider":"aws","n":1.50},"cloudTags":{"plexsphere:team":"café"}},"status":{"ready": true}}"#;
        assert_eq!(String::from_utf8(out).unwrap(), expected);
        assert_eq!(
            serde_json::from_str::<Value>(expected).unwrap()["metadata"]["labels"],
            json!({"team": "café", "b": 100.0})
        );
    }

    /// An edit at an ancestor (a map created or dropped on the way) or
    /// below a member decoded whole counts as touching it.
    #[test]
    fn an_edit_above_or_below_a_member_touches_it() {
        let projection = Projection::of(&[&["metadata", "labels"], &["spec"]]);
        let (value, shape) = projection.split(XR.as_bytes()).unwrap();
        for edited in [&["metadata"][..], &["metadata", "labels", "team"][..]] {
            let mut out = Vec::new();
            shape
                .write(&value, &[Path::Static(edited)], &mut out)
                .unwrap();
            let out = String::from_utf8(out).unwrap();
            assert!(
                out.contains(r#""labels":{"b":100.0,"team":"café"}"#),
                "{out}"
            );
            assert!(
                out.contains(r#""spec":{"parameters": {"provider": "aws""#),
                "{out}"
            );
        }
    }

    /// Keys are written as serde_json writes them: as they came unless
    /// they need an escape.
    #[test]
    fn keys_are_written_as_they_came_or_encoded_when_escaped() {
        let text = r#"{"a\u0062": 1, "c\"": {"d": 2}, "e/é": true}"#;
        let projection = Projection::of(&[&["c\""], &["x"]]);
        let (value, shape) = projection.split(text.as_bytes()).unwrap();
        let mut out = Vec::new();
        shape.write(&value, &[], &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(out, r#"{"ab":1,"c\"":{"d": 2},"e/é":true}"#);
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
    }

    /// A repeated key was decoded to its last value: it is written once,
    /// where it first came, as the text of its last occurrence.
    #[test]
    fn a_repeated_member_is_written_once_as_its_last_text() {
        let text = r#"{"metadata": {"labels": {"a": "first"}, "labels": {"a": "last"}}}"#;
        let projection = Projection::of(&[&["metadata", "labels"]]);
        let (value, shape) = projection.split(text.as_bytes()).unwrap();
        assert_eq!(value, json!({"metadata": {"labels": {"a": "last"}}}));
        let mut out = Vec::new();
        shape.write(&value, &[], &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"metadata":{"labels":{"a": "last"}}}"#
        );
    }
}
