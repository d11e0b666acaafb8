//! Kubernetes objects read from YAML or JSON files, parsed by
//! [`cluster_audit::dump`] as the web page parses what is pasted: `explain`
//! reads its parents with [`read_objects`], `run --operation` and `patch`
//! their one object with [`objects_in`], `audit` its dumps with
//! [`read_kubernetes_objects`], which refuses anything not a Kubernetes
//! object, naming the file and the document.

use std::fs;
use std::path::{Path, PathBuf};

use cluster_audit::{AuditError, Origin, dump};
use serde_json::Value;
use thiserror::Error;

/// Why a file yields no objects.
#[derive(Debug, Error)]
pub enum ObjectsError {
    /// The file cannot be read. The I/O error is the source, which the
    /// command line prints after this (`{:#}`), so it is not repeated here.
    #[error("cannot read {}", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A document does not parse, or is not a Kubernetes object.
    #[error(transparent)]
    Dump(#[from] AuditError),
}

/// Every object in a YAML (multi-document) or JSON file; arrays and
/// `kind: List` documents are flattened, empty documents skipped.
pub fn read_objects(path: &Path) -> Result<Vec<Value>, ObjectsError> {
    objects_in(&read(path)?, &path.display().to_string())
}

/// Every object in `text`, read from `file` (named in errors), as
/// [`read_objects`] reads a file's.
pub fn objects_in(text: &str, file: &str) -> Result<Vec<Value>, ObjectsError> {
    Ok(dump::objects(text, file)?
        .into_iter()
        .map(|(_, object)| object)
        .collect())
}

/// [`read_objects`] with each object's origin, refusing anything that is not
/// a Kubernetes object, and a file with no document
/// ([`dump::kubernetes_objects_in_file`]).
pub fn read_kubernetes_objects(path: &Path) -> Result<Vec<(Origin, Value)>, ObjectsError> {
    let text = read(path)?;
    Ok(dump::kubernetes_objects_in_file(
        &text,
        &path.display().to_string(),
    )?)
}

/// The text of the file at `path`.
pub fn read(path: &Path) -> Result<String, ObjectsError> {
    fs::read_to_string(path).map_err(|source| ObjectsError::Read {
        file: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_names_the_file_it_cannot_read() {
        let err = read_objects(Path::new("no/such/dump.yaml")).unwrap_err();
        assert_eq!(err.to_string(), "cannot read no/such/dump.yaml");
        // The cause is the source, printed once by the command line's
        // `{:#}`, not a second time in the message.
        let printed = format!("{:#}", anyhow::Error::from(err));
        assert_eq!(printed.matches("os error 2").count(), 1, "{printed}");
    }
}
