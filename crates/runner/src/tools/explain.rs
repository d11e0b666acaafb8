//! `policy-runner explain`: why each label, annotation and tag did or did
//! not flow, computed by the policy's own core linked natively, with parents
//! read from files instead of a cluster or a replay session, warning of a
//! parent given in another namespace or version as `run --parents` does.
//! A look-up the module's `contextAwareResources` do not grant is refused
//! with the host's refusal, so the decision is the one the module gets from
//! a policy-server, and the explanation names the look-up and the fix.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use anyhow::{Context, Result, bail};
use metadata_propagation_core::evaluate;
use metadata_propagation_core::lookup::{Lookup, LookupError, MapLookup, ObjectRef};
use metadata_propagation_core::outcome::Verdict;
use metadata_propagation_core::projection::Projection;
use metadata_propagation_core::request::AdmissionRequest;
use metadata_propagation_policy::host_lookup::classify_host_error;
use serde_json::{Value, json};

use crate::cli::{ExplainArgs, OutputFormat};
use crate::commands::input::{core_settings, read_settings};
use crate::commands::metadata::Metadata;
use crate::host::callback::{ACCESS_DENIED, ContextAwareResource};
use crate::host::lookups::Lookups;
use crate::host::parents::Parents;
use crate::host::replay::GetResourceRequest;
use crate::host::request::AdmissionRequest as HostedRequest;
use crate::tools::objects::{read_kubernetes_objects, read_objects};

/// The metadata the module is annotated with (`make annotated-policy.wasm`,
/// `make release`): its `contextAwareResources` are what a policy-server
/// lets the shipped module read, and what `kwctl scaffold manifest
/// --allow-context-aware` copies into a ClusterAdmissionPolicy.
const SHIPPED_METADATA: &str = include_str!("../../../../policy-metadata.yml");

/// Runs `args`, printing the explanation on stdout.
pub fn explain(args: &ExplainArgs) -> Result<()> {
    let (request, from) = read_request(&args.request_path, args.operation.as_deref())?;
    let mut given = Vec::new();
    for path in &args.parents {
        let objects = read_kubernetes_objects(path)?.into_iter();
        given.extend(objects.map(|(origin, object)| (origin.to_string(), object)));
    }
    let lookup = (given.iter()).fold(MapLookup::default(), |l, (_, o)| l.with_object(o.clone()));
    let parents = Parents::new(given).context("invalid --parent objects")?;
    let settings = core_settings(&read_settings(&args.settings)?)?;
    let (granted, metadata) = granted(args.metadata_path.as_deref())?;
    let guarded = Granted {
        lookup: &lookup,
        granted: &granted,
        refused: RefCell::default(),
        asked: RefCell::default(),
    };

    let (outcome, explanation) = evaluate::explain(&request, &settings, &guarded);
    let (refused, requests) = (guarded.refused.into_inner(), guarded.asked.into_inner());
    // Asked again of the parents as `run --parents` asks them, a look-up
    // that found nothing warns of a parent in another namespace or version.
    let mut parents = Lookups::Parents(parents);
    for wanted in &requests {
        let (version, kind, name) = (&wanted.api_version, &wanted.kind, &wanted.name);
        let asked = json!({"api_version": version, "kind": kind, "name": name,
                           "namespace": wanted.namespace});
        let _ = parents.answer(&serde_json::from_value::<GetResourceRequest>(asked)?);
    }
    let (allowed, message, code, patch) = match &outcome.verdict {
        Verdict::Allow(plan) => {
            let mut mutated = request.object.clone();
            plan.apply(&mut mutated);
            let patch = json_patch::diff(&request.object, &mutated);
            (true, None, None, serde_json::to_value(patch)?)
        }
        Verdict::Reject { message, code } => (false, Some(message.clone()), Some(*code), json!([])),
    };
    match args.output {
        OutputFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "operation": request.operation,
                "operationAssumed": from.starts_with("assumed"),
                "allowed": allowed,
                "message": message,
                "code": code,
                "warnings": outcome.warnings,
                "auditAnnotations": outcome.audit_annotations,
                "refusedLookups": refused.iter().map(|object| json!({
                    "apiVersion": object.api_version,
                    "kind": object.kind,
                    "name": object.name,
                    "namespace": object.namespace,
                    "why": refusal(object, &metadata),
                })).collect::<Vec<_>>(),
                "explanation": explanation,
                "patch": patch,
            }))?
        ),
        OutputFormat::Text => {
            println!("operation: {} ({from})", request.operation);
            match &outcome.verdict {
                Verdict::Allow(_) => println!("decision: allowed"),
                Verdict::Reject { message, code } => {
                    println!("decision: rejected ({code}): {message}")
                }
            }
            for object in &refused {
                println!("refused look-up: {object}: {}", refusal(object, &metadata));
            }
            for warning in &outcome.warnings {
                println!("warning: {warning}");
            }
            for (key, value) in &outcome.audit_annotations {
                println!("audit annotation {key}: {value:?}");
            }
            let kind = &request.kind.kind;
            print!("{}", explanation.text(kind, &requests, args.verbose));
            let ops = patch.as_array().map_or(0, Vec::len);
            if ops == 0 {
                println!("patch: none");
            } else {
                println!("patch:");
                for op in patch.as_array().into_iter().flatten() {
                    println!("  {op}");
                }
            }
        }
    }
    Ok(())
}

