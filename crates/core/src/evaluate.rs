//! The decision on one request, top to bottom: route it, take the stages
//! as they stand for its kind, let each name what it reads, read each
//! object once, let each decide over what was read, and in validate mode
//! turn the plan into the deviations it refuses.

pub(crate) mod deviations;

mod decision_trace;
mod declared_lookups;
mod object_projection;
pub(crate) mod route;
mod stage_list;

pub use crate::stage::{DeclaredLookup, LookupGroup};
pub use declared_lookups::declared_lookups;
pub(crate) use object_projection::{
    default_projection_covers, object_projection, old_object_projection,
    with_projection_before_settings,
};
pub(crate) use route::{Route, not_acted_on, route};
pub(crate) use stage_list::{ForKind, Needing, stages};

use crate::error::Error;
use crate::explain::Explanation;
use crate::request::AdmissionRequest;
use crate::request::lookup::Lookup;
use crate::request::outcome::Outcome;
use crate::request::plan::Plan;
use crate::request::reads::Reads;
use crate::settings::Settings;
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
    let stages = stages(&request.kind, route, settings);
    evaluate_routed(request, route, &stages, settings, lookup)
}

/// [`evaluate`] for a request whose [`route`] and [`stages`] the caller
/// has already taken: [`crate::wire`] takes them before decoding the
/// object, to decode only what the stages read.
pub(crate) fn evaluate_routed<'r>(
    request: &'r AdmissionRequest,
    route: Route,
    stages: &[ForKind<'r>],
    settings: &Settings,
    lookup: &dyn Lookup,
) -> Outcome {
    decide(request, route, stages, settings, lookup, false).0
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
    let stages = stages(&request.kind, route, settings);
    let (outcome, trace) = decide(request, route, &stages, settings, lookup, true);
    let explanation = trace.render(request, &outcome);
    (outcome, explanation)
}

/// The decision, and when `traced` asks for it, its trace.
fn decide<'r>(
    request: &'r AdmissionRequest,
    route: Route,
    stages: &[ForKind<'r>],
    settings: &Settings,
    lookup: &dyn Lookup,
    traced: bool,
) -> (Outcome, Trace<'r>) {
    let mut trace = Trace::new(traced);
    if route == Route::NotActedOn || !request.object.is_object() {
        trace.not_acted_on = traced;
        return (not_acted_on(&request.kind, &request.operation), trace);
    }
    let outcome = decide_write(request, stages, lookup, &mut trace);
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
/// stage's door in turn: each names what it reads (its `needs`),
/// everything is read once ([`read_all`]), then each decides over what was
/// read and what the stages before it planned. Each stage's record goes
/// into `trace` as it returns, so a later stage's rejection keeps what came
/// before. With the outcome, whether validate mode refuses its deviations.
fn decide_write<'r>(
    request: &'r AdmissionRequest,
    stages: &[ForKind<'r>],
    lookup: &dyn Lookup,
    trace: &mut Trace<'r>,
) -> Result<(Outcome, bool), Error> {
    let mut needs = needs(request, stages)?;
    let mut reads = read_all(lookup, &mut needs);
    let mut plan = Plan::default();
    let mut reported = Vec::with_capacity(needs.len());
    for stage in needs {
        let at = stage.at();
        let report = stage.decide(request, &mut reads, &mut plan, trace.wanted);
        trace.stages.extend(report.trace.map(|record| (at, record)));
        reported.push(report.reported?);
    }
    // The last stage's warnings come first: the cloud tags' skips, then
    // the CAPI rules' warnings.
    let mut outcome = Outcome::with_plan(plan);
    let mut refuses = true;
    for reported in reported.into_iter().rev() {
        append(&mut outcome.warnings, reported.warnings);
        if outcome.audit_annotations.is_empty() {
            outcome.audit_annotations = reported.audit_annotations;
        } else {
            outcome.audit_annotations.extend(reported.audit_annotations);
        }
        refuses &= !reported.deviation_warns;
    }
    Ok((outcome, refuses))
}

/// `more` after what `list` holds, moved whole when `list` is empty.
fn append(list: &mut Vec<String>, mut more: Vec<String>) {
    if list.is_empty() {
        *list = more;
    } else {
        list.append(&mut more);
    }
}

/// What each stage reads, named before any look-up, after what it reads
/// of the object itself (an object at fault is refused before a look-up);
/// the stages that have something to do with the request.
fn needs<'r>(
    request: &'r AdmissionRequest,
    stages: &[ForKind<'r>],
) -> Result<Vec<Needing<'r>>, Error> {
    let mut needs = Vec::with_capacity(stages.len());
    for stage in stages {
        needs.extend(stage.needs(request)?);
    }
    Ok(needs)
}

/// Reads what the stages need, each object once: every stage's first
/// round, then every stage's second. Nothing after this calls the host.
fn read_all(lookup: &dyn Lookup, stages: &mut [Needing<'_>]) -> Reads {
    let mut reads = Reads::default();
    let first: Vec<_> = stages.iter().filter_map(|stage| stage.first()).collect();
    reads.read(lookup, &first);
    let then: Vec<_> = (stages.iter_mut())
        .filter_map(|stage| stage.then(&reads))
        .collect();
    reads.read(lookup, &then);
    reads
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
pub(crate) fn look_up<'r>(
    request: &'r AdmissionRequest,
    route: Route,
    stages: &[ForKind<'r>],
    lookup: &dyn Lookup,
) -> Result<(), Error> {
    if route == Route::NotActedOn {
        return Ok(());
    }
    read_all(lookup, &mut needs(request, stages)?);
    Ok(())
}
