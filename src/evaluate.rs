//! Dispatch: which capability handles a request.

use crate::lookup::Lookup;
use crate::outcome::Outcome;
use crate::request::AdmissionRequest;
use crate::settings::Settings;
use crate::{capi, deviations, tags};

/// Decides one admission request. Pure apart from `lookup`.
///
/// Cluster API groups go to the CAPI propagation rules; every other kind the
/// policy is bound to is treated as a Crossplane composite resource. DELETE,
/// CONNECT and requests without an object are allowed unchanged. In
/// validate mode, a change becomes a rejection listing every deviation.
pub fn evaluate(request: &AdmissionRequest, settings: &Settings, lookup: &dyn Lookup) -> Outcome {
    if !request.is_write() || !request.object.is_object() {
        return Outcome::allow();
    }
    let outcome = if capi::is_capi_group(&request.kind.group) {
        capi::evaluate(request, settings, lookup)
    } else {
        tags::evaluate(&request.object, settings)
    };
    deviations::enforce(outcome, &request.object, settings.mode)
}
