//! `policy-runner explain`: why each label, annotation and tag did or did
//! not flow, computed by the policy's own core linked natively, with parents
//! read from files instead of a cluster or a replay session, warning of a
//! parent given in another namespace or version as `run --parents` does.

use std::path::Path;

use anyhow::{Context, Result, bail};
use metadata_propagation_core::evaluate;
use metadata_propagation_core::explain::Explanation;
use metadata_propagation_core::lookup::{MapLookup, ObjectRef};
use metadata_propagation_core::outcome::Verdict;
use metadata_propagation_core::request::AdmissionRequest;
use serde_json::json;

use crate::cli::{ExplainArgs, OutputFormat};
use crate::commands::input::{core_settings, read_settings};
use crate::host::lookups::Lookups;
use crate::host::parents::Parents;
use crate::host::replay::GetResourceRequest;
use crate::host::request::AdmissionRequest as HostedRequest;
use crate::tools::objects::{read_kubernetes_objects, read_objects};

/// Runs `args`, printing the explanation on stdout.
pub fn explain(args: &ExplainArgs) -> Result<()> {
    let (request, from) = read_request(&args.request_path, args.operation.as_deref())?;
    let mut given = Vec::new();
    for path in &args.parents {
        let objects = read_kubernetes_objects(path)?.into_iter();
        given.extend(objects.map(|(origin, object)| (origin.to_string(), object)));
    }
    let lookup = (given.iter()).fold(MapLookup::new(), |l, (_, o)| l.with_object(o.clone()));
    let parents = Parents::new(given).context("invalid --parent objects")?;
    let settings = core_settings(&read_settings(&args.settings)?)?;

    let (outcome, explanation) = evaluate::explain(&request, &settings, &lookup);
    // Asked again of the parents as `run --parents` asks them, a look-up
    // that found nothing warns of a parent in another namespace or version.
    let (mut parents, requests) = (Lookups::Parents(parents), lookup.requests());
    for wanted in &requests {
        let (version, kind, name) = (&wanted.api_version, &wanted.kind, &wanted.name);
        let asked = json!({"api_version": version, "kind": kind, "name": name,
                           "namespace": wanted.namespace});
        let _ = parents.answer(&serde_json::from_value::<GetResourceRequest>(asked)?);
    }
    let (allowed, message, patch) = match &outcome.verdict {
        Verdict::Allow(plan) => {
            let mut mutated = request.object.clone();
            plan.apply(&mut mutated);
            let patch = json_patch::diff(&request.object, &mutated);
            (true, None, serde_json::to_value(patch)?)
        }
        Verdict::Reject { message, .. } => (false, Some(message.clone()), json!([])),
    };
    match args.output {
        OutputFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "operation": request.operation,
                "operationAssumed": from.starts_with("assumed"),
                "allowed": allowed,
                "message": message,
                "warnings": outcome.warnings,
                "auditAnnotations": outcome.audit_annotations,
                "explanation": explanation,
                "patch": patch,
            }))?
        ),
        OutputFormat::Text => {
            println!("operation: {} ({from})", request.operation);
            match &message {
                None => println!("decision: allowed"),
                Some(m) => println!("decision: rejected: {m}"),
            }
            for warning in &outcome.warnings {
                println!("warning: {warning}");
            }
            for (key, value) in &outcome.audit_annotations {
                println!("audit annotation {key}: {value:?}");
            }
            let kind = &request.kind.kind;
            print!("{}", text(&explanation, kind, &requests, args.verbose));
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

/// The explanation as text: unless `verbose`, without empty target maps and
/// with the in-place fields neither side sets counted. The core's note that
/// no parent was looked up for the metadata of this `kind` is said again
/// with the Cluster `requests` read for the cloud tags, which it contradicts.
fn text(explanation: &Explanation, kind: &str, requests: &[ObjectRef], verbose: bool) -> String {
    let mut head = explanation.clone();
    let infra = (explanation.cloud_tags.as_ref()).is_some_and(|tags| tags.field.is_some());
    let clusters: Vec<String> = (requests.iter())
        .filter(|r| infra && r.kind == "Cluster")
        .map(ToString::to_string)
        .collect();
    let contradicted = |note: &&mut String| {
        !clusters.is_empty() && note.ends_with("no parent looked up for its metadata")
    };
    for note in head.notes.iter_mut().filter(contradicted) {
        *note = format!(
            "no propagation rule gives this {kind} its labels and annotations: they are left as \
             they are; {} is read for the cloud tags only",
            clusters.join(", ")
        );
    }
    if verbose {
        return head.to_string();
    }
    head.paths.retain(|path| !path.keys.is_empty());
    let (shown, unset): (Vec<_>, Vec<_>) = (std::mem::take(&mut head.fields).into_iter())
        .partition(|field| field.value.is_some() || field.found.is_some());
    head.fields = shown;
    let tail = Explanation {
        node_sync: head.node_sync.take(),
        cloud_tags: head.cloud_tags.take(),
        ..Explanation::default()
    };
    let more = " (--verbose lists them)\n";
    let unset = match (unset.len(), head.fields.is_empty()) {
        (0, _) => String::new(),
        (n, true) => format!("fields: none of {n} is set by the parent or the child{more}"),
        (n, false) => format!("  and {n} more that neither the parent nor the child sets{more}"),
    };
    format!("{head}{unset}{tail}")
}

const ASSUMED: &str = "assumed for a bare object; --operation CREATE explains a CREATE";
