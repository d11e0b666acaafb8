//! The look-ups of a live audit that the listed objects do not answer,
//! answered as policy-server answers them: a kind outside the policy's
//! `contextAwareResources` is refused with policy-server's text, anything
//! else is a GET, pruned by the look-up's field masks. Answers are kept for
//! the run (policy-server keeps them 5 s), so a parent that was not listed
//! is read once however many children ask for it. The namespaces a
//! webhook's namespaceSelector selects on are read here too: every GET of
//! an audit is in this file.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use cluster_audit::LiveSource;
use metadata_propagation_core::lookup::{LookupError, ObjectRef};
use metadata_propagation_core::projection::Projection;
use serde_json::Value;

use super::api::{Api, Failure, Resource};
use super::listing::Discovery;
use crate::host::callback::ACCESS_DENIED;
use crate::host::field_mask;

/// The labels of namespace `name`, which a webhook's namespaceSelector
/// selects on: `None` when it is gone.
pub(super) fn namespace_labels(
    api: &Api,
    name: &str,
) -> Result<Option<serde_json::Map<String, Value>>, Failure> {
    let namespaces = Resource {
        group: String::new(),
        version: "v1".to_owned(),
        plural: "namespaces".to_owned(),
        kind: "Namespace".to_owned(),
        namespaced: false,
    };
    match api.get(&namespaces, None, name) {
        Ok(found) => Ok(Some(
            found["metadata"]["labels"]
                .as_object()
                .cloned()
                .unwrap_or_default(),
        )),
        Err(failure) if failure.code == Some(404) => Ok(None),
        Err(failure) => Err(failure),
    }
}

/// The objects read one by one (compact JSON, without `managedFields` and
/// `status`, which no field mask names), and why not, shared by every
/// policy: a parent that was not listed is asked for by each of its
/// children, and a whole object as a value is many times its text.
pub(super) type Reads = RefCell<BTreeMap<ObjectRef, Result<Box<[u8]>, LookupError>>>;

/// The cluster a run talks to: the client, what discovery found, and the
/// objects read one by one.
#[derive(Clone, Copy)]
pub(super) struct Cluster<'a> {
    pub(super) api: &'a Api,
    pub(super) discovery: &'a RefCell<Discovery>,
    pub(super) read: &'a Reads,
}

/// The cluster behind one policy's audit.
pub(super) struct ClusterReads<'a> {
    pub(super) api: &'a Api,
    pub(super) discovery: &'a RefCell<Discovery>,
    pub(super) granted: &'a BTreeSet<(String, String)>,
    /// The objects read so far (or why not), shared by every policy.
    pub(super) read: &'a Reads,
}

impl ClusterReads<'_> {
    fn read(&self, object: &ObjectRef) -> Result<Value, LookupError> {
        if let Some(answer) = self.read.borrow().get(object) {
            let json = answer.as_ref().map_err(Clone::clone)?;
            return serde_json::from_slice(json).map_err(|e| LookupError::Failed(e.to_string()));
        }
        let resource = self
            .discovery
            .borrow_mut()
            .kind(self.api, &object.api_version, &object.kind)
            .map_err(LookupError::Failed);
        let answer = resource.and_then(|resource| {
            let namespace = match (resource.namespaced, object.namespace.as_deref()) {
                (true, None | Some("")) => {
                    return Err(LookupError::Failed(format!(
                        "Resource {}/{} is namespaced, but no namespace was provided",
                        object.api_version, object.kind
                    )));
                }
                (true, namespace) => namespace,
                (false, _) => None,
            };
            self.api
                .get(&resource, namespace, &object.name)
                .map_err(|failure| match failure.code {
                    Some(404) => LookupError::NotFound,
                    _ => LookupError::Failed(failure.to_string()),
                })
        });
        let kept = answer.map(|whole| cluster_audit::live::view(&whole));
        self.read.borrow_mut().insert(object.clone(), kept);
        self.read(object)
    }
}

impl LiveSource for ClusterReads<'_> {
    fn refusal(&self, object: &ObjectRef) -> Option<String> {
        let key = (object.api_version.clone(), object.kind.clone());
        (!self.granted.contains(&key)).then(|| {
            ACCESS_DENIED.replace(
                "{resource}",
                &format!("{}/{}", object.api_version, object.kind),
            )
        })
    }

    fn get(
        &self,
        object: &ObjectRef,
        projection: &Projection<'static>,
    ) -> Result<Value, LookupError> {
        let whole = self.read(object)?;
        let masks = projection.field_masks();
        let pruned = field_mask::prune(&whole, Some(&masks));
        let json = serde_json::to_vec(&pruned).expect("JSON values always serialise");
        projection
            .decode(&json)
            .map_err(|e| LookupError::Failed(e.to_string()))
    }
}
