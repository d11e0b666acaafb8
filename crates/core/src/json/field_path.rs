//! Where a field lies in an object: as the policy's tables and the plan
//! hold it ([`Path`]), and as users read it in a message ([`FieldPath`]).

use crate::json::quote::quoted;
use std::fmt;
use std::sync::Arc;

/// Where a field lies in an object, as the tag table and the plan hold it:
/// a path of the policy's own tables, or the tag field a settings row
/// names (`cloudTags.managedResources.kinds[].field`), kept dotted as
/// written and shared with the settings, so that a request clones the
/// handle, never the text.
#[derive(Debug, Clone)]
pub(crate) enum Path {
    /// A path of the policy's own tables.
    Static(&'static [&'static str]),
    /// A dotted path the settings name, no segment empty.
    Dotted(Arc<str>),
}

impl Path {
    /// Its segments, in order.
    pub(crate) fn segments(&self) -> Segments<'_, '_> {
        match self {
            Path::Static(path) => Segments::Slice(path.iter()),
            Path::Dotted(text) => Segments::Dotted(text.split('.')),
        }
    }

    /// Its last segment and the segments before it.
    pub(crate) fn split_last(&self) -> Option<(&str, Segments<'_, '_>)> {
        match self {
            Path::Static(path) => {
                let (last, parents) = path.split_last()?;
                Some((last, Segments::Slice(parents.iter())))
            }
            Path::Dotted(text) => Some(match text.rsplit_once('.') {
                Some((parents, last)) => (last, Segments::Dotted(parents.split('.'))),
                None => (text, Segments::Slice([].iter())),
            }),
        }
    }

    /// The path dotted, `spec.forProvider.tags`, in one allocation.
    pub(crate) fn dotted(&self) -> String {
        match self {
            Path::Static(path) => path.join("."),
            Path::Dotted(text) => text.to_string(),
        }
    }

    /// Whether the path starts with the segments of `prefix`.
    pub(crate) fn starts_with(&self, prefix: &[&str]) -> bool {
        match self {
            Path::Static(path) => path.starts_with(prefix),
            Path::Dotted(_) => {
                let mut segments = self.segments();
                prefix.iter().all(|p| segments.next() == Some(*p))
            }
        }
    }

    /// Whether `path` starts with the segments of this path.
    pub(crate) fn is_prefix_of(&self, path: &[&str]) -> bool {
        match self {
            Path::Static(prefix) => path.starts_with(prefix),
            Path::Dotted(_) => {
                let mut rest = path.iter();
                self.segments().all(|segment| rest.next() == Some(&segment))
            }
        }
    }
}

/// Equal when the segments are. The policy's own paths, nearly all that
/// are compared, compare as slices: lengths first, no walk.
impl PartialEq for Path {
    fn eq(&self, other: &Path) -> bool {
        match (self, other) {
            (Path::Static(a), Path::Static(b)) => a == b,
            _ => self.segments().eq(other.segments()),
        }
    }
}

impl Eq for Path {}

impl PartialEq<&[&str]> for Path {
    fn eq(&self, other: &&[&str]) -> bool {
        match self {
            Path::Static(path) => path == other,
            Path::Dotted(_) => self.segments().eq(other.iter().copied()),
        }
    }
}

/// The segments of a [`Path`], or of a path held as a slice of them, each
/// borrowed for `'p`.
#[derive(Debug, Clone)]
pub(crate) enum Segments<'a, 'p> {
    /// Of a slice.
    Slice(std::slice::Iter<'a, &'p str>),
    /// Of a dotted path.
    Dotted(std::str::Split<'p, char>),
}

impl<'a, 'p> Segments<'a, 'p> {
    /// The segments of `path`.
    pub(crate) fn of(path: &'a [&'p str]) -> Self {
        Segments::Slice(path.iter())
    }
}

impl<'p> Iterator for Segments<'_, 'p> {
    type Item = &'p str;

    fn next(&mut self) -> Option<&'p str> {
        match self {
            Segments::Slice(segments) => segments.next().copied(),
            Segments::Dotted(segments) => segments.next(),
        }
    }
}

/// A field inside an object, rendered the way users read it:
/// `metadata.annotations["cloud-tags.plexsphere.io/labels"]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldPath(String);

impl FieldPath {
    /// The path of a chain of object members.
    pub(crate) fn of(segments: &[&str]) -> Self {
        Self(segments.join("."))
    }

    /// The path of `path`.
    pub(crate) fn at(path: &Path) -> Self {
        Self(path.dotted())
    }

    /// [`FieldPath::of`] the `segments`, sized as `join` sizes it.
    pub(super) fn joined<'p>(segments: impl Iterator<Item = &'p str> + Clone) -> Self {
        let len = segments.clone().map(|s| s.len() + 1).sum::<usize>();
        let mut path = String::with_capacity(len.saturating_sub(1));
        for (i, segment) in segments.enumerate() {
            if i > 0 {
                path.push('.');
            }
            path.push_str(segment);
        }
        Self(path)
    }

    /// This path extended by a map key (rendered in brackets, since label
    /// keys contain dots and slashes).
    pub(crate) fn key(&self, key: &str) -> Self {
        Self(format!("{}[{}]", self.0, quoted(key)))
    }

    /// This path extended by an object member: `spec` → `spec.template`
    /// (from the document itself, [`FieldPath::of`]`(&[])`: `spec`).
    pub(crate) fn member(&self, name: &str) -> Self {
        if self.0.is_empty() {
            Self(name.to_owned())
        } else {
            Self(format!("{}.{name}", self.0))
        }
    }

    /// Whether this is the path of the document itself.
    pub(crate) fn is_document(&self) -> bool {
        self.0.is_empty()
    }

    /// This path extended by a list index: `taints` → `taints[0]`.
    pub(crate) fn index(&self, index: usize) -> Self {
        Self(format!("{}[{index}]", self.0))
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
