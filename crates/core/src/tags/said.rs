//! The warnings that say what the tag decision did beyond its skips: a
//! fallback to the `generic` profile, an entry removed from a tag field,
//! and a Cluster the object names but that does not exist (docs, "Cloud
//! tags"). Each stays under the 256 characters kube-apiserver passes on
//! whole (it truncates longer ones): the keys, values and names a warning
//! quotes are clipped in the middle when they are long.

pub(crate) mod label_fates;
pub(crate) mod skip_report;
pub(crate) mod tagging_trace;
pub(crate) mod why;

use crate::json::quote::quoted;
use crate::request::lookup::ObjectRef;
use crate::tags::profiles::user_defined::provider_value_problems;
use std::borrow::Cow;

/// `text` in at most `max` characters: its head and tail around an
/// ellipsis when it is longer.
pub(crate) fn clip(text: &str, max: usize) -> Cow<'_, str> {
    let length = text.chars().count();
    if length <= max {
        return Cow::Borrowed(text);
    }
    let tail = max / 3;
    let head = max - tail - 1;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(length - tail).collect();
    Cow::Owned(format!("{start}…{end}"))
}

/// An XR whose provider value selects no profile, or that has none: the
/// strict `generic` profile applies, which is rarely what the cloud takes.
/// The fix is a profile listing the value, unless no profile may list it
/// (empty, too long, with whitespace): then the object's value is wrong.
pub(crate) fn fallback(provider: Option<&str>, path: &str) -> String {
    let path = clip(path, 60);
    let found = match provider {
        Some(provider) => format!(
            "provider {} at {path} selects no tag profile",
            quoted(&clip(provider, 40))
        ),
        None => format!("no provider is set at {path}"),
    };
    let fix = match provider {
        Some(provider) if !provider_value_problems(provider).is_empty() => {
            "no profile can list this value, correct it on the object"
        }
        _ => "list the provider in a profile of cloudTags.profiles",
    };
    format!("cloud tags: {found}, so the strict generic profile applies; {fix}")
}

/// An entry the policy removes from `field` (dotted) of the object: under
/// `prefix`, which the policy owns, and given by no opted-in label, or by
/// one the profile refused (`skipped_label`, whose skip is warned before).
pub(crate) fn removed(field: &str, key: &str, prefix: &str, skipped_label: Option<&str>) -> String {
    let key = clip(key, 80);
    let key = quoted(&key);
    match skipped_label {
        Some(label) => format!(
            "cloud tag removed from {field}: {key} (its label {} was skipped, see above)",
            quoted(&clip(label, 60))
        ),
        None => format!(
            "cloud tag removed from {field}: {key} (the policy owns keys under prefix {} and no \
             opted-in label gives this one)",
            quoted(&clip(prefix, 30))
        ),
    }
}

/// The Cluster an infrastructure object names was not found: its own
/// labels alone became tags. A v1beta2 look-up names the likely cause, a
/// CAPI that does not serve that version yet; a look-up at the version an
/// ownerReference gives has no such cause to name.
pub(crate) fn cluster_not_found(cluster: &ObjectRef) -> String {
    let namespace = cluster.namespace.as_deref().unwrap_or_default();
    let cause = if cluster.api_version.ends_with("/v1beta2") {
        " (CAPI 1.10 and older serve no v1beta2 Cluster)"
    } else {
        ""
    };
    format!(
        "cloud tags: Cluster {}/{} ({}) was not found, so only this object's own labels became \
         tags{cause}",
        clip(namespace, 40),
        clip(&cluster.name, 60),
        clip(&cluster.api_version, 30)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The longest warning kube-apiserver passes on untruncated, in
    /// characters.
    const WARNING_MAX: usize = 255;

    fn fits(warning: &str) {
        assert!(
            warning.chars().count() <= WARNING_MAX,
            "{} {warning}",
            warning.len()
        );
    }

    #[test]
    fn clip_keeps_short_text_and_cuts_the_middle_of_long_text() {
        assert_eq!(clip("team", 10), "team");
        let clipped = clip("abcdefghijklmnopqrstuvwxyz", 10);
        assert_eq!(clipped, "abcdef…xyz");
        assert_eq!(clipped.chars().count(), 10);
    }

    #[test]
    fn every_warning_fits_with_the_longest_inputs() {
        let long = "k".repeat(600);
        let prefix = "p".repeat(64);
        fits(&removed("spec.additionalTags", &long, &prefix, None));
        fits(&removed("spec.serverMetadata", &long, &prefix, Some(&long)));
        fits(&fallback(Some(&long), &long));
        fits(&fallback(None, &long));
        fits(&cluster_not_found(&ObjectRef {
            api_version: "cluster.x-k8s.io/v1beta2".to_owned(),
            kind: "Cluster".to_owned(),
            name: "n".repeat(253),
            namespace: Some("s".repeat(63)),
        }));
    }

    /// Only a v1beta2 look-up names CAPI's versions as the likely cause: a
    /// Cluster looked up at the version its ownerReference gives is just
    /// not there.
    #[test]
    fn a_cluster_not_found_names_a_cause_only_for_v1beta2() {
        let cluster = |api_version: &str| ObjectRef {
            api_version: api_version.to_owned(),
            kind: "Cluster".to_owned(),
            name: "gone".to_owned(),
            namespace: Some("default".to_owned()),
        };
        assert_eq!(
            cluster_not_found(&cluster("cluster.x-k8s.io/v1beta2")),
            "cloud tags: Cluster default/gone (cluster.x-k8s.io/v1beta2) was not found, so only \
             this object's own labels became tags (CAPI 1.10 and older serve no v1beta2 Cluster)"
        );
        assert_eq!(
            cluster_not_found(&cluster("cluster.x-k8s.io/v1beta1")),
            "cloud tags: Cluster default/gone (cluster.x-k8s.io/v1beta1) was not found, so only \
             this object's own labels became tags"
        );
    }

    #[test]
    fn warnings_name_what_happened() {
        assert_eq!(
            removed("spec.additionalTags", "acme-billing-account", "acme-", None),
            "cloud tag removed from spec.additionalTags: \"acme-billing-account\" (the policy \
             owns keys under prefix \"acme-\" and no opted-in label gives this one)"
        );
        assert_eq!(
            removed("spec.additionalTags", "acme-owner", "acme-", Some("owner")),
            "cloud tag removed from spec.additionalTags: \"acme-owner\" (its label \"owner\" was \
             skipped, see above)"
        );
        assert_eq!(
            fallback(Some("ibm"), "spec.parameters.provider"),
            "cloud tags: provider \"ibm\" at spec.parameters.provider selects no tag profile, so \
             the strict generic profile applies; list the provider in a profile of \
             cloudTags.profiles"
        );
        // Values a profile would be refused for: the object's value is the typo.
        for provider in ["", " aws", "aws\n", &"a".repeat(64)] {
            assert!(
                fallback(Some(provider), "spec.parameters.provider").ends_with(
                    "so the strict generic profile applies; no profile can list this value, \
                     correct it on the object"
                ),
                "{provider:?}"
            );
        }
        assert!(fallback(None, "spec.parameters.provider").ends_with("cloudTags.profiles"));
    }
}
