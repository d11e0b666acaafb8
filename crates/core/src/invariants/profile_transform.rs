//! The transform under a prepared tag profile, as the settings fuzz target
//! (`settings_bytes`) holds it: labels reach it only through accepted
//! settings, as they reach it at admission.

use super::prefix_for;
use crate::settings::Settings;
use crate::tags::transform;
use std::collections::BTreeMap;

/// Checks, under accepted `settings` whose `cloudTags.propagatingLabels`
/// are the keys of `labels`, that the profile `provider` selects
/// transforms `labels` without panicking: every label ends as one tag or
/// one skip, no more tags than the profile's cap, every tag the prefix in
/// force (in the contract's order: [`prefix_for`]) and its label's key with
/// its label's value, and no tag at all when the profile can never admit
/// that prefix. Panics naming the property that does not hold.
pub fn check_profile_transform(
    settings: &Settings,
    provider: &str,
    labels: &BTreeMap<String, String>,
) {
    let cloud_tags = settings.cloud_tags().expect("accepted settings prepare");
    let (profile, origin) = cloud_tags.profiles.resolve(Some(provider));
    let keys = cloud_tags.tag_keys(profile);
    // The prefix in force: the profile's own, else `cloudTags.prefix` when
    // set, else the profile's default.
    assert_eq!(keys.prefix, prefix_for(profile, origin, cloud_tags));
    // Every label is opted in: its key is one the settings accepted.
    let opted_in = &cloud_tags.propagating_labels;
    assert!(labels.keys().all(|key| opted_in.iter().any(|k| k == key)));
    let out = transform::transform_with(
        labels.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        profile,
        &keys,
        0,
    );
    assert_eq!(out.tags.len() + out.skipped.len(), labels.len());
    assert!(out.tags.len() <= profile.cap);
    for (tag, value) in &out.tags {
        // Every tag is the prefix in force and its label's key.
        let label = keys
            .qualified_key_of(tag)
            .expect("a tag starts with the prefix in force");
        assert_eq!(labels.get(label).map(String::as_str), Some(value.as_str()));
        assert_eq!(transform::check(profile, &keys, label, tag, value), None);
    }
    // A profile that refuses the prefix refuses everything.
    if profile.blocks_every_tag(keys.prefix).is_some() {
        assert!(out.tags.is_empty());
    }
}
