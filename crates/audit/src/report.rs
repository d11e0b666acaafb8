//! The evaluation: every object the policy acts on is evaluated as an UPDATE
//! by the policy's own core in validate mode (whatever `mode` the settings
//! name), so the verdict and message are the ones a `mode: validate` policy
//! would answer for it. Parent look-ups go through the same [`Lookup`] trait
//! the policy uses, answered from the whole dump (`Dump`) and recorded. Each
//! object also gets the policy's explanation (where each expected key comes
//! from, each XR label's tag fate, the Machine's Node-bound keys), the
//! look-ups it made, and, when it deviates, the validate-mode report and the
//! JSON patch mutate mode would apply, both rendered from the one plan mutate
//! mode makes.

use std::collections::BTreeMap;
use std::sync::Arc;

use metadata_propagation_core::evaluate;
use metadata_propagation_core::lookup::ObjectRef;
use metadata_propagation_core::outcome::{Outcome, Verdict};
use metadata_propagation_core::plan::Plan;
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_core::settings::Settings;
use serde_json::{Value, json};

use crate::audit_error::AuditError;
use crate::compact::{Explained, Json};
use crate::dump_answers::{Dump, LookupRecord, Recorder};
use crate::origin::Origin;
use crate::tree::{Identity, Tree};

/// The settings as given, in validate mode whatever `mode` they name: the
/// audit answers what a `mode: validate` policy answers, and the plan that
/// policy refuses gives the patch that would fix a deviating object.
#[derive(Debug)]
pub struct AuditSettings {
    /// The settings with `mode: validate`.
    pub validate: Settings,
}

impl AuditSettings {
    /// Prepares the policy's settings (JSON, as `validate_settings` gets
    /// them) in validate mode; the `mode` they name is ignored.
    pub fn from_json(raw: &[u8]) -> Result<AuditSettings, AuditError> {
        let validate = Settings::from_json(raw)
            .map_err(|e| AuditError::Settings(e.to_string()))?
            .validating();
        Ok(AuditSettings { validate })
    }
}

/// Audits checked Kubernetes objects (see
/// [`crate::dump::kubernetes_objects`]); an object listed twice is refused,
/// naming both places.
pub fn audit_objects(
    objects: Vec<(Origin, Value)>,
    settings: &AuditSettings,
) -> Result<Report, AuditError> {
    audit(objects, settings)
}

fn audit(objects: Vec<(Origin, Value)>, settings: &AuditSettings) -> Result<Report, AuditError> {
    let mut seen: BTreeMap<Identity, Origin> = BTreeMap::new();
    for (origin, object) in &objects {
        let identity = Identity::of(object);
        if let Some(first) = seen.get(&identity) {
            return Err(AuditError::Duplicate {
                origin: origin.clone(),
                first: first.clone(),
                object: Box::new(reference(object)),
            });
        }
        seen.insert(identity, origin.clone());
    }

    // Each object is both a request and, for the others, a parent: the
    // dump answers look-ups from the requests' own objects, never a copy.
    let (origins, requests): (Vec<Origin>, Vec<AdmissionRequest>) = objects
        .into_iter()
        .map(|(origin, object)| (origin, AdmissionRequest::for_object("UPDATE", object)))
        .unzip();
    let dump = Dump::new(requests.iter().map(|r| &r.object).collect());
    let evaluations: Vec<Option<Evaluation>> = requests
        .iter()
        .map(|request| {
            request
                .acted_on()
                .then(|| evaluate_object(request, settings, Recorder::of_dump(&dump)))
        })
        .collect();
    drop(dump);
    let tree = {
        let values: Vec<&Value> = requests.iter().map(|r| &r.object).collect();
        let identities: Vec<Identity> = values.iter().map(|o| Identity::of(o)).collect();
        Tree::build(&values, &identities)
    };
    let objects: Vec<Audited> = origins
        .into_iter()
        .zip(requests)
        .zip(evaluations)
        .map(|((origin, request), evaluation)| {
            let api_version = request.object["apiVersion"].as_str().unwrap_or_default();
            let listed = Listed::new(origin, api_version);
            let identity = Identity::of(&request.object);
            let status = Status::of(evaluation.as_ref());
            let object = Some(Kept::Read(request.object));
            Audited::new(listed, identity, object, status, evaluation)
        })
        .collect();
    Ok(Report { objects, tree })
}

