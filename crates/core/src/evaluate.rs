//! Dispatch: which capability handles a request.

mod decision_trace;
mod object_projection;
mod route;

pub(crate) use object_projection::default_object_projection;
pub use object_projection::{default_projection_covers, object_projection};
pub use route::{Route, acts_on, not_acted_on, route};
#[cfg(feature = "invariants")]
pub(crate) use route::{is_kubernetes_group, is_sig_group};

use crate::error::Error;
use crate::explain::Explanation;
use crate::lookup::{Lookup, ObjectRef};
use crate::outcome::Outcome;
use crate::plan::Plan;
use crate::reads::Reads;
use crate::request::AdmissionRequest;
use crate::settings::Settings;
use crate::tags::targets::Target;
use crate::{capi, deviations, tags};
use decision_trace::{Passed, Trace};

/// Decides one admission request. Pure apart from `lookup`.
///
/// Cluster API groups go to the CAPI propagation rules; Kubernetes' own
/// kinds are allowed unchanged with a warning naming the kind; every other
/// kind is tagged when it has a Crossplane composite resource's shape, and
/// allowed unchanged with a warning naming the kind otherwise. DELETE, CONNECT and requests without an object are allowed
/// unchanged. In validate mode, a change becomes a rejection listing every
/// deviation.
pub fn evaluate(request: &AdmissionRequest, settings: &Settings, lookup: &dyn Lookup) -> Outcome {
    let route = route(&request.kind, &request.operation);
    evaluate_routed(request, route, settings, lookup)
}

/// [`evaluate`] for a request whose [`route`] the caller has already taken:
/// [`crate::wire`] takes it before decoding the object, to decode only what
/// that route reads.
pub fn evaluate_routed(
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
    let mut trace = Trace {
        wanted: traced,
        ..Trace::default()
    };
    if route == Route::NotActedOn || !request.object.is_object() {
        trace.passed = traced.then_some(Passed::NotActedOn);
        return (not_acted_on(&request.kind, &request.operation), trace);
    }
    let target = tags::row_for(request, settings);
    if route == Route::CloudTags && target.is_none() {
        trace.passed = traced.then_some(Passed::NotAComposite);
        let warning = tags::composite::not_a_composite_resource(&request.kind);
        let outcome = Outcome {
            warnings: vec![warning],
            ..Outcome::allow()
        };
        return (outcome, trace);
    }
    let outcome = decide_write(request, route, target, settings, lookup, &mut trace)
        .unwrap_or_else(Error::into_outcome);
    (deviations::enforce(outcome, settings.mode), trace)
}

/// The decision on a write the policy acts on, over one plan: what it
/// reads is named ([`resolve`]) and read ([`read`]) first, then the CAPI
/// metadata and in-place fields its parents give it, then the cloud tags
/// its row of the tag table gives it, over the metadata as the plan leaves
/// it. What the decision reads of the object itself is checked before any
/// look-up is spent. Each stage returns its trace when `trace` wants one; it
/// goes into `trace` as soon as the stage returns, so a later stage's
/// rejection keeps what came before.
fn decide_write<'r>(
    request: &'r AdmissionRequest,
    route: Route,
    target: Option<&'static Target>,
    settings: &'r Settings,
    lookup: &dyn Lookup,
    trace: &mut Trace<'r>,
) -> Result<Outcome, Error> {
    let traced = trace.wanted;
    let namespace = match route {
        Route::Capi => Some(capi::check(request)?),
        _ => None,
    };
    let mut target = target;
    let field = match target {
        Some(row) => match tags::read_field(row, request) {
            Ok(field) => field,
            // Whatever its tag field holds, an adopted object is left as
            // submitted (on the usual path, `tags::stamp` says so).
            Err(_) if tags::left_as_submitted(row, request)? => {
                trace.tags = traced.then_some(tags::Trace::Adopted);
                target = None;
                None
            }
            Err(error) => return Err(error),
        },
        None => None,
    };
    let mut needs = resolve(request, namespace, target, settings)?;
    let mut reads = read(lookup, &mut needs);
    let mut plan = Plan::default();
    let mut reported = match needs.located {
        Some(located) => {
            let (reported, capi_trace) =
                capi::propagate(request, located, settings, &mut reads, &mut plan, traced);
            trace.capi = capi_trace;
            reported?
        }
        None => capi::Reported::default(),
    };
    let mut warnings = match target {
        Some(target) => {
            let tagging = tags::Tagging {
                target,
                field,
                cluster: needs.cluster,
            };
            let (warnings, tags_trace) =
                tags::stamp(tagging, request, settings, &mut reads, &mut plan, traced)?;
            trace.tags = tags_trace;
            warnings
        }
        None => Vec::new(),
    };
    warnings.append(&mut reported.warnings);
    Ok(Outcome {
        warnings,
        audit_annotations: reported.audit_annotations,
        ..Outcome::with_plan(plan)
    })
}

