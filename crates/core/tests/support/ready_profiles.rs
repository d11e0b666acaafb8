//! The ready-made tag profiles of docs/cloud-tags.md ("Ready-made
//! profiles"), read from that page itself so the documented settings and the
//! tested ones cannot drift apart; and the two the page offered before Azure
//! and GCP were built in, as a settings document written then still lists
//! them (a user profile listing a provider wins over the built-in).
//!
//! Each documented one is a ```yaml block whose first line is
//! `# ready-made profile: NAME` and which holds a one-entry list for
//! `cloudTags.profiles`.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::LazyLock;

const MARKER: &str = "# ready-made profile: ";
/// The page that documents them.
const DOC: &str = "docs/cloud-tags.md";

/// Profile name → the profile's settings entry, sorted by name: the page's
/// ready-made profiles, then the earlier ones ([`EARLIER`]).
pub(crate) static READY: LazyLock<BTreeMap<String, Value>> = LazyLock::new(|| {
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
        ["aws"],
        "the ready-made profiles of {DOC}"
    );
    profiles.extend(
        EARLIER
            .iter()
            .map(|(name, entry)| ((*name).to_owned(), entry())),
    );
    profiles
});

/// A profile's name and its settings entry.
pub(crate) type Earlier = (&'static str, fn() -> Value);

/// The ready-made profiles docs/cloud-tags.md gave before Azure and GCP had
/// built-in profiles, word for word: `azure` states the built-in `azure`'s
/// rules; `gcp-labels` refuses the `:` of a user profile's default prefix
/// `plexsphere:`, so no tag can ever propagate under it.
pub(crate) const EARLIER: [Earlier; 2] = [
    ("azure", || {
        json!({"name": "azure", "providers": ["azure"], "keyMax": 512, "valueMax": 256,
               "unit": "runes", "cap": 50,
               "keyCharacters": {"sets": ["printable"], "except": "<>%&\\?/"},
               "reservedPrefixes": [{"prefix": "microsoft", "ignoreCase": true},
                                    {"prefix": "azure", "ignoreCase": true},
                                    {"prefix": "windows", "ignoreCase": true}]})
    }),
    ("gcp-labels", || {
        json!({"name": "gcp-labels", "providers": ["gcp", "google"], "keyMax": 63,
               "valueMax": 63, "unit": "bytes", "cap": 64,
               "keyCharacters": {"sets": ["lowercase-letters", "digits"], "extra": "_-"}})
    }),
];

/// A settings document with `propagating` opted in and the named
/// ready-made profiles.
pub(crate) fn settings(propagating: &[&str], profiles: &[&str]) -> String {
    let profiles: Vec<&Value> = profiles.iter().map(|name| &READY[*name]).collect();
    serde_json::json!({"cloudTags": {"propagatingLabels": propagating, "profiles": profiles}})
        .to_string()
}