/// The identity the policy's look-ups use, which the report prints (an
/// empty namespace as none).
pub(crate) fn reference(object: &Value) -> ObjectRef {
    let mut reference = ObjectRef::of(object);
    reference.namespace = reference.namespace.filter(|ns| !ns.is_empty());
    reference
}

/// One object of the dump and what the audit found. A live audit keeps one
/// per object of the cluster: what many share (where it was read, the
/// apiVersion) is kept once ([`Listed`]), and the object itself only when
/// it is whole.
#[derive(Debug)]
pub struct Audited {
    listed: Arc<Listed>,
    /// Its identity in the tree.
    pub identity: Identity,
    object: Option<Box<Kept>>,
    /// The verdict.
    pub status: Status,
    /// `None` when the policy does not act on its kind (Cluster,
    /// ClusterClass, Kubernetes' own kinds), and, in a live audit, for a
    /// compliant object (kept with `--full`). Boxed: most objects of a
    /// live audit keep none, and a report holds every object.
    pub evaluation: Option<Box<Evaluation>>,
}

/// Where objects were read and at which apiVersion: a document of a dump,
/// or an API server's list (all its objects).
#[derive(Debug, PartialEq, Eq)]
pub struct Listed {
    /// Where.
    pub origin: Origin,
    /// The apiVersion.
    pub api_version: String,
}

impl Listed {
    /// Objects read at `api_version` from `origin`.
    pub fn new(origin: Origin, api_version: &str) -> Arc<Listed> {
        Arc::new(Listed {
            origin,
            api_version: api_version.to_owned(),
        })
    }
}

impl Audited {
    /// The object `identity`, read as `listed` says, kept whole when
    /// `object` holds it, and the verdict on it (with the evaluation it
    /// came from, when kept).
    pub(crate) fn new(
        listed: Arc<Listed>,
        identity: Identity,
        object: Option<Kept>,
        status: Status,
        evaluation: Option<Evaluation>,
    ) -> Audited {
        Audited {
            identity,
            listed,
            object: object.map(Box::new),
            status,
            evaluation: evaluation.map(Box::new),
        }
    }

    /// Where it was read.
    pub fn origin(&self) -> &Origin {
        &self.listed.origin
    }

    /// The apiVersion it was read at.
    pub fn api_version(&self) -> &str {
        &self.listed.api_version
    }

    /// Its apiVersion, kind, namespace and name.
    pub fn reference(&self) -> ObjectRef {
        let identity = &self.identity;
        ObjectRef {
            api_version: self.listed.api_version.clone(),
            kind: identity.kind().to_owned(),
            namespace: identity.namespace().map(str::to_owned),
            name: identity.name().to_owned(),
        }
    }

    /// The object as read (or as `--fix` wrote it), when it is kept:
    /// always in a dump; in a live audit, for an object that fails and the
    /// objects under it (every object with `--full`). A copy at each call
    /// (in a live audit, decoded from its compact JSON).
    pub fn object(&self) -> Option<Value> {
        self.object.as_deref().map(|kept| match kept {
            Kept::Read(object) => object.clone(),
            Kept::Compact(json) => json.value(),
        })
    }

    /// Whether the object is kept ([`Audited::object`]).
    pub fn whole(&self) -> bool {
        self.object.is_some()
    }

    /// Keeps `object` (as `--fix` wrote it) in place of the one read.
    pub fn replace_object(&mut self, object: &Value) {
        self.object = Some(Box::new(Kept::Compact(Json::of(object))));
    }
}

