//! `get_resource` answered from plain objects (`run --parents`), the way
//! policy-server answers from the API server: the object named by the
//! request's `apiVersion`, `kind`, `namespace` and `name`, pruned by the
//! request's field masks ([`field_mask`]), or the host's NotFound text
//! (kubewarden-controller v1.35 `callback_handler/kubernetes/client.rs`:
//! `Cannot find {apiVersion}/{kind} named '{name}' inside of namespace
//! '{namespace:?}'`). No order, no masks to match: whatever the policy asks
//! for is answered, so a test states the cluster, not the policy's
//! look-ups. The objects the policy never asked for are reported after the
//! evaluation, as kwctl reports replay exchanges left over.
//!
//! The API server converts an object to whichever served version is asked;
//! the runner cannot, so an object is found only at the `apiVersion` it is
//! written with, and a look-up that finds the name at another version (or
//! in another namespace) says so on stderr.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;
use thiserror::Error;

use crate::host::field_mask;
use crate::host::replay::GetResourceRequest;

/// What names an object in the cluster: `apiVersion`, `kind`, namespace
/// (`None` for a cluster-scoped object) and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ObjectKey {
    /// `apiVersion`, e.g. `cluster.x-k8s.io/v1beta2`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.namespace`.
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: String,
}

impl ObjectKey {
    /// The key a look-up asks for.
    pub fn of_request(request: &GetResourceRequest) -> ObjectKey {
        ObjectKey {
            api_version: request.api_version.clone(),
            kind: request.kind.clone(),
            namespace: request.namespace.clone(),
            name: request.name.clone(),
        }
    }

    /// The key of `object`, or what it lacks to have one.
    pub fn of_object(object: &Value) -> Result<ObjectKey, &'static str> {
        fn text(value: Option<&Value>) -> Option<&str> {
            value.and_then(Value::as_str).filter(|s| !s.is_empty())
        }
        let api_version = text(object.get("apiVersion")).ok_or("no string `apiVersion`")?;
        let kind = text(object.get("kind")).ok_or("no string `kind`")?;
        let metadata = object.get("metadata");
        let name = text(metadata.and_then(|m| m.get("name"))).ok_or("no `metadata.name`")?;
        let namespace = text(metadata.and_then(|m| m.get("namespace")));
        Ok(ObjectKey {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
        })
    }

    /// policy-server's NotFound text for this key.
    pub fn not_found(&self) -> String {
        format!(
            "Cannot find {}/{} named '{}' inside of namespace '{:?}'",
            self.api_version, self.kind, self.name, self.namespace
        )
    }

    fn group_kind(&self) -> (&str, &str) {
        let group = self
            .api_version
            .rsplit_once('/')
            .map_or("", |(group, _)| group);
        (group, &self.kind)
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{} ", self.api_version, self.kind)?;
        match &self.namespace {
            Some(namespace) => write!(f, "{namespace}/{}", self.name),
            None => write!(f, "{} (cluster-scoped)", self.name),
        }
    }
}

/// Why a set of parents cannot be used.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ParentsError {
    /// An object has no `apiVersion`, `kind` or `metadata.name`.
    #[error("{origin}: not a Kubernetes object a look-up can find: {problem}")]
    NotAnObject {
        /// Where the object is (file, document, item).
        origin: String,
        /// What it lacks.
        problem: &'static str,
    },
    /// Two objects with the same key: the cluster holds one.
    #[error("{origin}: {key} is already given by {first}; a cluster holds one object per name")]
    Duplicate {
        /// The second object's place.
        origin: String,
        /// The first object's place.
        first: String,
        /// Their key.
        key: String,
    },
}

#[derive(Debug)]
struct Parent {
    origin: String,
    object: Value,
    asked: bool,
}

/// The objects of a cluster, by key.
#[derive(Debug, Default)]
pub struct Parents {
    objects: BTreeMap<ObjectKey, Parent>,
    apply_field_masks: bool,
}

