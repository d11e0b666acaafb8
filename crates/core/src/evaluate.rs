//! Dispatch: which capability handles a request.

use crate::error::Error;
use crate::explain::Explanation;
use crate::lookup::{Lookup, ObjectRef};
use crate::outcome::Outcome;
use crate::plan::Plan;
use crate::projection::Projection;
use crate::reads::Reads;
use crate::request::{AdmissionRequest, GroupVersionKind, is_write};
use crate::settings::{DEFAULT_PROVIDER_SEGMENTS, Settings};
use crate::tags::targets::{self, ProfileChoice, Target};
use crate::{capi, deviations, fields, tags};

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
    decide(request, route, settings, lookup, None)
}

/// [`evaluate`], plus why each label, annotation and tag did or did not
/// flow. Same functions, same outcome; the explanation costs only here.
pub fn explain(
    request: &AdmissionRequest,
    settings: &Settings,
    lookup: &dyn Lookup,
) -> (Outcome, Explanation) {
    let mut explanation = Explanation::default();
    let route = route(&request.kind, &request.operation);
    let outcome = decide(request, route, settings, lookup, Some(&mut explanation));
    (outcome, explanation)
}

/// Which part of the policy answers a request; decided from the kind and
/// the operation alone, before the object is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Route {
    /// Not acted on: answered by [`not_acted_on`] without reading the
    /// object, the settings or the cluster (also a request with no kind or
    /// operation).
    #[default]
    NotActedOn,
    /// A Cluster API kind the propagation rules or the Node-sync checks cover.
    Capi,
    /// Any kind outside the Cluster API and Kubernetes groups: tagged when
    /// the object has a composite resource's shape
    /// ([`tags::composite::is_composite_resource`]).
    CloudTags,
}

/// The one place that decides whether, and how, the policy acts on a
/// request: CREATE and UPDATE of a Cluster API kind it propagates to or
/// checks, or of a composite resource. Asked once per request: by
/// [`crate::wire`] before it decodes the object (and handed to
/// [`evaluate_routed`]), by [`evaluate`] and [`explain`] otherwise.
pub fn route(kind: &GroupVersionKind, operation: &str) -> Route {
    if !is_write(operation) || is_kubernetes_group(&kind.group) || is_sig_group(&kind.group) {
        Route::NotActedOn
    } else if !capi::is_capi_group(&kind.group) {
        Route::CloudTags
    } else if capi::acts_on(&kind.group, &kind.kind) {
        Route::Capi
    } else {
        Route::NotActedOn
    }
}

/// Whether the policy acts on a request of this kind and operation at all
/// ([`route`] is not [`Route::NotActedOn`]).
pub fn acts_on(kind: &GroupVersionKind, operation: &str) -> bool {
    route(kind, operation) != Route::NotActedOn
}

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
/// subtrees no rule reads) passes through as text ([`Projection::split`]).
/// Of a composite resource, only what its tags are computed from and
/// written to: its labels and annotations, the tag field and the provider
/// path (a setting, so the projection borrows from the settings); its name,
/// `apiVersion` and the rest of its `spec` pass through as text.
pub fn object_projection<'s>(
    kind: &GroupVersionKind,
    route: Route,
    settings: &'s Settings,
) -> Projection<'s> {
    let provider = match route {
        Route::CloudTags => settings.provider_path(),
        _ => Vec::new(),
    };
    projection_with(kind, route, settings.capi_infrastructure(), &provider)
}

/// Whether [`default_object_projection`] keeps everything
/// [`object_projection`] keeps under `settings`, known from the settings
/// without building either: only `cloudTags.providerPath`, when it moves a
/// composite resource's provider, makes the settings' projection keep more
/// (`cloudTags.capiInfrastructure` off keeps less). A fresh instance
/// builds every projection again on every request, so [`crate::wire`]
/// builds the settings' one only when this says it might differ.
pub fn default_projection_covers(route: Route, settings: &Settings) -> bool {
    route != Route::CloudTags || settings.provider_path_is_default()
}

/// What [`crate::wire`] splits the object through while it reads the
/// payload, before the settings, which come after the request, are known:
/// [`object_projection`] under the default provider path and with the tag
/// field of a CAPI infrastructure kind (a small map, decoded for nothing
/// when `cloudTags.capiInfrastructure` is off). It covers the settings'
/// projection unless `cloudTags.providerPath` moves the provider.
pub fn default_object_projection(kind: &GroupVersionKind, route: Route) -> Projection<'static> {
    projection_with(kind, route, true, DEFAULT_PROVIDER_SEGMENTS)
}