/// An object as a report keeps it: as read, in a dump, which holds every
/// object already; as compact JSON, in a live audit, which keeps only the
/// objects that fail and those under them, until `--fix` and the report.
#[derive(Debug)]
pub(crate) enum Kept {
    Read(Value),
    Compact(Json),
}

/// What the policy answered for one object, and why.
#[derive(Debug)]
pub struct Evaluation {
    /// The validate-mode outcome.
    pub outcome: Outcome,
    /// The validate-mode report, one entry per target map.
    pub deviations: Vec<String>,
    /// The JSON patch mutate mode would apply (`[]` when none).
    pub patch: Json,
    /// Why, and what was looked up: kept for every object of a dump, and,
    /// in a live audit, for the objects that fail (all with `--full`).
    pub detail: Option<Detail>,
}

/// Why an evaluation ended as it did, as the report prints it.
#[derive(Debug)]
pub struct Detail {
    /// Why each key and tag did or did not flow.
    pub explanation: Explained,
    /// The look-ups the evaluation made, in order.
    pub lookups: Vec<LookupRecord>,
}

/// The audit's verdict on one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Validate mode accepts it.
    Compliant,
    /// Validate mode rejects it for deviating from the contract.
    Deviates,
    /// Rejected for another reason: malformed, or a look-up failed.
    Rejected,
    /// The policy does not act on its kind.
    NotEvaluated,
}

impl Status {
    /// The name in the JSON report.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Compliant => "compliant",
            Status::Deviates => "deviates",
            Status::Rejected => "rejected",
            Status::NotEvaluated => "not-evaluated",
        }
    }
}

impl Audited {
    /// The verdict.
    pub fn status(&self) -> Status {
        self.status
    }
}

impl Status {
    /// The verdict on an evaluation (`None`: the policy does not act on the
    /// object's kind).
    pub fn of(evaluation: Option<&Evaluation>) -> Status {
        let Some(outcome) = evaluation.map(|e| &e.outcome) else {
            return Status::NotEvaluated;
        };
        match &outcome.verdict {
            // Validate mode refused to apply a plan: it rejected the object
            // for it, or (a managed resource's UPDATE, which is never
            // refused) warned of it.
            _ if outcome.refused_plan.is_some() => Status::Deviates,
            Verdict::Allow(_) => Status::Compliant,
            Verdict::Reject { .. } => Status::Rejected,
        }
    }
}

/// Every object, and the ownership tree over them.
#[derive(Debug)]
pub struct Report {
    /// The objects in dump order; the tree indexes into it.
    pub objects: Vec<Audited>,
    /// The ownership tree.
    pub tree: Tree,
}

/// How many objects ended how.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Objects in the dump.
    pub objects: usize,
    /// Objects the policy acts on, each evaluated.
    pub audited: usize,
    /// Accepted in validate mode.
    pub compliant: usize,
    /// Rejected for deviating.
    pub deviating: usize,
    /// Rejected for another reason.
    pub rejected: usize,
}

impl Summary {
    /// Objects that make the audit fail.
    pub fn failing(&self) -> usize {
        self.deviating + self.rejected
    }
}

impl Report {
    /// The counts.
    pub fn summary(&self) -> Summary {
        let mut summary = Summary {
            objects: self.objects.len(),
            ..Summary::default()
        };
        for object in &self.objects {
            match object.status() {
                Status::Compliant => summary.compliant += 1,
                Status::Deviates => summary.deviating += 1,
                Status::Rejected => summary.rejected += 1,
                Status::NotEvaluated => continue,
            }
            summary.audited += 1;
        }
        summary
    }
}

/// Evaluates one object the policy acts on, its look-ups answered by
/// `recorder`.
pub(crate) fn evaluate_object(
    request: &AdmissionRequest,
    settings: &AuditSettings,
    recorder: Recorder<'_>,
) -> Evaluation {
    let (outcome, explanation) = evaluate::explain(request, &settings.validate, &recorder);
    // Validate mode keeps the plan its report was rendered from: the
    // deviations and the patch come from that one decision.
    let (deviations, patch) = match &outcome.refused_plan {
        Some(plan) => (plan.deviations(), patch(&request.object, plan)),
        None => (Vec::new(), json!([])),
    };
    Evaluation {
        outcome,
        deviations,
        patch: Json::of(&patch),
        detail: Some(Detail {
            explanation: Explained::Whole(explanation),
            lookups: recorder.records.into_inner(),
        }),
    }
}