/// What a request reads of the cluster, named before the first look-up.
struct Needs<'r> {
    /// Where the CAPI rule's parent is (a Cluster API object only).
    located: Option<capi::Located<'r>>,
    /// The object's namespace (a Cluster API object only).
    namespace: &'r str,
    /// The Cluster the tags start from, at the version they read it.
    cluster: Option<ObjectRef>,
}

/// Names what `request` (in `namespace`, a Cluster API object; `None` for
/// a composite resource, which reads nothing from the cluster) reads: the
/// parent (or Cluster topology) the CAPI rule reads first, at the version
/// the rule reads it, and the Cluster the tags of `target` start from, at
/// an ownerReference's version, else `v1beta2`, the newest version CAPI
/// serves, which every Cluster CRD of CAPI v1.11 and later converts to.
fn resolve<'r>(
    request: &'r AdmissionRequest,
    namespace: Option<&'r str>,
    target: Option<&Target>,
    settings: &Settings,
) -> Result<Needs<'r>, Error> {
    let Some(namespace) = namespace else {
        return Ok(Needs {
            located: None,
            namespace: "",
            cluster: None,
        });
    };
    let located = capi::locate(request, namespace, settings.in_place_fields())?;
    let cluster = match target {
        Some(target) => tags::cluster_reference(target, request)?,
        None => None,
    };
    Ok(Needs {
        located: Some(located),
        namespace,
        cluster,
    })
}

/// Reads what `needs` names, each object once, through the union of the
/// masks of the readers that name it ([`Reads`]), in the order the stages
/// use them: the parent (or Cluster) the CAPI rule reads first, the
/// ClusterClass that Cluster names, then the Cluster the tags start from,
/// unless it was read with the first. Nothing after this calls the host.
fn read(lookup: &dyn Lookup, needs: &mut Needs<'_>) -> Reads {
    let mut reads = Reads::default();
    let cluster_projection = tags::cluster::projection();
    let tags_cluster = (needs.cluster.as_ref()).map(|cluster| (cluster, &cluster_projection));
    let first = needs.located.as_ref().and_then(capi::Located::first_read);
    let shared = first.zip(tags_cluster).is_some_and(|(a, b)| a.0 == b.0);
    let first: Vec<_> = [first, tags_cluster.filter(|_| shared)]
        .into_iter()
        .flatten()
        .collect();
    reads.read(lookup, &first);
    let namespace = needs.namespace;
    let class = (needs.located.as_mut()).and_then(|l| l.second_read(&reads, namespace));
    let second: Vec<_> = [class, tags_cluster.filter(|_| !shared)]
        .into_iter()
        .flatten()
        .collect();
    reads.read(lookup, &second);
    reads
}

/// Makes the look-ups [`evaluate`] makes for `request` (its parents, and
/// the Cluster its tags start from), through the same `resolve` and
/// `read`, with the same field masks, deciding nothing. The benchmark's
/// look-up floor (`crates/floor`) runs only this, so the policy over that
/// floor is what the policy itself costs beyond the look-ups it must make
/// (BENCHMARKS.md). A missing or unreadable object is not an error here.
pub fn look_up(
    request: &AdmissionRequest,
    settings: &Settings,
    lookup: &dyn Lookup,
) -> Result<(), Error> {
    if route(&request.kind, &request.operation) != Route::Capi {
        return Ok(());
    }
    let namespace = capi::check(request)?;
    let target = tags::row_for(request, settings);
    let mut needs = resolve(request, Some(namespace), target, settings)?;
    read(lookup, &mut needs);
    Ok(())
}
