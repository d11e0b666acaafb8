//! The identity of an object: the `apiVersion`, kind, name and namespace
//! a look-up names and an ownerReference points at.

use crate::kube::api_version;
use serde_json::Value;
use std::fmt;

/// The identity of an object to read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ObjectRef {
    /// `group/version` (e.g. `cluster.x-k8s.io/v1beta2`).
    pub api_version: String,
    /// Kind (e.g. `MachineDeployment`).
    pub kind: String,
    /// Object name.
    pub name: String,
    /// Namespace; `None` for cluster-scoped objects.
    pub namespace: Option<String>,
}

impl ObjectRef {
    /// The identity `object` is found by: its own apiVersion, kind, name and
    /// namespace (absent fields read as empty; an empty namespace is kept
    /// as written).
    pub fn of(object: &Value) -> Self {
        let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
        ObjectRef {
            api_version: text(&object["apiVersion"]),
            kind: text(&object["kind"]),
            name: text(&object["metadata"]["name"]),
            namespace: object["metadata"]["namespace"].as_str().map(str::to_owned),
        }
    }

    /// The API group of the object ("" for the core group).
    pub fn group(&self) -> &str {
        api_version::group(&self.api_version)
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(
                f,
                "{} {}/{} ({})",
                self.kind, ns, self.name, self.api_version
            ),
            None => write!(f, "{} {} ({})", self.kind, self.name, self.api_version),
        }
    }
}
