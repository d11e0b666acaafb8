//! What of a request's object the policy decodes: what its stages declare
//! they read ([`crate::stage::StageForKind`]); the rest passes through as
//! text.

use super::route::Route;
use super::stage_list::ForKind;
use crate::json::projection::Projection;
use crate::request::GroupVersionKind;
use crate::{capi, tags};

/// The parts of a request's object its `stages` read and write: decoded by
/// [`crate::wire`], while the rest (`status`, `managedFields`, spec
/// subtrees no stage reads) passes through as text (`Projection::split`).
pub(crate) fn object_projection<'a>(stages: &'a [ForKind<'_>]) -> Projection<'a> {
    let mut projection = Projection::default();
    for stage in stages {
        stage.object_paths(&mut projection);
    }
    projection
}

/// The parts of an UPDATE's old object its `stages` read (a composite
/// resource's provider, a managed resource's tag field), or `None` when
/// they read none.
pub(crate) fn old_object_projection<'a>(stages: &'a [ForKind<'_>]) -> Option<Projection<'a>> {
    let mut projection = Projection::default();
    for stage in stages {
        stage.old_object_paths(&mut projection);
    }
    (!projection.is_empty()).then_some(projection)
}

/// Whether [`default_object_projection`] keeps everything
/// [`object_projection`] keeps for `stages`, known from the stages without
/// building either: a fresh instance builds every projection again on
/// every request, so [`crate::wire`] builds the stages' one only when this
/// says it might differ.
pub(crate) fn default_projection_covers(stages: &[ForKind<'_>]) -> bool {
    stages.iter().all(|stage| stage.covered_by_default())
}

/// What [`crate::wire`] splits the object through while it reads the
/// payload, before the settings, which come after the request, are known:
/// what the stages of `route` read of an object of `kind` under the
/// default settings, with the tag field of a CAPI infrastructure kind (a
/// small map, decoded for nothing when `cloudTags.capiInfrastructure` is
/// off). It covers the settings' projection unless
/// `cloudTags.providerPath` moves the provider. `None` when the route does
/// not act, and for a kind the settings may make a managed-resource row
/// for, whose tag field only they name: its object is kept as text, to be
/// split once, through the settings' projection.
pub(crate) fn default_object_projection(
    kind: &GroupVersionKind,
    route: Route,
) -> Option<Projection<'static>> {
    let mut projection = Projection::default();
    match route {
        Route::NotActedOn => return None,
        Route::Capi(child) => capi::object_paths(&child, &mut projection),
        Route::CloudTags => {}
    }
    tags::tag_stage::default_object_paths(kind, &mut projection).then_some(projection)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::route;
    use crate::settings::Settings;

    fn kind(group: &str, version: &str, kind: &str) -> GroupVersionKind {
        GroupVersionKind {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
        }
    }

    /// The shortcut wire takes instead of building the settings'
    /// projection says "covered" only where the projections say so too,
    /// and a moved provider path is the one setting that makes it build.
    #[test]
    fn default_projection_covers_agrees_with_the_projections() {
        let kinds = [
            kind("platform.example.org", "v1alpha1", "XNetwork"),
            kind("cluster.x-k8s.io", "v1beta2", "MachineSet"),
            kind("infrastructure.cluster.x-k8s.io", "v1beta2", "AWSCluster"),
            kind(
                "infrastructure.cluster.x-k8s.io",
                "v1beta1",
                "OpenStackMachine",
            ),
            kind("", "v1", "ConfigMap"),
        ];
        let documents = [
            "{}",
            r#"{"cloudTags":{"capiInfrastructure":true,"propagatingLabels":["team"]}}"#,
            r#"{"cloudTags":{"providerPath":"spec.parameters.provider"}}"#,
            r#"{"cloudTags":{"providerPath":"spec.forProvider.cloud"}}"#,
            r#"{"cloudTags":{"providerPath":"spec.forProvider.cloud","capiInfrastructure":true}}"#,
        ];
        let mut built = 0;
        for document in documents {
            let settings = Settings::parse(document.as_bytes()).unwrap();
            for kind in &kinds {
                let route = route(kind, "CREATE");
                let stages = crate::evaluate::stages(kind, route, &settings);
                if route == Route::NotActedOn {
                    assert!(stages.is_empty(), "{kind:?}");
                    continue;
                }
                let covers = default_object_projection(kind, route)
                    .is_some_and(|default| default.covers(&object_projection(&stages)));
                if default_projection_covers(&stages) {
                    assert!(covers, "{document} {kind:?}");
                } else {
                    assert_eq!(route, Route::CloudTags, "{document} {kind:?}");
                    assert!(!covers, "{document} {kind:?}");
                    built += 1;
                }
            }
        }
        assert_eq!(built, 2, "the two moved provider paths, on the XR");
    }
}
