//! The decision on one request, top to bottom: route it, let each stage
//! name what it reads, read each object once, let each stage decide over
//! what was read, and in validate mode turn the plan into the deviations
//! it refuses.

mod decision_trace;
mod object_projection;
pub(crate) mod route;

pub(crate) use object_projection::default_object_projection;
pub(crate) use object_projection::{default_projection_covers, object_projection};
pub(crate) use route::{Route, not_acted_on, route};

use crate::error::Error;
use crate::explain::Explanation;
use crate::lookup::Lookup;
use crate::outcome::Outcome;
use crate::plan::Plan;
use crate::reads::read_all;
use crate::request::AdmissionRequest;
use crate::settings::Settings;
use crate::stage_report::Reported;
use crate::{capi, deviations, tags};
use decision_trace::Trace;

/// Decides one admission request. Pure apart from `lookup`.
///
/// Cluster API groups go to the CAPI propagation rules; Kubernetes' own
/// kinds are allowed unchanged with a warning naming the kind; every other
/// kind is tagged when it has a Crossplane composite resource's shape, and
/// allowed unchanged with a warning naming the kind otherwise. DELETE,
/// CONNECT and requests without an object are allowed unchanged. In
/// validate mode, a change becomes a rejection listing every deviation.
pub fn evaluate(request: &AdmissionRequest, settings: &Settings, lookup: &dyn Lookup) -> Outcome {
    let route = route(&request.kind, &request.operation);
    evaluate_routed(request, route, settings, lookup)
}

/// [`evaluate`] for a request whose [`route`] the caller has already taken:
/// [`crate::wire`] takes it before decoding the object, to decode only what
/// that route reads.
pub(crate) fn evaluate_routed(
    request: &AdmissionRequest,
    route: Route,
    settings: &Settings,
    lookup: &dyn Lookup,
) -> Outcome {
    decide(request, route, settings, lookup, false).0
}

/// [`evaluate`], plus why each label, annotation and tag did or did not
/// flow. Same decision, same outcome: the stages return what they decided
/// (`evaluate/decision_trace.rs`), and the explanation renders it; it costs only here.
pub fn explain(
    request: &AdmissionRequest,
    settings: &Settings,
    lookup: &dyn Lookup,
) -> (Outcome, Explanation) {
    let route = route(&request.kind, &request.operation);
    let (outcome, trace) = decide(request, route, settings, lookup, true);
    let explanation = trace.render(request, &outcome);
    (outcome, explanation)
}

/// The decision, and when `traced` asks for it, its trace.
fn decide<'r>(
    request: &'r AdmissionRequest,
    route: Route,
    settings: &'r Settings,
    lookup: &dyn Lookup,
    traced: bool,
) -> (Outcome, Trace<'r>) {
    let mut trace = Trace::new(traced);
    if route == Route::NotActedOn || !request.object.is_object() {
        trace.not_acted_on = traced;
        return (not_acted_on(&request.kind, &request.operation), trace);
    }
    let outcome = decide_write(request, route, settings, lookup, &mut trace);
    let (outcome, refuses) = match outcome {
        Ok((outcome, refuses)) => (outcome, refuses),
        Err(error) => (error.into_outcome(), true),
    };
    (
        deviations::enforce(outcome, settings.mode(), refuses),
        trace,
    )
}

/// The decision on a write the policy acts on, over one plan, through each
/// stage's door: each names what it reads ([`needs`]), everything is read
/// once ([`read_all`]), then the CAPI stage plans the parents' metadata and
/// in-place fields, and the tags stage the object's cloud tags over the
/// metadata as planned. Each stage's record goes into `trace` as it
/// returns, so a later stage's rejection keeps what came before. With the
/// outcome, whether validate mode refuses its deviations.
fn decide_write<'r>(
    request: &'r AdmissionRequest,
    route: Route,
    settings: &'r Settings,
    lookup: &dyn Lookup,
    trace: &mut Trace<'r>,
) -> Result<(Outcome, bool), Error> {
    let (mut capi_needs, mut tag_needs) = needs(request, route, settings)?;
    let mut reads = read_all(lookup, &mut capi_needs, &mut tag_needs);
    let mut plan = Plan::default();
    let mut capi = Reported::default();
    if let Some(needs) = capi_needs {
        let report = capi::decide(
            request,
            needs,
            &settings.capi,
            &mut reads,
            &mut plan,
            trace.wanted,
        );
        trace.capi = report.trace;
        capi = report.reported?;
    }
    let mut tags = Reported::default();
    if let Some(needs) = tag_needs {
        let report = tags::decide(
            request,
            needs,
            &settings.tags,
            &mut reads,
            &mut plan,
            trace.wanted,
        );
        trace.tags = report.trace;
        tags = report.reported?;
    }
    let mut warnings = tags.warnings;
    warnings.append(&mut capi.warnings);
    let outcome = Outcome {
        warnings,
        audit_annotations: capi.audit_annotations,
        ..Outcome::with_plan(plan)
    };
    Ok((outcome, !(capi.deviation_warns || tags.deviation_warns)))
}

/// What each stage reads, named before any look-up, after what it reads
/// of the object itself (an object at fault is refused before a look-up):
/// the CAPI rules' for an object routed to them, the tags' for an object
/// a row of the tag table covers (or routed to the tags).
fn needs<'r>(
    request: &'r AdmissionRequest,
    route: Route,
    settings: &Settings,
) -> Result<(Option<capi::Located<'r>>, Option<tags::TagNeeds<'r>>), Error> {
    let capi = (route == Route::Capi).then(|| capi::needs(request, &settings.capi));
    let capi = capi.transpose()?;
    Ok((capi, tags::needs(request, &settings.tags)?))
}

/// Makes the look-ups [`evaluate`] makes for `request` (its parents, the
/// Cluster its tags start from, a managed resource's composite resource),
/// through the same `needs` and `read_all`,
/// with the same field masks, deciding nothing (an object `needs` refuses
/// is looked up for nothing, as by the policy). The look-up floor (the
/// `floor` feature) runs only this, so the policy over that floor is what
/// the policy itself costs beyond the look-ups it must make (BENCHMARKS.md).
/// A missing or unreadable object is not an error here.
#[cfg(feature = "floor")]
pub(crate) fn look_up(
    request: &AdmissionRequest,
    settings: &Settings,
    lookup: &dyn Lookup,
) -> Result<(), Error> {
    let route = route(&request.kind, &request.operation);
    if route == Route::NotActedOn {
        return Ok(());
    }
    let (mut capi, mut tags) = needs(request, route, settings)?;
    read_all(lookup, &mut capi, &mut tags);
    Ok(())
}
