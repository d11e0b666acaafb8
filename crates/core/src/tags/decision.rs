//! The part of a tag decision every target shares, once its label set,
//! profile and tag field are read: the opted-in labels transformed under
//! the profile, the field's edit (stale policy entries removed, the field
//! dropped when the contract says), the skip annotation's edit and the
//! warnings. Composite resources and infrastructure objects differ only in
//! how those inputs are found, never in what is decided from them.

pub(crate) mod label_set;
pub(crate) mod transform;

use super::said;
use super::targets::Target;
use crate::json::fields::StringMap;
use crate::json::sorted_map::map_of;
use crate::request::plan::{Edit, MapEdit};
use crate::tags::decision::label_set::{LabelSet, OptedIn};
use crate::tags::keys::opted_in::OptedInKeys;
use crate::tags::keys::tag_naming::TagKeys;
use crate::tags::profiles::provider_limits::{Origin, TagProfile};
use crate::tags::said::label_fates::CloudTags;
use crate::tags::said::skip_report::{blocked, label_fates, removal_note, skipped_edit, warnings};
use crate::tags::targets::field::{Current, Owned};

/// What one target's tags are decided from.
pub(crate) struct Inputs<'a, 's> {
    /// The row of the tag table.
    pub(crate) target: &'a Target,
    /// The label set.
    pub(crate) set: &'a LabelSet<'s>,
    /// The field as submitted.
    pub(crate) current: &'a Current<'s>,
    /// The profile applied, and what chose it.
    pub(crate) profile: (&'s TagProfile, Origin),
    /// The tag keys under that profile.
    pub(crate) keys: TagKeys<'s>,
    /// Which entries of the field are the policy's.
    pub(crate) owned: Owned<'s>,
    /// `cloudTags.propagatingLabels`, sorted, each once.
    pub(crate) propagating: &'s OptedInKeys,
    /// The object's annotations as they will be stored (the skip
    /// annotation's edit is made against them).
    pub(crate) annotations: &'a StringMap<'s>,
    /// The object a looked-up label source was read from (a Cluster, or a
    /// managed resource's composite resource), as explanations name it;
    /// empty when the labels are the object's own or no record is kept.
    pub(crate) looked_up: &'a str,
    /// The fallback warning, when a composite resource's provider selected
    /// no profile: given only when an opted-in label is in the label set.
    pub(crate) fallback: Option<String>,
    /// Whether each entry removed from the field gets a warning: in
    /// mutate mode (validate mode removes nothing, and names the entry in
    /// its deviation message instead).
    pub(crate) warn_removals: bool,
}

/// What was decided.
pub(crate) struct Decided {
    /// The tag field's edit, `None` when it already holds the tags.
    pub(crate) edit: Option<Edit>,
    /// The skip annotation's edit.
    pub(crate) skipped: MapEdit,
    /// One warning per skip, or the profile's summary.
    pub(crate) warnings: Vec<String>,
    /// When asked for, the record of the decision for an explanation: all
    /// but how the profile was chosen (`provider`, `why`) and an
    /// infrastructure object's `field`, which the caller knows.
    pub(crate) explained: Option<CloudTags>,
}

/// Decides the tags of one target from `inputs`; `trace` asks for the
/// record of every label's fate, `source` words where the tags come from (a
/// rewritten list's report).
pub(crate) fn decide(
    inputs: Inputs<'_, '_>,
    trace: bool,
    source: impl FnOnce() -> String,
) -> Decided {
    let Inputs {
        target,
        set,
        current,
        profile: (profile, origin),
        keys,
        owned,
        propagating,
        annotations,
        looked_up,
        fallback,
        warn_removals,
    } = inputs;
    let opted_in: OptedIn<'_, &str> = set.opted_in(propagating);
    // The provider's own keys take room before it writes them.
    let taken = match target.user_entries_take_room {
        true => {
            let absent = (target.provider_keys.iter())
                .filter(|key| !current.entries.iter().any(|(k, _)| k == *key));
            current.user_entries(owned).count() + absent.count()
        }
        false => 0,
    };
    let mut transformed = transform::transform_opted(&opted_in, profile, &keys, taken);
    let removed = map_of(
        current
            .policy_entries(owned)
            .filter(|(key, _)| !transformed.tagged(key))
            .map(|(key, value)| {
                let why = removal_note(key, value, &transformed, profile, &keys);
                (key.to_owned(), why)
            })
            .collect(),
    );
    let explained = trace.then(|| CloudTags {
        origin: origin.code().to_owned(),
        no_tag_can_propagate: blocked(profile, &keys),
        prefix: keys.prefix.to_owned(),
        prefix_from: keys.prefix_from(profile),
        prefix_said: keys.prefix != crate::tags::keys::tag_naming::DEFAULT_PREFIX,
        labels: label_fates(set, &opted_in, &transformed, &keys, profile, looked_up),
        removed: removed
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        profile: profile.name.clone().into_owned(),
        ..CloudTags::default()
    });
    let skipped = skipped_edit(annotations, &transformed.skipped);
    let mut warnings = warnings(profile, &keys, &transformed.skipped);
    if let Some(fallback) = fallback.filter(|_| !opted_in.pairs().is_empty()) {
        warnings.insert(0, fallback);
    }
    if warn_removals && !removed.is_empty() {
        let path = target.field.dotted();
        warnings.extend(removed.keys().map(|key| {
            let prefix = match owned.old_prefix {
                Some(old) if !keys.owns(key) => old,
                _ => keys.prefix,
            };
            let skip = (transformed.skipped.iter()).find(|skip| skip.tag_key == *key);
            said::removed(&path, key, prefix, skip.map(|skip| skip.qualified_key))
        }));
    }
    let field = target.tag_field();
    let edit =
        crate::tags::targets::field::edit(field, current, owned, &mut transformed, removed, source);
    Decided {
        edit,
        skipped,
        warnings,
        explained,
    }
}
