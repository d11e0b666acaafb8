//! The decision on one request, top to bottom: route it, let each stage
//! name what it reads, read each object once, let each stage decide over
//! what was read, and in validate mode turn the plan into the deviations
//! it refuses.

mod decision_trace;
mod object_projection;
mod route;

pub(crate) use object_projection::default_object_projection;
pub(crate) use object_projection::{default_projection_covers, object_projection};
pub(crate) use route::{Route, not_acted_on, route};
#[cfg(feature = "invariants")]
pub(crate) use route::{is_kubernetes_group, is_sig_group};

use crate::error::Error;
use crate::explain::Explanation;
use crate::lookup::Lookup;
use crate::outcome::Outcome;
use crate::plan::Plan;
use crate::reads::Reads;
use crate::request::AdmissionRequest;
use crate::settings::Settings;
use crate::stage_report::Reported;
use crate::tags::covering_row::Covered;
use crate::tags::targets::Target;
use crate::{capi, deviations, tags};
use decision_trace::{Passed, Trace};

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
        trace.passed = traced.then_some(Passed::NotActedOn);
        return (not_acted_on(&request.kind, &request.operation), trace);
    }
    let target = match tags::row_for(request, &settings.tags) {
        Covered::Row(target) => Some(target),
        Covered::Untagged => {
            trace.passed = traced.then_some(Passed::Untagged);
            return (Outcome::allow(), trace);
        }
        Covered::Not if route == Route::CloudTags => {
            trace.passed = traced.then_some(Passed::NotAComposite);
            let warning = tags::composite::not_a_composite_resource(&request.kind);
            let outcome = Outcome {
                warnings: vec![warning],
                ..Outcome::allow()
            };
            return (outcome, trace);
        }
        Covered::Not => None,
    };
    let refuses = target.is_none_or(|target| target.deviation_refuses(&request.operation));
    let outcome = decide_write(request, route, target, settings, lookup, &mut trace)
        .unwrap_or_else(Error::into_outcome);
    (
        deviations::enforce(outcome, settings.mode(), refuses),
        trace,
    )
}

/// The decision on a write the policy acts on, over one plan: each stage
/// names what it reads ([`needs`]), everything is read ([`read`]), the
/// CAPI stage plans the parents' metadata and in-place fields, then the
/// tags stage the object's cloud tags over the metadata as planned. Each
/// stage's record goes into `trace` as it returns, so a later stage's
/// rejection keeps what came before.
fn decide_write<'r>(
    request: &'r AdmissionRequest,
    route: Route,
    target: Option<Target>,
    settings: &'r Settings,
    lookup: &dyn Lookup,
    trace: &mut Trace<'r>,
) -> Result<Outcome, Error> {
    let (mut capi_needs, tag_needs) = needs(request, route, target, settings)?;
    let mut reads = read(lookup, capi_needs.as_mut(), &tag_needs);
    let mut plan = Plan::default();
    let traced = trace.wanted;
    let (capi_section, tag_section) = (&settings.capi, &settings.tags);
    let mut capi = Reported::default();
    if let Some(needs) = capi_needs {
        let report = capi::propagate(request, needs, capi_section, &mut reads, &mut plan, traced);
        trace.capi = report.trace;
        capi = report.reported?;
    }
    let mut warnings = Vec::new();
    if let Some(needs) = tag_needs {
        let report = tags::stamp(needs, request, tag_section, &mut reads, &mut plan, traced);
        trace.tags = report.trace;
        warnings = report.reported?.warnings;
    }
    warnings.append(&mut capi.warnings);
    Ok(Outcome {
        warnings,
        audit_annotations: capi.audit_annotations,
        ..Outcome::with_plan(plan)
    })
}

/// What each stage reads, named before any look-up, after what it reads
/// of the object itself (an object at fault is refused before a look-up).
fn needs<'r>(
    request: &'r AdmissionRequest,
    route: Route,
    target: Option<Target>,
    settings: &Settings,
) -> Result<(Option<capi::Located<'r>>, Option<tags::TagNeeds<'r>>), Error> {
    let capi = (route == Route::Capi).then(|| capi::needs(request, &settings.capi));
    let tags = target.map(|target| tags::needs(target, request));
    Ok((capi.transpose()?, tags.transpose()?))
}

/// Reads what the stages need, each object once, through the union of the
/// masks of the readers that name it ([`Reads`]), in the order the stages
/// use them: the parent (or Cluster) the CAPI rule reads first, the
/// ClusterClass that Cluster names, then the Cluster the tags start from,
/// unless it was read with the first. Nothing after this calls the host.
fn read(
    lookup: &dyn Lookup,
    capi: Option<&mut capi::Located<'_>>,
    tags: &Option<tags::TagNeeds<'_>>,
) -> Reads {
    let mut reads = Reads::default();
    let cluster_projection = tags::cluster::projection();
    let tags_cluster = (tags.as_ref().and_then(tags::TagNeeds::source))
        .map(|cluster| (cluster, &cluster_projection));
    let first = capi.as_deref().and_then(capi::Located::first_read);
    let shared = first.zip(tags_cluster).is_some_and(|(a, b)| a.0 == b.0);
    let first: Vec<_> = [first, tags_cluster.filter(|_| shared)]
        .into_iter()
        .flatten()
        .collect();
    reads.read(lookup, &first);
    let class = capi.and_then(|l| l.second_read(&reads));
    let second: Vec<_> = [class, tags_cluster.filter(|_| !shared)]
        .into_iter()
        .flatten()
        .collect();
    reads.read(lookup, &second);
    reads
}

/// Makes the look-ups [`evaluate`] makes for `request` (its parents, the
/// Cluster its tags start from, a managed resource's composite resource),
/// through the same `needs` and `read`,
/// with the same field masks, deciding nothing (an object `needs` refuses
/// is looked up for nothing, as by the policy). The look-up floor (the
/// `floor` feature) runs only this, so the policy over that floor is what
/// the policy itself costs beyond the look-ups it must make (BENCHMARKS.md).
/// A missing or unreadable object is not an error here.
#[cfg(any(feature = "floor", test))]
pub(crate) fn look_up(
    request: &AdmissionRequest,
    settings: &Settings,
    lookup: &dyn Lookup,
) -> Result<(), Error> {
    let route = route(&request.kind, &request.operation);
    if route == Route::NotActedOn {
        return Ok(());
    }
    let target = match tags::row_for(request, &settings.tags) {
        Covered::Row(target) => Some(target),
        Covered::Untagged | Covered::Not => None,
    };
    let (mut capi, tags) = needs(request, route, target, settings)?;
    read(lookup, capi.as_mut(), &tags);
    Ok(())
}
