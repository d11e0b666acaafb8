//! Dispatch: which capability handles a request.

use crate::explain::Explanation;
use crate::lookup::Lookup;
use crate::outcome::Outcome;
use crate::request::AdmissionRequest;
use crate::settings::Settings;
use crate::{capi, deviations, tags};
use kubewarden_policy_sdk::request::GroupVersionKind;

/// Decides one admission request. Pure apart from `lookup`.
///
/// Cluster API groups go to the CAPI propagation rules; every other kind the
/// policy is bound to is treated as a Crossplane composite resource. DELETE,
/// CONNECT and requests without an object are allowed unchanged. In
/// validate mode, a change becomes a rejection listing every deviation.
pub fn evaluate(request: &AdmissionRequest, settings: &Settings, lookup: &dyn Lookup) -> Outcome {
    decide(request, settings, lookup, None)
}

/// [`evaluate`], plus why each label, annotation and tag did or did not
/// flow. Same functions, same outcome; the explanation costs only here.
pub fn explain(
    request: &AdmissionRequest,
    settings: &Settings,
    lookup: &dyn Lookup,
) -> (Outcome, Explanation) {
    let mut explanation = Explanation::default();
    let outcome = decide(request, settings, lookup, Some(&mut explanation));
    (outcome, explanation)
}

/// Whether the policy acts on a request of this kind and operation at all:
/// CREATE and UPDATE of a Cluster API kind it propagates to or checks, or of
/// any other kind (a composite resource). For everything else it allows the
/// request unchanged without reading the object, the settings or the
/// cluster, so the edge need not even decode the object.
pub fn acts_on(kind: &GroupVersionKind, operation: &str) -> bool {
    matches!(operation, "CREATE" | "UPDATE")
        && (!capi::is_capi_group(&kind.group) || capi::acts_on(&kind.group, &kind.kind))
}

fn decide(
    request: &AdmissionRequest,
    settings: &Settings,
    lookup: &dyn Lookup,
    mut explain: Option<&mut Explanation>,
) -> Outcome {
    if !request.is_write() || !request.object.is_object() {
        if let Some(explain) = explain.as_deref_mut() {
            explain.notes.push(format!(
                "{} requests are allowed unchanged",
                request.operation
            ));
        }
        return Outcome::allow();
    }
    let outcome = if capi::is_capi_group(&request.kind.group) {
        capi::evaluate(request, settings, lookup, explain)
    } else {
        tags::evaluate(&request.object, settings, explain)
    };
    deviations::enforce(outcome, &request.object, settings.mode)
}