/// The resources the module may read, from the metadata at `path` or the
/// shipped one, and how to name that metadata in a refusal.
fn granted(path: Option<&Path>) -> Result<(BTreeSet<ContextAwareResource>, String)> {
    let (text, name) = match path {
        Some(path) => {
            let text = fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            (text, path.display().to_string())
        }
        None => (
            SHIPPED_METADATA.to_owned(),
            "policy-metadata.yml".to_owned(),
        ),
    };
    let metadata =
        Metadata::from_yaml(&text).with_context(|| format!("invalid metadata {name}"))?;
    Ok((metadata.context_aware_resources, name))
}

/// Why `object` was not read, and where to grant it.
fn refusal(object: &ObjectRef, metadata: &str) -> String {
    format!(
        "{}/{} is not in the contextAwareResources of {metadata}: the module annotated with it \
         is refused this look-up, and the request rejected (500); grant it in the \
         ClusterAdmissionPolicy's spec.contextAwareResources and the policy-server's ClusterRole \
         ({DEPLOYING})",
        object.api_version, object.kind
    )
}

/// Where the docs say how to grant a kind to the policy.
const DEPLOYING: &str = "docs/deploying.md#adding-a-control-plane-kind";

/// [`Lookup`] over the parents given, refusing what the metadata does not
/// grant with the host's refusal as the module reads it
/// (`classify_host_error`), and recording each refusal and each look-up
/// it passes on, in order.
struct Granted<'a> {
    lookup: &'a MapLookup,
    granted: &'a BTreeSet<ContextAwareResource>,
    refused: RefCell<Vec<ObjectRef>>,
    asked: RefCell<Vec<ObjectRef>>,
}

impl Lookup for Granted<'_> {
    fn get(
        &self,
        object: &ObjectRef,
        projection: &Projection<'static>,
    ) -> Result<Value, LookupError> {
        let resource = ContextAwareResource {
            api_version: object.api_version.clone(),
            kind: object.kind.clone(),
        };
        if self.granted.contains(&resource) {
            self.asked.borrow_mut().push(object.clone());
            return self.lookup.get(object, projection);
        }
        self.refused.borrow_mut().push(object.clone());
        let resource = format!("{}/{}", object.api_version, object.kind);
        Err(classify_host_error(
            &ACCESS_DENIED.replace("{resource}", &resource),
        ))
    }
}

