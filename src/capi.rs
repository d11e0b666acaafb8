//! Cluster API metadata propagation (issue 3; in progress).

use crate::lookup::Lookup;
use crate::outcome::Outcome;
use crate::request::AdmissionRequest;
use crate::settings::Settings;

/// API groups whose kinds follow the CAPI propagation contract.
pub const CAPI_GROUPS: [&str; 4] = [
    "cluster.x-k8s.io",
    "controlplane.cluster.x-k8s.io",
    "bootstrap.cluster.x-k8s.io",
    "infrastructure.cluster.x-k8s.io",
];

/// True for the Cluster API groups.
pub fn is_capi_group(group: &str) -> bool {
    CAPI_GROUPS.contains(&group)
}

/// Decides one Cluster API object.
pub fn evaluate(
    _request: &AdmissionRequest,
    _settings: &Settings,
    _lookup: &dyn Lookup,
) -> Outcome {
    Outcome::allow()
}
