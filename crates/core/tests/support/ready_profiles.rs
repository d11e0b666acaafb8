//! The ready-made tag profiles of the README ("Ready-made profiles"), read
//! from the README itself so the documented settings and the tested ones
//! cannot drift apart.
//!
//! Each is a ```yaml block whose first line is `# ready-made profile: NAME`
//! and which holds a one-entry list for `cloudTags.profiles`.

use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

const MARKER: &str = "# ready-made profile: ";

/// Profile name → the profile's settings entry, in README order.
pub static READY: LazyLock<BTreeMap<String, Value>> = LazyLock::new(|| {
    let readme = super::read_repo_file("README.md");
    let mut profiles = BTreeMap::new();
    for block in readme.split("```yaml\n").skip(1) {
        let body = block.split("```").next().unwrap();
        let Some(name) = body.lines().next().and_then(|l| l.strip_prefix(MARKER)) else {
            continue;
        };
        let entries: Vec<Value> =
            serde_norway::from_str(body).unwrap_or_else(|e| panic!("README profile {name}: {e}"));
        assert_eq!(entries.len(), 1, "README profile {name}: one entry");
        assert_eq!(
            entries[0]["name"], name,
            "README profile {name}: marker and name"
        );
        profiles.insert(name.to_owned(), entries[0].clone());
    }
    assert_eq!(
        profiles.keys().collect::<Vec<_>>(),
        ["aws", "azure", "gcp-labels"],
        "the README's ready-made profiles"
    );
    profiles
});

/// A settings document with `propagating` opted in and the named
/// ready-made profiles.
pub fn settings(propagating: &[&str], profiles: &[&str]) -> String {
    let profiles: Vec<&Value> = profiles.iter().map(|name| &READY[*name]).collect();
    serde_json::json!({"cloudTags": {"propagatingLabels": propagating, "profiles": profiles}})
        .to_string()
}