/// A request file (as `run` reads it), or a bare object as `operation`
/// (default UPDATE); and where the operation comes from.
fn read_request(path: &Path, operation: Option<&str>) -> Result<(AdmissionRequest, &'static str)> {
    let mut objects = read_objects(path)?;
    if objects.len() != 1 {
        bail!("{} must hold exactly one request or object", path.display());
    }
    let document = objects.remove(0);
    let invalid = || format!("invalid request file {}", path.display());
    let is_request = document.get("request").is_some() || document.get("object").is_some();
    let (request, from) = match (is_request, operation) {
        (false, None) => (AdmissionRequest::for_object("UPDATE", document), ASSUMED),
        (false, Some(op)) => (AdmissionRequest::for_object(op, document), "--operation"),
        (true, None) => {
            let request = HostedRequest::from_document(document)
                .with_context(invalid)?
                .value;
            let request = serde_json::from_value(request).with_context(invalid)?;
            (request, "the request's")
        }
        (true, Some(_)) => bail!(
            "--operation explains a bare object as that operation, but {} holds a request: \
             leave --operation out",
            path.display()
        ),
    };
    Ok((request, from))
}

const ASSUMED: &str = "assumed for a bare object; --operation CREATE explains a CREATE";

#[cfg(test)]
mod tests {
    use super::*;

    fn object(api_version: &str, kind: &str) -> ObjectRef {
        ObjectRef {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            name: "p".to_owned(),
            namespace: Some("default".to_owned()),
        }
    }

    /// The shipped metadata grants what the policy reads of a CAPI
    /// quick-start, at both API versions, and no other control plane.
    #[test]
    fn the_shipped_metadata_grants_the_parents_the_examples_read() {
        let (granted, name) = granted(None).unwrap();
        assert_eq!(name, "policy-metadata.yml");
        for version in ["v1beta1", "v1beta2"] {
            for kind in ["Cluster", "ClusterClass", "MachineDeployment", "MachineSet"] {
                let resource = ContextAwareResource {
                    api_version: format!("cluster.x-k8s.io/{version}"),
                    kind: kind.to_owned(),
                };
                assert!(granted.contains(&resource), "{resource:?}");
            }
        }
        // A provider the shipped metadata does not list (cluster-api-k3s).
        let k3s = ContextAwareResource {
            api_version: "controlplane.cluster.x-k8s.io/v1beta2".to_owned(),
            kind: "KThreesControlPlane".to_owned(),
        };
        assert!(!granted.contains(&k3s));
    }

    /// A look-up outside the grant fails as the module's does, with the
    /// host's refusal, and is recorded; one inside it is answered.
    #[test]
    fn a_look_up_outside_the_grant_is_refused_with_the_hosts_text() {
        let (granted, _) = granted(None).unwrap();
        let lookup = MapLookup::default();
        let guarded = Granted {
            lookup: &lookup,
            granted: &granted,
            refused: RefCell::default(),
            asked: RefCell::default(),
        };
        let projection = Projection::of(&[&["metadata"]]);
        let k3s = object(
            "controlplane.cluster.x-k8s.io/v1beta2",
            "KThreesControlPlane",
        );
        assert_eq!(
            guarded.get(&k3s, &projection),
            Err(LookupError::Denied(
                "Policy has not been granted access to Kubernetes \
                 controlplane.cluster.x-k8s.io/v1beta2/KThreesControlPlane resources. The violation \
                 has been reported."
                    .to_owned()
            ))
        );
        let kcp = object(
            "controlplane.cluster.x-k8s.io/v1beta2",
            "KubeadmControlPlane",
        );
        assert_eq!(guarded.get(&kcp, &projection), Err(LookupError::NotFound));
        assert_eq!(guarded.refused.into_inner(), [k3s]);
        assert_eq!(guarded.asked.into_inner(), [kcp]);
    }

    /// The refusal points at a section the docs have.
    #[test]
    fn the_refusal_names_a_section_of_the_docs() {
        let (path, anchor) = DEPLOYING.split_once('#').unwrap();
        let docs = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../..")
                .join(path),
        )
        .unwrap();
        let heading = format!("## {}", anchor.replace('-', " "));
        assert!(
            docs.lines().any(|line| line.eq_ignore_ascii_case(&heading)),
            "{path} has no heading {heading:?}"
        );
    }
}