/// The JSON patch applying `plan` to `object`, as the host would build it.
fn patch(object: &Value, plan: &Plan) -> Value {
    let mut mutated = object.clone();
    plan.apply(&mut mutated);
    serde_json::to_value(json_patch::diff(object, &mutated)).unwrap_or_else(|_| json!([]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Answer;

    fn origin(document: usize) -> Origin {
        Origin {
            file: "dump.yaml".to_owned(),
            document,
            items: Vec::new(),
        }
    }

    fn settings() -> AuditSettings {
        AuditSettings::from_json(b"{}").unwrap()
    }

    fn parents(tree: &Tree) -> Vec<Option<usize>> {
        (0..tree.len()).map(|i| tree.parent(i)).collect()
    }

    fn audit(objects: Vec<Value>) -> Result<Report, AuditError> {
        let objects = objects
            .into_iter()
            .enumerate()
            .map(|(i, o)| (origin(i + 1), o))
            .collect();
        audit_objects(objects, &settings())
    }

    fn machine_deployment(api_version: &str) -> Value {
        json!({"apiVersion": api_version, "kind": "MachineDeployment",
            "metadata": {"name": "md", "namespace": "default", "uid": "md-uid"},
            "spec": {"template": {"metadata": {"labels": {"nodepool": "pool1"}}}}})
    }

    fn machine_set(owner_api_version: &str, labels: Value) -> Value {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
            "metadata": {"name": "ms", "namespace": "default", "labels": labels,
                "ownerReferences": [{"apiVersion": owner_api_version,
                    "kind": "MachineDeployment", "name": "md", "uid": "md-uid",
                    "controller": true}]}})
    }

    #[test]
    fn audit_refuses_an_object_listed_twice_naming_both_places() {
        let md = machine_deployment("cluster.x-k8s.io/v1beta2");
        let err = audit(vec![md.clone(), md]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "dump.yaml document 2: MachineDeployment default/md (cluster.x-k8s.io/v1beta2) is \
             also at dump.yaml document 1; a dump must list each object once"
        );
    }

    /// A managed resource is audited under its composite resource: a
    /// deviation of its tags is reported, though validate mode only warns
    /// on its UPDATE (it never refuses one).
    #[test]
    fn a_managed_resource_that_lacks_its_xrs_tags_deviates_under_its_xr() {
        let settings = AuditSettings::from_json(
            br#"{"cloudTags": {"propagatingLabels": ["team"],
                "managedResources": {"families": ["aws"]}}}"#,
        )
        .unwrap();
        let xr = json!({"apiVersion": "platform.example.org/v1alpha1", "kind": "XNetwork",
            "metadata": {"name": "net", "uid": "xr-uid",
                "labels": {"crossplane.io/composite": "net", "team": "checkout"}},
            "spec": {"compositionUpdatePolicy": "Automatic",
                "cloudTags": {"plexsphere:team": "checkout"}}});
        let vpc = |tags: Value| {
            json!({"apiVersion": "ec2.aws.upbound.io/v1beta1", "kind": "VPC",
                "metadata": {"name": "net-vpc", "labels": {"crossplane.io/composite": "net"},
                    "ownerReferences": [{"apiVersion": "platform.example.org/v1alpha1",
                        "kind": "XNetwork", "name": "net", "uid": "xr-uid", "controller": true}]},
                "spec": {"forProvider": {"region": "eu-central-1", "tags": tags},
                    "providerConfigRef": {"name": "default"}}})
        };
        for (tags, status) in [
            (json!({"Name": "net"}), Status::Deviates),
            (
                json!({"Name": "net", "plexsphere:team": "checkout"}),
                Status::Compliant,
            ),
        ] {
            let objects = vec![(origin(1), xr.clone()), (origin(2), vpc(tags))];
            let report = audit_objects(objects, &settings).unwrap();
            let statuses: Vec<Status> = report.objects.iter().map(Audited::status).collect();
            assert_eq!(statuses, [Status::Compliant, status]);
            let mr = report.objects[1].evaluation.as_ref().unwrap();
            assert_eq!(
                mr.detail.as_ref().unwrap().lookups.len(),
                1,
                "its XR, from the dump"
            );
            assert_eq!(report.tree.parent(1), Some(0), "under its XR");
        }
    }

    #[test]
    fn audit_counts_compliant_deviating_rejected_and_not_evaluated() {
        let mut malformed = machine_set("cluster.x-k8s.io/v1beta2", json!({}));
        malformed["metadata"]["name"] = json!("ms-malformed");
        malformed["metadata"]["ownerReferences"][0]
            .as_object_mut()
            .unwrap()
            .remove("name");
        let report = audit(vec![
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                "metadata": {"name": "c", "namespace": "default"}}),
            machine_deployment("cluster.x-k8s.io/v1beta2"),
            machine_set("cluster.x-k8s.io/v1beta2", json!({"nodepool": "pool0"})),
            malformed,
        ])
        .unwrap();

        let statuses: Vec<Status> = report.objects.iter().map(Audited::status).collect();
        assert_eq!(
            statuses,
            [
                Status::NotEvaluated,
                Status::Compliant,
                Status::Deviates,
                Status::Rejected
            ]
        );
        assert_eq!(
            report.summary(),
            Summary {
                objects: 4,
                audited: 3,
                compliant: 1,
                deviating: 1,
                rejected: 1
            }
        );
        let deviating = report.objects[2].evaluation.as_ref().unwrap();
        assert_eq!(
            deviating.deviations,
            [
                r#"metadata.labels: "nodepool" is "pool0" (expected "pool1")"#,
                r#"spec.template.metadata.labels: missing "nodepool" (expected "pool1")"#
            ]
        );
        assert_eq!(
            deviating.patch,
            json!([
                {"op": "replace", "path": "/metadata/labels/nodepool", "value": "pool1"},
                {"op": "add", "path": "/spec",
                 "value": {"template": {"metadata": {"labels": {"nodepool": "pool1"}}}}}
            ])
        );
        let rejected = report.objects[3].evaluation.as_ref().unwrap();
        assert_eq!(rejected.patch, json!([]));
        assert!(rejected.deviations.is_empty());
        // the MachineDeployment names no owner, the malformed MachineSet no
        // readable one: both are roots
        assert_eq!(parents(&report.tree), [None, None, Some(1), None]);
    }

    /// A control plane's Machine, for every provider: the RKE2 one lacks
    /// its machine template's label and deviates; a Talos control plane
    /// has no machine template, so its Machine is compliant as it is.
    #[test]
    fn audit_judges_machines_of_any_control_plane_provider() {
        let machine = |name: &str, owner_api: &str, owner_kind: &str, owner: &str| {
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
                "metadata": {"name": name, "namespace": "default",
                    "labels": {"cluster.x-k8s.io/cluster-name": "c1",
                               "cluster.x-k8s.io/control-plane": ""},
                    "ownerReferences": [{"apiVersion": owner_api, "kind": owner_kind,
                        "name": owner, "uid": format!("{owner}-uid"), "controller": true}]},
                "spec": {"clusterName": "c1", "version": "v1.31.0",
                    "bootstrap": {"configRef": {"apiGroup": "bootstrap.cluster.x-k8s.io",
                        "kind": "RKE2Config", "name": name}},
                    "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io",
                        "kind": "DockerMachine", "name": name}}})
        };
        let rke2 = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
            "kind": "RKE2ControlPlane",
            "metadata": {"name": "rke2-cp", "namespace": "default", "uid": "rke2-cp-uid"},
            "spec": {"version": "v1.31.4+rke2r1", "rolloutStrategy": {"type": "RollingUpdate"},
                "machineTemplate": {
                    "metadata": {"labels": {"platform.example.com/team": "payments"}},
                    "spec": {"infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io",
                        "kind": "DockerMachineTemplate", "name": "cp"}}}}});
        let talos = json!({"apiVersion": "controlplane.cluster.x-k8s.io/v1alpha3",
            "kind": "TalosControlPlane",
            "metadata": {"name": "talos-cp", "namespace": "default", "uid": "talos-cp-uid"},
            "spec": {"version": "v1.31.0",
                "controlPlaneConfig": {"controlplane": {"generateType": "controlplane"}},
                "infrastructureTemplate": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                    "kind": "DockerMachineTemplate", "name": "cp"}}});
        let report = audit(vec![
            rke2,
            talos,
            machine(
                "rke2-cp-x7k2p",
                "controlplane.cluster.x-k8s.io/v1beta2",
                "RKE2ControlPlane",
                "rke2-cp",
            ),
            machine(
                "talos-cp-9q4zt",
                "controlplane.cluster.x-k8s.io/v1alpha3",
                "TalosControlPlane",
                "talos-cp",
            ),
        ])
        .unwrap();
        let statuses: Vec<Status> = report.objects.iter().map(Audited::status).collect();
        assert_eq!(
            statuses,
            // The control planes are judged too (against a topology
            // Cluster they do not have).
            [
                Status::Compliant,
                Status::Compliant,
                Status::Deviates,
                Status::Compliant
            ]
        );
        let deviating = report.objects[2].evaluation.as_ref().unwrap();
        assert_eq!(
            deviating.deviations,
            [r#"metadata.labels: missing "platform.example.com/team" (expected "payments")"#]
        );
        assert_eq!(parents(&report.tree), [None, None, Some(0), Some(1)]);
    }

    #[test]
    fn audit_lookup_at_another_version_says_where_the_dump_has_it() {
        let report = audit(vec![
            machine_deployment("cluster.x-k8s.io/v1beta2"),
            machine_set("cluster.x-k8s.io/v1beta1", json!({})),
        ])
        .unwrap();

        let ms = &report.objects[1];
        // the policy reads the parent at the ownerReference's version; the
        // dump has it at another one: not found, so allowed unchanged
        assert_eq!(ms.status(), Status::Compliant);
        let lookups = &ms
            .evaluation
            .as_ref()
            .unwrap()
            .detail
            .as_ref()
            .unwrap()
            .lookups;
        assert_eq!(lookups.len(), 1);
        assert_eq!(
            lookups[0].reference.to_string(),
            "MachineDeployment default/md (cluster.x-k8s.io/v1beta1)"
        );
        assert_eq!(
            lookups[0].answer,
            Answer::NotFound {
                in_dump_at: Some("cluster.x-k8s.io/v1beta2".to_owned())
            }
        );
        assert!(
            lookups[0]
                .field_masks
                .contains("spec.template.metadata.labels")
        );
        // the tree ignores versions: the MachineSet is under its MachineDeployment
        assert_eq!(parents(&report.tree), [None, Some(0)]);
    }

    #[test]
    fn audit_reports_infrastructure_tag_drift_from_the_cluster_in_the_dump() {
        let cluster = |team: &str| {
            json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                "metadata": {"name": "c", "namespace": "default", "labels": {"team": team}}})
        };
        let aws_cluster = json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
            "kind": "AWSCluster",
            "metadata": {"name": "c", "namespace": "default",
                "labels": {"cluster.x-k8s.io/cluster-name": "c"}},
            "spec": {"region": "eu-central-1",
                "additionalTags": {"owner": "sre", "plexsphere:team": "payments"}}});
        let on = AuditSettings::from_json(
            br#"{"cloudTags": {"capiInfrastructure": true, "propagatingLabels": ["team"]}}"#,
        )
        .unwrap();
        let audit_with = |settings: &AuditSettings, team: &str| {
            let objects = vec![(origin(1), cluster(team)), (origin(2), aws_cluster.clone())];
            audit_objects(objects, settings).unwrap()
        };

        let clean = audit_with(&on, "payments");
        assert_eq!(clean.objects[1].status(), Status::Compliant);
        let report = audit_with(&on, "payments-core");
        let aws = &report.objects[1];
        assert_eq!(aws.status(), Status::Deviates);
        let evaluation = aws.evaluation.as_ref().unwrap();
        assert_eq!(
            evaluation.deviations,
            [r#"spec.additionalTags: "plexsphere:team" is "payments" (expected "payments-core")"#]
        );
        assert_eq!(
            evaluation.patch,
            json!([{"op": "replace", "path": "/spec/additionalTags/plexsphere:team",
                "value": "payments-core"}])
        );
        assert_eq!(
            evaluation.detail.as_ref().unwrap().lookups[0]
                .reference
                .to_string(),
            "Cluster default/c (cluster.x-k8s.io/v1beta2)"
        );
        assert_eq!(
            evaluation.detail.as_ref().unwrap().lookups[0].answer,
            Answer::Found
        );
        // under its Cluster, by its cluster-name label
        assert_eq!(parents(&report.tree), [None, Some(0)]);
        // the feature off: the tag field is not the policy's
        let off = audit_with(&settings(), "payments-core");
        assert_eq!(off.objects[1].status(), Status::Compliant);
    }

    /// The audit judges what the policy writes: a composite resource whose
    /// tags are right is compliant without the skip annotation, and its
    /// skips are its warnings.
    #[test]
    fn audit_never_counts_the_skip_annotation_as_drift() {
        let xr = json!({"apiVersion": "platform.example.org/v1alpha1", "kind": "XNetwork",
            "metadata": {"name": "net", "labels": {"team": "payments"},
                "annotations": {"cloud-tags.plexsphere.io/labels": r#"{"aws:cost": "42"}"#}},
            "spec": {"parameters": {"provider": "aws"},
                "cloudTags": {"plexsphere:team": "payments"}}});
        let settings = AuditSettings::from_json(
            br#"{"cloudTags": {"propagatingLabels": ["team", "aws:cost"]}}"#,
        )
        .unwrap();
        let report = audit_objects(vec![(origin(1), xr)], &settings).unwrap();
        let object = &report.objects[0];
        assert_eq!(object.status(), Status::Compliant);
        let evaluation = object.evaluation.as_ref().unwrap();
        assert_eq!(evaluation.deviations, Vec::<String>::new());
        let warnings = &evaluation.outcome.warnings;
        assert_eq!(warnings.len(), 1, "{warnings:?}");
    }

    #[test]
    fn audit_settings_ignore_the_mode_and_refuse_what_the_policy_refuses() {
        // In mutate mode a drifted MachineSet would be allowed with a patch;
        // the audit judges it as validate mode does: refused.
        let settings = AuditSettings::from_json(br#"{"mode": "mutate"}"#).unwrap();
        let drifted = vec![
            (origin(1), machine_deployment("cluster.x-k8s.io/v1beta2")),
            (
                origin(2),
                machine_set("cluster.x-k8s.io/v1beta2", json!({"nodepool": "pool0"})),
            ),
        ];
        let report = audit_objects(drifted, &settings).unwrap();
        let verdict = &report.objects[1]
            .evaluation
            .as_ref()
            .unwrap()
            .outcome
            .verdict;
        assert!(
            matches!(
                verdict,
                metadata_propagation_core::outcome::Verdict::Reject { .. }
            ),
            "{verdict:?}"
        );
        let err = AuditSettings::from_json(
            br#"{"cloudTags": {"propagatingLabels": ["platform/origin"]}}"#,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("Provided settings are not valid: cloudTags.propagatingLabels[0]: "),
            "{err}"
        );
    }
}
