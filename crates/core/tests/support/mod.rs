//! Helpers the core's integration tests share: `mod support;` in each test
//! crate. The policy's tests/bad_inputs.rs includes `crd_schema` by path,
//! for the CRD schema check.

// Each test crate that includes this module uses only part of it.
#![allow(dead_code)]

pub(crate) mod crd_schema;
pub(crate) mod quick_start;
pub(crate) mod ready_profiles;

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
pub(crate) fn lookup_of_folder(relative: &str) -> metadata_propagation_core::lookup::MapLookup {
    let mut files: Vec<_> = std::fs::read_dir(repo_path(relative))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().fold(
        Default::default(),
        |lookup: metadata_propagation_core::lookup::MapLookup, file| {
            let text = std::fs::read_to_string(file).unwrap();
            lookup.with_object(serde_norway::from_str(&text).unwrap())
        },
    )
}

/// Provider values that reach every built-in XR profile
/// ([`metadata_propagation_core::tags::profiles::profile::BUILT_IN`], each by every
/// name it lists), one in another case, and two the fallback gets (an
/// unlisted name and the empty string): what the property tests draw from,
/// so a built-in profile added later is covered without a test change.
pub(crate) static PROVIDERS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    use metadata_propagation_core::tags::profiles::profile::BUILT_IN;
    let mut providers: Vec<&'static str> = BUILT_IN
        .iter()
        .flat_map(|profile| profile.providers.iter().map(|name| name.as_ref()))
        .collect();
    providers.extend(["AWS", "vsphere", ""]);
    providers
});
