//! The tags stage's part of an [`Explanation`](crate::explain::Explanation): the profile, the prefix,
//! the fate of every label of the label set and the tags removed; as JSON
//! members and as text.

use crate::explain::ExplanationPart;
use crate::json::quote::quoted;
use crate::request::lookup::ObjectRef;
use serde::Serialize;
use std::fmt;

/// What the tags decided about one object: nothing, when no row tagged it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TagsExplanation {
    /// XRs and tagged objects: the fate of every label.
    pub(crate) cloud_tags: Option<CloudTags>,
}

/// Cloud-tag explanation for an XR or a CAPI infrastructure object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CloudTags {
    /// The profile applied.
    pub(crate) profile: String,
    /// Where the provider came from.
    pub(crate) provider: String,
    /// Why the profile applied: `built-in`, `user-defined` or `fallback`.
    pub(crate) origin: String,
    /// The same in words, naming the setting that selected it.
    pub(crate) why: String,
    /// The tag-key prefix in force: the entries of the field that start
    /// with it are the policy's.
    pub(crate) prefix: String,
    /// Where the prefix comes from: the profile's own, or `cloudTags.prefix`.
    pub(crate) prefix_from: String,
    /// Whether the prefix is worth a line: not the default one, which goes
    /// unsaid, as it did before prefixes could be chosen.
    #[serde(skip)]
    pub(crate) prefix_said: bool,
    /// Set when the profile refuses every tag (its key class or ceiling
    /// cannot admit the prefix in force): why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) no_tag_can_propagate: Option<String>,
    /// Every label of the label set, sorted by qualified key.
    pub(crate) labels: Vec<LabelFate>,
    /// Prefixed entries of the tag field that go, and why.
    pub(crate) removed: Vec<(String, String)>,
    /// CAPI infrastructure kinds: the tag field (`spec.additionalTags`);
    /// absent for XRs, whose field is always `spec.cloudTags`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) field: Option<String>,
}

/// One label of an XR and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LabelFate {
    /// Qualified key.
    pub(crate) qualified_key: String,
    /// `metadata.labels` or the label-set annotation.
    pub(crate) source: String,
    /// What became of it.
    #[serde(flatten)]
    pub(crate) fate: TagFate,
}

/// The closed set of fates of an XR label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "fate",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub(crate) enum TagFate {
    /// It became a tag.
    Tag {
        /// The tag key.
        tag_key: String,
        /// Set when the provider's API will refuse the key although the
        /// profile admits it: why, and the fix.
        #[serde(skip_serializing_if = "Option::is_none")]
        caution: Option<String>,
    },
    /// It was skipped.
    Skipped {
        /// The reason code (`key-too-long`, ...).
        reason: String,
        /// Measured length and limit, offending character, prefix or cap.
        detail: String,
    },
    /// Not in `cloudTags.propagatingLabels`.
    NotOptedIn,
}

impl ExplanationPart for TagsExplanation {
    /// `cloudTags`, when a row tagged the object.
    fn members(&self) -> Vec<(&'static str, &dyn erased_serde::Serialize)> {
        match &self.cloud_tags {
            Some(tags) => vec![("cloudTags", tags)],
            None => Vec::new(),
        }
    }

    fn write_text(&self, _brief: bool, f: &mut dyn fmt::Write) -> fmt::Result {
        let Some(tags) = &self.cloud_tags else {
            return Ok(());
        };
        writeln!(
            f,
            "cloud tags: profile {} ({})",
            tags.profile, tags.provider
        )?;
        writeln!(f, "  profile {}: {}", tags.origin, tags.why)?;
        if tags.prefix_said {
            let prefix = quoted(&tags.prefix);
            writeln!(f, "  tag-key prefix {prefix}: {}", tags.prefix_from)?;
        }
        if let Some(why) = &tags.no_tag_can_propagate {
            writeln!(f, "  {why}")?;
        }
        for label in &tags.labels {
            let (key, source) = (quoted(&label.qualified_key), &label.source);
            match &label.fate {
                TagFate::Tag { tag_key, caution } => {
                    writeln!(f, "  {key} ({source}): tag {}", quoted(tag_key))?;
                    if let Some(caution) = caution {
                        writeln!(f, "    fails at the provider: {caution}")?;
                    }
                }
                TagFate::Skipped { reason, detail } => {
                    writeln!(f, "  {key} ({source}): skipped, {reason}: {detail}")?
                }
                TagFate::NotOptedIn => writeln!(f, "  {key} ({source}): not opted in")?,
            }
        }
        let field = tags.field.as_deref().unwrap_or("spec.cloudTags");
        for (key, why) in &tags.removed {
            writeln!(f, "  {}: removed from {field} ({why})", quoted(key))?;
        }
        Ok(())
    }

    /// A CAPI infrastructure object no propagation rule gives its metadata
    /// is noted as having no parent looked up; the Cluster its tags come
    /// from was read, for the tags only, and the note says so.
    fn revise_notes(&self, kind: &str, requests: &[ObjectRef], notes: &mut [String]) {
        let infra = (self.cloud_tags.as_ref()).is_some_and(|tags| tags.field.is_some());
        let clusters: Vec<String> = (requests.iter())
            .filter(|r| infra && r.kind == "Cluster")
            .map(ToString::to_string)
            .collect();
        if clusters.is_empty() {
            return;
        }
        let contradicted =
            |note: &&mut String| note.ends_with("no parent looked up for its metadata");
        for note in notes.iter_mut().filter(contradicted) {
            *note = format!(
                "no propagation rule gives this {kind} its labels and annotations: they are left as \
                 they are; {} is read for the cloud tags only",
                clusters.join(", ")
            );
        }
    }
}
