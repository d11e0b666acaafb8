//! What of a request's object the policy decodes: what its stages declare
//! they read ([`crate::stage::StageForKind::reads`]); the rest passes
//! through as text.

use super::route::Route;
use super::stage_list::{ForKind, stages};
use crate::json::projection::Projection;
use crate::request::GroupVersionKind;
use crate::settings::Settings;
use crate::stage::{Declared, Part};

/// What `stages` declare of `part`.
fn declared<'a>(stages: &'a [ForKind<'_>], part: Part) -> Declared<'a> {
    let mut declared = Declared::of(part);
    for stage in stages {
        stage.reads(&mut declared);
    }
    declared
}

/// The parts of a request's object its `stages` read and write: decoded by
/// [`crate::wire`], while the rest (`status`, `managedFields`, spec
/// subtrees no stage reads) passes through as text (`Projection::split`).
pub(crate) fn object_projection<'a>(stages: &'a [ForKind<'_>]) -> Projection<'a> {
    declared(stages, Part::Object).into_projection()
}

/// The parts of an UPDATE's old object its `stages` read (a composite
/// resource's provider, a managed resource's tag field), or `None` when
/// they read none.
pub(crate) fn old_object_projection<'a>(stages: &'a [ForKind<'_>]) -> Option<Projection<'a>> {
    let projection = declared(stages, Part::OldObject).into_projection();
    (!projection.is_empty()).then_some(projection)
}

/// Whether what the wire split the object through before the settings
/// ([`with_projection_before_settings`]) keeps everything
/// [`object_projection`] keeps for `stages`: no stage declares a path only
/// the settings name. Known without building either projection: a fresh
/// instance builds every projection again on every request, so
/// [`crate::wire`] builds the stages' one only when this says it might
/// differ.
pub(crate) fn default_projection_covers(stages: &[ForKind<'_>]) -> bool {
    !declared(stages, Part::BySettings).by_settings()
}

/// Calls `split` with what [`crate::wire`] splits the object through while
/// it reads the payload, before the settings, which come after the
/// request, are known: what the stages for `kind` on `route` declare under
/// the settings the wire assumes then ([`Settings::before_read`]). `None`
/// when the route does not act, and when a stage declares paths only the
/// settings name: the object is then kept as text, to be split once,
/// through the settings' projection.
pub(crate) fn with_projection_before_settings<R>(
    kind: &GroupVersionKind,
    route: Route,
    split: impl FnOnce(Option<&Projection<'_>>) -> R,
) -> R {
    if route == Route::NotActedOn {
        return split(None);
    }
    let settings = Settings::before_read();
    let stages = stages(kind, route, &settings);
    // Asked first, without building a projection: where a stage declares
    // paths only the settings name (a managed resource's kind), the one
    // the stages would declare now is never used.
    match default_projection_covers(&stages) {
        false => split(None),
        true => split(Some(&object_projection(&stages))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::route;

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
                let covers = with_projection_before_settings(kind, route, |before| {
                    before.is_some_and(|before| before.covers(&object_projection(&stages)))
                });
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
