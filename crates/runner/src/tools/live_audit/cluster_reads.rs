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

use std::sync::Arc;

use cluster_audit::LiveSource;
use cluster_audit::live::KeptPaths;
use metadata_propagation_core::evaluate::DeclaredLookup;
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

/// The objects read one by one, and why not, shared by every policy: a
/// parent that was not listed is asked for by each of its children.
pub(super) type Reads = RefCell<ReadObjects>;

/// The objects read one by one: of each, what the policies' look-ups of its
/// kind read ([`KeptPaths`]: the masks the stages declare), as compact
/// JSON; all of it but `managedFields` and `status` (which no field mask
/// names) when no declared look-up names its kind. A look-up that reads
/// outside what is kept is asked of the cluster again, and the object is
/// kept whole from then on.
#[derive(Default)]
pub(super) struct ReadObjects {
    /// What the policies may look up.
    declared: Vec<DeclaredLookup>,
    /// What is kept of each group and kind (`None`: all of it).
    paths: BTreeMap<(String, String), Option<Arc<KeptPaths>>>,
    read: BTreeMap<ObjectRef, Result<Read, LookupError>>,
}

/// One object read: its view pruned by `paths`.
struct Read {
    paths: Option<Arc<KeptPaths>>,
    json: Box<[u8]>,
}

impl ReadObjects {
    /// Objects read for the look-ups `declared` (see
    /// [`cluster_audit::live::Parents::declared`]).
    pub(super) fn declaring(&mut self, declared: &[DeclaredLookup]) {
        self.declared = declared.to_vec();
        self.paths.clear();
    }

    /// What is kept of objects of `group` and `kind`.
    fn paths_of(&mut self, group: &str, kind: &str) -> Option<Arc<KeptPaths>> {
        let key = (group.to_owned(), kind.to_owned());
        let declared = &self.declared;
        let paths = self.paths.entry(key);
        let paths = paths.or_insert_with(|| KeptPaths::of(declared, group, kind).map(Arc::new));
        paths.clone()
    }
}

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
    /// `object`'s view, of which a look-up reads `masks`: as kept, or asked
    /// of the cluster.
    fn read(&self, object: &ObjectRef, masks: &BTreeSet<String>) -> Result<Value, LookupError> {
        if let Some(answer) = self.read.borrow().read.get(object) {
            let read = answer.as_ref().map_err(Clone::clone)?;
            if read.paths.as_ref().is_none_or(|paths| paths.covers(masks)) {
                return serde_json::from_slice(&read.json)
                    .map_err(|e| LookupError::Failed(e.to_string()));
            }
        }
        let view = self
            .get_whole(object)
            .map(|whole| cluster_audit::live::view(&whole));
        let mut reads = self.read.borrow_mut();
        let paths = match reads.read.contains_key(object) {
            true => None, // asked again: kept whole from now on
            false => reads.paths_of(object.group(), &object.kind),
        };
        let kept = view.as_ref().map(|view| Read {
            json: match &paths {
                None => view.clone(),
                Some(paths) => pruned(view, paths),
            },
            paths,
        });
        reads
            .read
            .insert(object.clone(), kept.map_err(Clone::clone));
        view.and_then(|view| {
            serde_json::from_slice(&view).map_err(|e| LookupError::Failed(e.to_string()))
        })
    }

    /// `object` as the cluster serves it.
    fn get_whole(&self, object: &ObjectRef) -> Result<Value, LookupError> {
        let resource = self
            .discovery
            .borrow_mut()
            .kind(self.api, &object.api_version, &object.kind)
            .map_err(LookupError::Failed);
        resource.and_then(|resource| {
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
        })
    }
}

