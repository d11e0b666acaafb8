//! `policy-runner patch`: an RFC 6902 JSON patch applied to an object, as
//! the API server applies a response's, with the `json-patch` crate that
//! builds it (host/response.rs). The object is YAML or JSON, read as `run
//! --operation` reads its object ([`one_object`]). A patch that does not
//! apply is an error naming the operation, and nothing is printed.

use std::fs;
use std::io::Read as _;
use std::path::Path;

use anyhow::{Context, Result, bail};
use json_patch::Patch;
use serde_json::Value;

use crate::cli::PatchArgs;
use crate::commands::input::one_object;

/// Runs `args`: prints the patched object as one line of JSON.
pub fn patch(args: &PatchArgs) -> Result<()> {
    if is_stdin(&args.object) && is_stdin(&args.patch) {
        bail!("--object and --patch cannot both be read from stdin");
    }
    let object = one_object(&read(&args.object)?, &name(&args.object))?;
    let operations: Patch = serde_json::from_str(&read(&args.patch)?)
        .with_context(|| format!("{} is not a JSON patch", args.patch.display()))?;
    println!("{}", apply(object, &operations)?);
    Ok(())
}

/// `object` with `operations` applied, all or nothing.
fn apply(mut object: Value, operations: &Patch) -> Result<Value> {
    json_patch::patch(&mut object, operations).context("cannot apply the patch")?;
    Ok(object)
}

fn is_stdin(path: &Path) -> bool {
    path == Path::new("-")
}

/// `path` as errors name it.
fn name(path: &Path) -> String {
    if is_stdin(path) {
        "stdin".to_owned()
    } else {
        path.display().to_string()
    }
}

fn read(path: &Path) -> Result<String> {
    if is_stdin(path) {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read stdin")?;
        return Ok(text);
    }
    fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn operations(value: Value) -> Patch {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn apply_adds_replaces_and_removes_escaped_members() {
        let object = json!({"metadata": {"labels": {"a/b": "1", "drop": "x"}, "name": "md-0"}});

        let patched = apply(
            object,
            &operations(json!([
                {"op": "add", "path": "/metadata/labels/c~1d", "value": "2"},
                {"op": "replace", "path": "/metadata/labels/a~1b", "value": "3"},
                {"op": "remove", "path": "/metadata/labels/drop"}
            ])),
        )
        .unwrap();

        assert_eq!(
            patched,
            json!({"metadata": {"labels": {"a/b": "3", "c/d": "2"}, "name": "md-0"}})
        );
    }

    #[test]
    fn apply_refuses_a_replace_of_a_missing_member() {
        let error = apply(
            json!({"metadata": {}}),
            &operations(json!([{"op": "replace", "path": "/metadata/labels", "value": {}}])),
        )
        .unwrap_err();

        assert_eq!(
            format!("{error:#}"),
            "cannot apply the patch: operation '/0' failed at path '/metadata/labels': path is invalid"
        );
    }
}
