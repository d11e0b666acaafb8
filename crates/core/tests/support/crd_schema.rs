//! The policy's outputs against the real CRDs (docs/development.md, "Only
//! real objects: the CRD schema check"): a mutation that turns an object a cluster would
//! store into one it would refuse is a bug.
//!
//! The schemas are [`SCHEMAS`]`/<group>_<version>_<kind>.json`: the CAPI
//! v1.14 CRD schemas of the kinds the policy mutates, and the XR schema of
//! the XRD in examples/crossplane, made strict (an undeclared field is an
//! error, ObjectMeta checked) by
//! `scripts/check_schemas.py --write-rust-schemas`. The script owns the
//! strictness rules, so the Rust tests and `make check-schemas` judge with
//! one definition, and `make check-schemas` fails when these files are stale.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// The repository's root: the nearest directory above the including
/// package's manifest that holds the core. The fixtures (test_data/,
/// README.md) belong to the repository, not to a package, and this module
/// is compiled from crates/core and from the root alike.
pub(crate) static REPO_ROOT: LazyLock<PathBuf> = LazyLock::new(|| {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .find(|dir| dir.join("crates/core/Cargo.toml").is_file())
        .unwrap_or_else(|| panic!("no repository root above {}", manifest.display()))
        .to_path_buf()
});

/// Where `scripts/check_schemas.py --write-rust-schemas` writes them.
const SCHEMAS: &str = "crates/core/tests/schemas";

/// One compiled validator per "apiVersion kind", from [`SCHEMAS`].
static VALIDATORS: LazyLock<BTreeMap<String, jsonschema::Validator>> = LazyLock::new(|| {
    let dir = REPO_ROOT.join(SCHEMAS);
    let mut validators = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        // <group>_<version>_<kind>: groups, versions and kinds hold no '_'.
        let [group, version, kind] = name.split('_').collect::<Vec<_>>()[..] else {
            panic!("{}: not <group>_<version>_<kind>.json", path.display());
        };
        let text = std::fs::read_to_string(&path).unwrap();
        let schema: Value = serde_json::from_str(&text).unwrap();
        let validator =
            jsonschema::draft7::new(&schema).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        validators.insert(format!("{group}/{version} {kind}"), validator);
    }
    assert!(!validators.is_empty(), "{SCHEMAS} holds no schemas");
    validators
});

/// The failures of `object` against the strict schema of its apiVersion and
/// kind, as sorted "json-pointer: message" lines; None when [`SCHEMAS`] has
/// no schema for the kind (built-in kinds, XRs without an XRD here, CAPI
/// kinds the policy never mutates).
pub(crate) fn failures(object: &Value) -> Option<Vec<String>> {
    let key = format!(
        "{} {}",
        object["apiVersion"].as_str()?,
        object["kind"].as_str()?
    );
    let validator = VALIDATORS.get(&key)?;
    let mut failures: Vec<String> = validator
        .iter_errors(object)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    failures.sort();
    Some(failures)
}

/// Whether `object` has a schema here and satisfies it.
pub(crate) fn is_valid(object: &Value) -> bool {
    failures(object).is_some_and(|f| f.is_empty())
}

/// Checks that `after` (the policy's output) validates whenever `before`
/// (its input) did. Inputs no cluster would store prove nothing either way.
pub(crate) fn check_output(before: &Value, after: &Value) -> Result<(), String> {
    if !is_valid(before) {
        return Ok(());
    }
    match failures(after) {
        Some(f) if !f.is_empty() => Err(format!(
            "the policy turned a valid {} into one its CRD refuses: {}",
            before["kind"].as_str().unwrap_or_default(),
            f.join("; ")
        )),
        _ => Ok(()),
    }
}