/// `view` pruned as a look-up's masks prune it, by all that `paths` keeps:
/// what any look-up they cover reads of it.
fn pruned(view: &[u8], paths: &KeptPaths) -> Box<[u8]> {
    let view: Value = serde_json::from_slice(view).expect("a view is JSON");
    let pruned = field_mask::prune(&view, Some(paths.masks()));
    let json = serde_json::to_vec(&pruned).expect("JSON values always serialise");
    json.into_boxed_slice()
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
        let masks = projection.field_masks();
        let whole = self.read(object, &masks)?;
        let pruned = field_mask::prune(&whole, Some(&masks));
        let json = serde_json::to_vec(&pruned).expect("JSON values always serialise");
        projection
            .decode(&json)
            .map_err(|e| LookupError::Failed(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::api::fake_api_server::{Seen, discovery, fake_api, ok};
    use super::*;
    use metadata_propagation_core::evaluate::LookupGroup;
    use serde_json::json;

    fn machine_set() -> Value {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
               "metadata": {"name": "ms", "namespace": "default", "labels": {"a": "1"},
                            "managedFields": [{"manager": "capi"}]},
               "spec": {"replicas": 3, "selector": {"matchLabels": {"a": "1"}},
                        "template": {"metadata": {"labels": {"b": "2"}},
                                     "spec": {"version": "v1.34.4"}}},
               "status": {"replicas": 3}})
    }

    #[test]
    fn a_parent_not_listed_keeps_what_the_look_ups_read_and_is_asked_again_for_the_rest() {
        let served = discovery(true);
        let (api, log) = fake_api(move |seen: &Seen| match seen.uri.as_str() {
            "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinesets/ms" => {
                ok(&machine_set())
            }
            _ => served(seen),
        });
        let discovery = RefCell::new(Discovery::new(&api).unwrap());
        let read = Reads::default();
        // What a Machine's rules read of its MachineSet.
        let template_labels: &[&'static str] = &["spec", "template", "metadata", "labels"];
        read.borrow_mut().declaring(&[DeclaredLookup {
            group: LookupGroup::Named("cluster.x-k8s.io"),
            kind: Some("MachineSet"),
            projection: Projection::of(&[template_labels]),
        }]);
        let granted = BTreeSet::from([(
            "cluster.x-k8s.io/v1beta2".to_owned(),
            "MachineSet".to_owned(),
        )]);
        let reads = ClusterReads {
            api: &api,
            discovery: &discovery,
            granted: &granted,
            read: &read,
        };
        let gets = || {
            (log.lock().unwrap().iter())
                .filter(|s| s.uri.contains("/ms"))
                .count()
        };
        let reference = ObjectRef::of(&machine_set());
        let get = |paths: &[&[&'static str]]| reads.get(&reference, &Projection::of(paths));

        let labels = json!({"spec": {"template": {"metadata": {"labels": {"b": "2"}}}}});
        assert_eq!(get(&[template_labels]).unwrap(), labels);
        assert_eq!(get(&[template_labels]).unwrap(), labels);
        assert_eq!(gets(), 1, "read once");
        // Kept: the metadata, which every answer holds, and the template's
        // labels; not the rest of the spec, nor the status.
        let kept = |reference: &ObjectRef| {
            let reads = read.borrow();
            let kept = reads.read[reference].as_ref().unwrap();
            serde_json::from_slice::<Value>(&kept.json).unwrap()
        };
        assert_eq!(
            kept(&reference),
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
                   "metadata": {"name": "ms", "namespace": "default", "labels": {"a": "1"}},
                   "spec": {"template": {"metadata": {"labels": {"b": "2"}}}}})
        );

        // A look-up outside what is kept is asked of the cluster, and the
        // object is kept whole from then on.
        let replicas = get(&[&["spec", "replicas"]]).unwrap();
        assert_eq!(replicas, json!({"spec": {"replicas": 3}}));
        assert_eq!(gets(), 2);
        let version = get(&[&["spec", "template", "spec", "version"]]).unwrap();
        assert_eq!(
            version,
            json!({"spec": {"template": {"spec": {"version": "v1.34.4"}}}})
        );
        assert_eq!(get(&[template_labels]).unwrap(), labels);
        assert_eq!(gets(), 2);
        assert!(kept(&reference)["spec"]["selector"].is_object());
    }
}
