//! Which part of the policy answers a request, decided from its kind and
//! operation alone, before the object is decoded.

use crate::capi;
use crate::request::outcome::Outcome;
use crate::request::{AdmissionRequest, GroupVersionKind, is_write};

/// Which part of the policy answers a request; decided from the kind and
/// the operation alone, before the object is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Route {
    /// Not acted on: answered by [`not_acted_on`] without reading the
    /// object, the settings or the cluster (also a request with no kind or
    /// operation).
    #[default]
    NotActedOn,
    /// A Cluster API kind the propagation rules or the Node-sync checks
    /// cover, with the rules and checks that apply to it, found once.
    Capi(capi::ChildKind),
    /// Any kind outside the Cluster API and Kubernetes groups: tagged when
    /// the object has a composite resource's shape
    /// (`tags::composite::is_composite_resource`).
    CloudTags,
}

impl Route {
    /// The rules and checks of a kind routed to the CAPI rules.
    pub(crate) fn capi(self) -> Option<capi::ChildKind> {
        match self {
            Route::Capi(child) => Some(child),
            Route::NotActedOn | Route::CloudTags => None,
        }
    }
}

/// The one place that decides whether, and how, the policy acts on a
/// request: CREATE and UPDATE of a Cluster API kind it propagates to or
/// checks, or of a composite resource. Asked once per request: by
/// [`crate::wire`] before it decodes the object (and handed to
/// `evaluate_routed`), by [`super::evaluate`] and [`super::explain`] otherwise.
pub(crate) fn route(kind: &GroupVersionKind, operation: &str) -> Route {
    if !is_write(operation) || is_kubernetes_group(&kind.group) || is_sig_group(&kind.group) {
        Route::NotActedOn
    } else if !capi::is_capi_group(&kind.group) {
        Route::CloudTags
    } else {
        capi::ChildKind::of(&kind.group, &kind.kind).map_or(Route::NotActedOn, Route::Capi)
    }
}

impl AdmissionRequest {
    /// Whether the policy acts on this request at all, by its kind and
    /// operation: any other request is allowed unchanged.
    pub fn acted_on(&self) -> bool {
        route(&self.kind, &self.operation) != Route::NotActedOn
    }
}

/// The answer to a request the policy does not act on: allowed unchanged,
/// with a warning when a write of a Kubernetes kind reached the policy (its
/// rules select a kind it cannot handle; a composite-resource treatment
/// would give such an object a `spec.cloudTags` it does not have).
pub(crate) fn not_acted_on(kind: &GroupVersionKind, operation: &str) -> Outcome {
    let mut outcome = Outcome::allow();
    let what = if is_kubernetes_group(&kind.group) {
        "a Kubernetes kind"
    } else if is_sig_group(&kind.group) {
        "a Kubernetes SIG kind (an x-k8s.io group) the policy does not handle"
    } else {
        return outcome;
    };
    if is_write(operation) {
        let api_version = if kind.group.is_empty() {
            kind.version.clone()
        } else {
            format!("{}/{}", kind.group, kind.version)
        };
        outcome.warnings.push(format!(
            "{} ({api_version}) is {what}, neither a Cluster API object nor a Crossplane \
             composite resource, so this policy leaves it unchanged; remove it from the policy's \
             rules",
            kind.kind
        ));
    }
    outcome
}

/// The groups of Kubernetes SIG projects (`x-k8s.io`) other than Cluster
/// API's four: `addons.`, `ipam.`, `runtime.cluster.x-k8s.io`, the Gateway
/// API's and the rest. Reserved to those projects, so never a composite
/// resource, and not kinds the propagation rules cover.
pub(crate) fn is_sig_group(group: &str) -> bool {
    (group == "x-k8s.io" || group.ends_with(".x-k8s.io")) && !capi::is_capi_group(group)
}

/// Kubernetes' own API groups: the core group, the unsuffixed built-in
/// groups, and every `k8s.io` group (reserved to the Kubernetes project, so
/// never a Crossplane composite resource).
pub(crate) fn is_kubernetes_group(group: &str) -> bool {
    matches!(
        group,
        "" | "apps" | "batch" | "autoscaling" | "policy" | "extensions" | "k8s.io"
    ) || group.ends_with(".k8s.io")
}