fn projection_with<'s>(
    kind: &GroupVersionKind,
    route: Route,
    capi_infrastructure: bool,
    provider: &[&'s str],
) -> Projection<'s> {
    let mut paths: Vec<&[&'s str]> = match route {
        Route::NotActedOn => return Projection::default(),
        Route::Capi => {
            let mut paths = vec![&["apiVersion"][..], &["kind"]];
            paths.extend(METADATA);
            paths.extend(capi::child_paths(&kind.group, &kind.kind));
            paths
        }
        // Only what the tags read: the labels and the label-set annotation.
        Route::CloudTags => vec![tags::LABELS, tags::ANNOTATIONS],
    };
    // What every row that may cover the kind reads: its tag field, what
    // tells its objects apart, and the provider where it picks the profile.
    for row in targets::rows_for_kind(kind, capi_infrastructure) {
        for path in row.reads() {
            paths.push(path);
        }
        if row.profile == ProfileChoice::Provider {
            paths.push(provider);
        }
    }
    Projection::of(&paths)
}

/// The answer to a request the policy does not act on: allowed unchanged,
/// with a warning when a write of a Kubernetes kind reached the policy (its
/// rules select a kind it cannot handle; a composite-resource treatment
/// would give such an object a `spec.cloudTags` it does not have).
pub fn not_acted_on(kind: &GroupVersionKind, operation: &str) -> Outcome {
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
pub fn is_sig_group(group: &str) -> bool {
    (group == "x-k8s.io" || group.ends_with(".x-k8s.io")) && !capi::is_capi_group(group)
}

/// Kubernetes' own API groups: the core group, the unsuffixed built-in
/// groups, and every `k8s.io` group (reserved to the Kubernetes project, so
/// never a Crossplane composite resource).
pub fn is_kubernetes_group(group: &str) -> bool {
    matches!(
        group,
        "" | "apps" | "batch" | "autoscaling" | "policy" | "extensions" | "k8s.io"
    ) || group.ends_with(".k8s.io")
}

fn decide(
    request: &AdmissionRequest,
    route: Route,
    settings: &Settings,
    lookup: &dyn Lookup,
    mut explain: Option<&mut Explanation>,
) -> Outcome {
    if route == Route::NotActedOn || !request.object.is_object() {
        let outcome = not_acted_on(&request.kind, &request.operation);
        if let Some(explain) = explain.as_deref_mut() {
            if !request.is_write() {
                explain.notes.push(format!(
                    "{} requests are allowed unchanged",
                    request.operation
                ));
            } else if outcome.warnings.is_empty() {
                explain.notes.push(format!(
                    "no propagation rule applies to a {}: allowed unchanged",
                    request.kind.kind
                ));
            }
            explain.notes.extend(outcome.warnings.iter().cloned());
        }
        return outcome;
    }
    let target = tags::row_for(request, settings);
    if route == Route::CloudTags && target.is_none() {
        let warning = tags::composite::not_a_composite_resource(&request.kind);
        if let Some(explain) = explain {
            explain.notes.push(warning.clone());
        }
        return Outcome {
            warnings: vec![warning],
            ..Outcome::allow()
        };
    }
    let outcome = decide_write(request, route, target, settings, lookup, explain)
        .unwrap_or_else(Error::into_outcome);
    deviations::enforce(outcome, settings.mode)
}

/// The decision on a write the policy acts on, over one plan: what it
/// reads is named ([`resolve`]) and read ([`read`]) first, then the CAPI
/// metadata and in-place fields its parents give it, then the cloud tags
/// its row of the tag table gives it, over the metadata as the plan leaves
/// it. What the decision reads of the object itself is checked before any
/// look-up is spent.
fn decide_write(
    request: &AdmissionRequest,
    route: Route,
    target: Option<&'static Target>,
    settings: &Settings,
    lookup: &dyn Lookup,
    mut explain: Option<&mut Explanation>,
) -> Result<Outcome, Error> {
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
                tags::note_adopted(explain.as_deref_mut());
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
        Some(located) => capi::propagate(
            request,
            located,
            settings,
            &mut reads,
            &mut plan,
            explain.as_deref_mut(),
        )?,
        None => capi::Reported::default(),
    };
    let mut warnings = match target {
        Some(target) => tags::stamp(
            target,
            request,
            field,
            needs.cluster,
            settings,
            &mut reads,
            &mut plan,
            explain,
        )?,
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
/// an ownerReference's version or `v1beta2` (DESIGN §3).
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
/// the Cluster its tags start from), through the same [`resolve`] and
/// [`read`], with the same field masks, deciding nothing. The benchmark's
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

#[cfg(test)]
mod tests {
    use super::*;

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
                if default_projection_covers(route, &settings) {
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
