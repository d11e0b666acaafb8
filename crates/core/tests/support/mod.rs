//! Helpers the core's tests share, the behaviour tests (tests/) and the
//! unit tests in src/ alike (`crate::behaviour::support`). The policy's
//! tests/bad_inputs.rs includes `crd_schema` by path, for the CRD schema
//! check.

// Each test crate that includes this module uses only part of it.
#![allow(dead_code)]

pub(crate) mod crd_schema;
pub(crate) mod quick_start;
pub(crate) mod ready_profiles;

use metadata_propagation_core::capi::explained::key_fates::CapiExplanation;
use metadata_propagation_core::explain::Explanation;
use metadata_propagation_core::request::outcome::{Outcome, Verdict};
use metadata_propagation_core::request::plan::Plan;
use metadata_propagation_core::tags::CloudTagSettings;
use metadata_propagation_core::tags::profiles::provider_limits::TagProfile;
use metadata_propagation_core::tags::profiles::user_defined::{self, ProfileText};
use metadata_propagation_core::tags::said::label_fates::{CloudTags, TagsExplanation};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::LazyLock;

/// A repository-relative path, as the README and the scripts name files.
pub(crate) fn repo_path(relative: &str) -> PathBuf {
    crd_schema::REPO_ROOT.join(relative)
}

/// The text of a repository file; panics naming the file.
pub(crate) fn read_repo_file(relative: &str) -> String {
    let path = repo_path(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every object of a folder of YAML objects (the suites' parents/), for
/// the look-ups to find.
pub(crate) fn lookup_of_folder(
    relative: &str,
) -> metadata_propagation_core::request::lookup::MapLookup {
    let mut files: Vec<_> = std::fs::read_dir(repo_path(relative))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().fold(
        Default::default(),
        |lookup: metadata_propagation_core::request::lookup::MapLookup, file| {
            let text = std::fs::read_to_string(file).unwrap();
            lookup.with_object(serde_norway::from_str(&text).unwrap())
        },
    )
}

/// Provider values that reach every built-in XR profile
/// ([`metadata_propagation_core::tags::profiles::provider_limits::BUILT_IN`], each by every
/// name it lists), one in another case, and two the fallback gets (an
/// unlisted name and the empty string): what the property tests draw from,
/// so a built-in profile added later is covered without a test change.
pub(crate) static PROVIDERS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    use metadata_propagation_core::tags::profiles::provider_limits::BUILT_IN;
    let mut providers: Vec<&'static str> = BUILT_IN
        .iter()
        .flat_map(|profile| profile.providers.iter().map(|name| name.as_ref()))
        .collect();
    providers.extend(["AWS", "vsphere", ""]);
    providers
});

impl Outcome {
    /// The plan, when allowed.
    pub(crate) fn plan(&self) -> Option<&Plan> {
        match &self.verdict {
            Verdict::Allow(plan) => Some(plan),
            Verdict::Reject { .. } => None,
        }
    }
}

/// The tag-key prefix in force on a composite resource, in the
/// contract's order (`TagKeys::new`): the selected user profile's own `prefix`, else
/// `cloudTags.prefix` when the settings set it (for every profile, `gcp`
/// included), else the profile's built-in default (`plexsphere-` for `gcp`,
/// `plexsphere:` otherwise). A provider that is not a string gives the
/// fallback's (the policy rejects such an object). The oracles state the
/// order apart (`invariants::prefix_for`) and test that the two agree.
pub(crate) fn prefix_in_force<'s>(object: &Value, settings: &'s CloudTagSettings) -> &'s str {
    let path: Vec<&str> = settings.provider_path.iter().map(String::as_str).collect();
    let provider = metadata_propagation_core::json::fields::string(object, &path)
        .ok()
        .flatten();
    let (profile, _) = settings.profiles.resolve(provider);
    settings.tag_keys(profile).prefix
}

/// `user_defined::prepare_profiles` of profiles given as JSON values, each
/// problem rendered as the line `validate_settings` shows.
pub(crate) fn prepare_profile_values(raw: &[Value], problems: &mut Vec<String>) -> Vec<TagProfile> {
    let raw: Vec<ProfileText> = raw.iter().map(profile_text).collect();
    let mut found = Vec::new();
    let profiles = user_defined::prepare_profiles(&raw, &mut found);
    problems.extend(found.iter().map(ToString::to_string));
    profiles
}

/// The text of a profile given as a JSON value.
fn profile_text(value: &Value) -> ProfileText {
    ProfileText(serde_json::value::to_raw_value(value).expect("JSON values always serialise"))
}

/// The CAPI stage's part of `explanation`: every explanation has one.
pub(crate) fn capi_part(explanation: &Explanation) -> &CapiExplanation {
    part(explanation).expect("every explanation holds the CAPI stage's part")
}

/// What the tags stage explains of `explanation`'s object, when a row
/// tagged it.
pub(crate) fn cloud_tags(explanation: &Explanation) -> Option<CloudTags> {
    part::<TagsExplanation>(explanation).and_then(|part| part.cloud_tags.clone())
}

/// The part of type `T` of `explanation`: a test reads a stage's part by
/// its type, where the policy writes it at the stage's place in the list.
fn part<T: 'static>(explanation: &Explanation) -> Option<&T> {
    (explanation.parts().iter())
        .find_map(|part| (part.as_ref() as &dyn std::any::Any).downcast_ref::<T>())
}
