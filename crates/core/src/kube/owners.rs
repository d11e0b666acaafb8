//! Reading `metadata.ownerReferences`: the CAPI rules follow an owner to a
//! parent, and the tags find an object's Cluster through one; the audit's
//! ownership tree reads them too.

use crate::json::fields::{self, FieldError, FieldPath, Problem};
use crate::kube::api_version;
use crate::kube::object_ref::ObjectRef;
use serde_json::Value;

/// One ownerReference, borrowed from the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OwnerRef<'a> {
    /// `group/version` of the owner.
    pub(crate) api_version: &'a str,
    /// Kind of the owner.
    pub(crate) kind: &'a str,
    /// Name of the owner (same namespace as the object).
    pub(crate) name: &'a str,
    /// `controller: true`.
    pub(crate) controller: bool,
}

impl OwnerRef<'_> {
    /// The API group of the owner ("" for the core group).
    pub(crate) fn group(&self) -> &str {
        api_version::group(self.api_version)
    }

    /// The owner as the object to read, in `namespace`: an owner lives in
    /// its dependent's namespace, or is cluster-scoped (`None`).
    pub(crate) fn object_ref(&self, namespace: Option<&str>) -> ObjectRef {
        ObjectRef {
            api_version: self.api_version.to_owned(),
            kind: self.kind.to_owned(),
            name: self.name.to_owned(),
            namespace: namespace.map(str::to_owned),
        }
    }
}

/// Every ownerReference of the object. Entries missing `apiVersion`, `kind`
/// or `name` are reported by index: the API server would refuse them, and a
/// policy guessing the parent would be worse than one naming the problem.
pub(crate) fn owner_refs(object: &Value) -> Result<Vec<OwnerRef<'_>>, FieldError> {
    const PATH: &[&str] = &["metadata", "ownerReferences"];
    let entries = match fields::get(object, PATH)? {
        None => return Ok(Vec::new()),
        Some(Value::Array(entries)) => entries,
        Some(other) => {
            return Err(FieldError::expected(FieldPath::of(PATH), "an array", other));
        }
    };
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let at =
                |field: &str| FieldPath::of(&[&format!("metadata.ownerReferences[{i}]"), field]);
            let text = |field: &'static str| -> Result<&str, FieldError> {
                match fields::string(entry, &[field]) {
                    Ok(Some(s)) if !s.is_empty() => Ok(s),
                    Ok(_) => Err(FieldError::new(at(field), Problem::Required)),
                    Err(e) => Err(FieldError::new(at(field), e.problem)),
                }
            };
            let controller = match fields::get(entry, &["controller"]) {
                Ok(None) => false,
                Ok(Some(Value::Bool(b))) => *b,
                Ok(Some(other)) => {
                    return Err(FieldError::expected(at("controller"), "a boolean", other));
                }
                Err(_) => {
                    return Err(FieldError::expected(
                        FieldPath::of(&[&format!("metadata.ownerReferences[{i}]")]),
                        "an object",
                        entry,
                    ));
                }
            };
            Ok(OwnerRef {
                api_version: text("apiVersion")?,
                kind: text("kind")?,
                name: text("name")?,
                controller,
            })
        })
        .collect()
}