impl Parents {
    /// The objects (each with the place it was read from, for messages).
    pub fn new(
        objects: impl IntoIterator<Item = (String, Value)>,
    ) -> Result<Parents, ParentsError> {
        let mut parents = BTreeMap::new();
        for (origin, object) in objects {
            let key =
                ObjectKey::of_object(&object).map_err(|problem| ParentsError::NotAnObject {
                    origin: origin.clone(),
                    problem,
                })?;
            if let Some(first) = parents.get(&key) {
                let Parent { origin: first, .. } = first;
                return Err(ParentsError::Duplicate {
                    origin,
                    first: first.clone(),
                    key: key.to_string(),
                });
            }
            parents.insert(
                key,
                Parent {
                    origin,
                    object,
                    asked: false,
                },
            );
        }
        Ok(Parents {
            objects: parents,
            apply_field_masks: true,
        })
    }

    /// Without `apply`, answers with whole objects whatever the masks (a
    /// host older than Kubewarden 1.33, or kwctl's replay of a whole
    /// recorded object).
    pub fn with_field_masks(mut self, apply: bool) -> Parents {
        self.apply_field_masks = apply;
        self
    }

    /// The object `request` names, pruned by its masks and serialised as
    /// policy-server hands it to the guest; or the NotFound text.
    pub fn answer(&mut self, request: &GetResourceRequest) -> Result<Vec<u8>, String> {
        let key = ObjectKey::of_request(request);
        let Some(parent) = self.objects.get_mut(&key) else {
            return Err(key.not_found());
        };
        parent.asked = true;
        let masks = request
            .field_masks
            .as_ref()
            .filter(|_| self.apply_field_masks);
        let pruned = field_mask::prune(&parent.object, masks);
        Ok(serde_json::to_vec(&pruned).expect("JSON values always serialise"))
    }

    /// The objects that look like what a not-found `request` meant: the
    /// same group, kind and name at another version or in another
    /// namespace.
    pub fn near_misses(&self, request: &GetResourceRequest) -> Vec<String> {
        let wanted = ObjectKey::of_request(request);
        self.objects
            .iter()
            .filter(|(key, _)| key.name == wanted.name && key.group_kind() == wanted.group_kind())
            .map(|(key, parent)| format!("{key} ({})", parent.origin))
            .collect()
    }

    /// The objects no look-up asked for, in key order.
    pub fn unasked(&self) -> Vec<String> {
        self.objects
            .iter()
            .filter(|(_, parent)| !parent.asked)
            .map(|(key, parent)| format!("{key} ({})", parent.origin))
            .collect()
    }

    /// How many objects have been asked for.
    pub fn asked(&self) -> usize {
        self.objects.values().filter(|p| p.asked).count()
    }

    /// Forgets which objects were asked for (`bench`: every evaluation
    /// asks again).
    pub fn rewind(&mut self) {
        self.objects.values_mut().for_each(|p| p.asked = false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeSet;

    fn md(version: &str, namespace: &str, name: &str) -> Value {
        json!({"apiVersion": format!("cluster.x-k8s.io/{version}"), "kind": "MachineDeployment",
               "metadata": {"name": name, "namespace": namespace, "labels": {"team": "a"}},
               "spec": {"clusterName": "c", "replicas": 2,
                        "template": {"metadata": {"labels": {"pool": "p"}}, "spec": {"clusterName": "c"}}},
               "status": {"replicas": 2}})
    }

    fn parents(objects: Vec<Value>) -> Parents {
        Parents::new(
            objects
                .into_iter()
                .enumerate()
                .map(|(i, o)| (format!("parents.yaml document {}", i + 1), o)),
        )
        .unwrap()
    }

    fn get(
        version: &str,
        namespace: Option<&str>,
        name: &str,
        masks: &[&str],
    ) -> GetResourceRequest {
        GetResourceRequest {
            api_version: format!("cluster.x-k8s.io/{version}"),
            kind: "MachineDeployment".to_owned(),
            name: name.to_owned(),
            namespace: namespace.map(str::to_owned),
            disable_cache: false,
            field_masks: (!masks.is_empty()).then(|| {
                masks
                    .iter()
                    .map(|m| (*m).to_owned())
                    .collect::<BTreeSet<_>>()
            }),
        }
    }

    #[test]
    fn answers_the_named_object_pruned_by_its_masks() {
        let mut parents = parents(vec![
            md("v1beta2", "default", "md-0"),
            md("v1beta2", "default", "md-1"),
        ]);

        let answer = parents
            .answer(&get(
                "v1beta2",
                Some("default"),
                "md-1",
                &["spec.template.metadata"],
            ))
            .unwrap();

        assert_eq!(
            serde_json::from_slice::<Value>(&answer).unwrap(),
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
                   "metadata": {"name": "md-1", "namespace": "default", "labels": {"team": "a"}},
                   "spec": {"template": {"metadata": {"labels": {"pool": "p"}}}}})
        );
        assert_eq!(parents.asked(), 1);
        assert_eq!(
            parents.unasked(),
            vec![
                "cluster.x-k8s.io/v1beta2/MachineDeployment default/md-0 (parents.yaml document 1)"
            ]
        );
    }

