//! The ready-made tag profiles of docs/cloud-tags.md ("Ready-made
//! profiles"), read from that page itself so the documented settings and the
//! tested ones cannot drift apart.
//!
//! Each is a ```yaml block whose first line is `# ready-made profile: NAME`
//! and which holds a one-entry list for `cloudTags.profiles`.

use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

const MARKER: &str = "# ready-made profile: ";
/// The page that documents them.
const DOC: &str = "docs/cloud-tags.md";

/// Profile name → the profile's settings entry, sorted by name.
pub static READY: LazyLock<BTreeMap<String, Value>> = LazyLock::new(|| {
    let doc = super::read_repo_file(DOC);
    let mut profiles = BTreeMap::new();
    for block in doc.split("```yaml\n").skip(1) {
        let body = block.split("```").next().unwrap();
        let Some(name) = body.lines().next().and_then(|l| l.strip_prefix(MARKER)) else {
            continue;
        };
        let entries: Vec<Value> =
            serde_norway::from_str(body).unwrap_or_else(|e| panic!("{DOC} profile {name}: {e}"));
        assert_eq!(entries.len(), 1, "{DOC} profile {name}: one entry");
        assert_eq!(
            entries[0]["name"], name,
            "{DOC} profile {name}: marker and name"
        );
        profiles.insert(name.to_owned(), entries[0].clone());
    }
    assert_eq!(
        profiles.keys().collect::<Vec<_>>(),
        ["aws", "azure", "gcp-labels"],
        "the ready-made profiles of {DOC}"
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
