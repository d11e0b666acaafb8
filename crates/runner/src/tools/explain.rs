//! `policy-runner explain`: why each label, annotation and tag did or did
//! not flow, computed by the policy's own core linked natively, with parents
//! read from files instead of a cluster or a replay session.

use std::path::Path;

use anyhow::{Context, Result, bail};
use metadata_propagation_core::evaluate;
use metadata_propagation_core::lookup::MapLookup;
use metadata_propagation_core::outcome::Verdict;
use metadata_propagation_core::request::AdmissionRequest;
use serde_json::json;

use crate::cli::{ExplainArgs, OutputFormat};
use crate::commands::input::{core_settings, read_settings};
use crate::host::request::AdmissionRequest as HostedRequest;
use crate::tools::objects::read_objects;

/// Runs `args`, printing the explanation on stdout.
pub fn explain(args: &ExplainArgs) -> Result<()> {
    let request = read_request(&args.request_path)?;
    let mut lookup = MapLookup::new();
    for path in &args.parents {
        for parent in read_objects(path)? {
            lookup = lookup.with_object(parent);
        }
    }
    let settings = core_settings(&read_settings(&args.settings)?)?;

    let (outcome, explanation) = evaluate::explain(&request, &settings, &lookup);
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
                "allowed": allowed,
                "message": message,
                "warnings": outcome.warnings,
                "auditAnnotations": outcome.audit_annotations,
                "explanation": explanation,
                "patch": patch,
            }))?
        ),
        OutputFormat::Text => {
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
            print!("{explanation}");
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

/// A request file (AdmissionRequest or AdmissionReview, as `run` reads), or
/// a bare object, explained as an UPDATE.
fn read_request(path: &Path) -> Result<AdmissionRequest> {
    let mut objects = read_objects(path)?;
    if objects.len() != 1 {
        bail!("{} must hold exactly one request or object", path.display());
    }
    let document = objects.remove(0);
    if document.get("request").is_none() && document.get("object").is_none() {
        return Ok(AdmissionRequest::for_object("UPDATE", document));
    }
    let invalid = || format!("invalid request file {}", path.display());
    let request = HostedRequest::from_document(document).with_context(invalid)?;
    serde_json::from_value(request.value).with_context(invalid)
}