    #[test]
    fn without_masks_or_ignoring_them_the_object_arrives_whole() {
        let object = md("v1beta2", "default", "md-0");
        let mut plain = parents(vec![object.clone()]);
        let mut ignoring = parents(vec![object.clone()]).with_field_masks(false);

        let whole = plain
            .answer(&get("v1beta2", Some("default"), "md-0", &[]))
            .unwrap();
        let ignored = ignoring
            .answer(&get(
                "v1beta2",
                Some("default"),
                "md-0",
                &["metadata.labels"],
            ))
            .unwrap();

        assert_eq!(serde_json::from_slice::<Value>(&whole).unwrap(), object);
        assert_eq!(serde_json::from_slice::<Value>(&ignored).unwrap(), object);
    }

    #[test]
    fn a_missing_object_gets_the_hosts_not_found_text() {
        let mut parents = parents(vec![md("v1beta2", "default", "md-0")]);

        assert_eq!(
            parents.answer(&get("v1beta2", Some("default"), "md-9", &[])),
            Err(r#"Cannot find cluster.x-k8s.io/v1beta2/MachineDeployment named 'md-9' inside of namespace 'Some("default")'"#.to_owned())
        );
        assert_eq!(
            parents.answer(&get("v1beta2", None, "md-0", &[])),
            Err("Cannot find cluster.x-k8s.io/v1beta2/MachineDeployment named 'md-0' inside of namespace 'None'".to_owned())
        );
        assert_eq!(parents.asked(), 0);
    }

    #[test]
    fn another_version_or_namespace_is_not_found_but_named_as_a_near_miss() {
        let mut parents = parents(vec![
            md("v1beta1", "default", "md-0"),
            md("v1beta2", "team-a", "md-0"),
        ]);
        let request = get("v1beta2", Some("default"), "md-0", &[]);

        assert!(parents.answer(&request).is_err());
        assert_eq!(
            parents.near_misses(&request),
            vec![
                "cluster.x-k8s.io/v1beta1/MachineDeployment default/md-0 (parents.yaml document 1)",
                "cluster.x-k8s.io/v1beta2/MachineDeployment team-a/md-0 (parents.yaml document 2)",
            ]
        );
    }

    #[test]
    fn rewind_forgets_what_was_asked() {
        let mut parents = parents(vec![md("v1beta2", "default", "md-0")]);
        parents
            .answer(&get("v1beta2", Some("default"), "md-0", &[]))
            .unwrap();

        parents.rewind();

        assert_eq!(parents.asked(), 0);
        assert_eq!(parents.unasked().len(), 1);
    }

    #[test]
    fn objects_without_a_name_or_given_twice_are_refused_naming_them() {
        let nameless = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {}});
        assert_eq!(
            Parents::new([("p.yaml document 1".to_owned(), nameless)])
                .unwrap_err()
                .to_string(),
            "p.yaml document 1: not a Kubernetes object a look-up can find: no `metadata.name`"
        );

        let twice = [
            (
                "p.yaml document 1".to_owned(),
                md("v1beta2", "default", "md-0"),
            ),
            (
                "q.yaml document 3".to_owned(),
                md("v1beta2", "default", "md-0"),
            ),
        ];
        assert_eq!(
            Parents::new(twice).unwrap_err().to_string(),
            "q.yaml document 3: cluster.x-k8s.io/v1beta2/MachineDeployment default/md-0 is already \
             given by p.yaml document 1; a cluster holds one object per name"
        );
    }
}
