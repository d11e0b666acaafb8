//! What of a request's object the policy decodes on each route: the rest
//! passes through as text.

use super::route::Route;
use crate::projection::Projection;
use crate::request::GroupVersionKind;
use crate::settings::Settings;
use crate::tags;
use crate::tags::DEFAULT_PROVIDER_SEGMENTS;
use crate::{capi, fields};

/// What every route reads of an object's metadata. `managedFields`, the
/// largest part of it, is not among them.
const METADATA: [&[&str]; 5] = [
    &["metadata", "name"],
    &["metadata", "namespace"],
    fields::LABELS,
    fields::ANNOTATIONS,
    &["metadata", "ownerReferences"],
];

/// The parts of a request's object the policy reads and writes on `route`:
/// decoded by [`crate::wire`], while the rest (`status`, `managedFields`, spec
/// subtrees no rule reads) passes through as text (`Projection::split`).
/// Of a composite resource, only what its tags are computed from and
/// written to: its labels and annotations, the tag field and the provider
/// path (a setting, so the projection borrows from the settings); its name,
/// `apiVersion` and the rest of its `spec` pass through as text.
pub(crate) fn object_projection<'s>(
    kind: &GroupVersionKind,
    route: Route,
    settings: &'s Settings,
) -> Projection<'s> {
    let provider = match route {
        Route::CloudTags => settings.tags.provider_path(),
        _ => Vec::new(),
    };
    let managed = match route {
        Route::CloudTags => tags::managed_field(kind, &settings.tags),
        _ => None,
    };
    let mut projection =
        projection_with(kind, route, settings.tags.capi_infrastructure(), &provider);
    if let Some(field) = managed {
        let mut row = Projection::default();
        for path in tags::managed_row_reads(field) {
            row.keep(path);
        }
        projection.unite(&row);
    }
    projection
}

/// Whether `default_object_projection` keeps everything
/// [`object_projection`] keeps under `settings`, known from the settings
/// without building either: only `cloudTags.providerPath`, when it moves a
/// composite resource's provider, makes the settings' projection keep more
/// (`cloudTags.capiInfrastructure` off keeps less). A fresh instance
/// builds every projection again on every request, so [`crate::wire`]
/// builds the settings' one only when this says it might differ.
///
/// A managed resource's row, when `cloudTags.managedResources` makes one
/// for `kind`, is in the settings' projection only.
pub(crate) fn default_projection_covers(
    kind: &GroupVersionKind,
    route: Route,
    settings: &Settings,
) -> bool {
    route != Route::CloudTags
        || (settings.tags.provider_path_is_default()
            && tags::managed_field(kind, &settings.tags).is_none())
}

/// What [`crate::wire`] splits the object through while it reads the
/// payload, before the settings, which come after the request, are known:
/// [`object_projection`] under the default provider path and with the tag
/// field of a CAPI infrastructure kind (a small map, decoded for nothing
/// when `cloudTags.capiInfrastructure` is off). It covers the settings'
/// projection unless `cloudTags.providerPath` moves the provider.
pub(crate) fn default_object_projection(
    kind: &GroupVersionKind,
    route: Route,
) -> Projection<'static> {
    projection_with(kind, route, true, DEFAULT_PROVIDER_SEGMENTS)
}

fn projection_with<'s>(
    kind: &GroupVersionKind,
    route: Route,
    capi_infrastructure: bool,
    provider: &[&'s str],
) -> Projection<'s> {
    let paths: Vec<&[&'s str]> = match route {
        Route::NotActedOn => return Projection::default(),
        Route::Capi => {
            let mut paths = vec![&["apiVersion"][..], &["kind"]];
            paths.extend(METADATA);
            paths.extend(capi::child_paths(&kind.group, &kind.kind));
            paths
        }
        // Only what the tags read: the labels and the label-set annotation.
        Route::CloudTags => vec![fields::LABELS, fields::ANNOTATIONS],
    };
    let mut projection = Projection::of(&paths);
    for path in tags::object_paths(kind, capi_infrastructure, provider) {
        projection.keep(path);
    }
    projection
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
                let covers = default_object_projection(kind, route)
                    .covers(&object_projection(kind, route, &settings));
                if default_projection_covers(kind, route, &settings) {
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
