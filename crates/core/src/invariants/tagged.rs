//! Which objects the policy may tag, and under which prefix: the
//! contract's rules (docs/cloud-tags.md, "Which kinds are composite
//! resources" and "Tag keys"), stated here apart from the code that
//! implements them (`tags::composite`, `tags::keys::tag_naming::TagKeys`), so that
//! the property tests and the fuzz targets hold that code to them rather
//! than to itself.

use crate::json::fields;
use crate::kube::kinds::is_capi_group;
use crate::kube::owners;
use crate::settings::Settings;
use crate::tags::CloudTagSettings;
use crate::tags::keys::tag_naming::DEFAULT_PREFIX;
use crate::tags::profiles::provider_limits::{GENERIC, Origin, TagProfile};
use crate::tags::targets::Target;
use serde_json::Value;

/// The built-in default prefix of the profiles whose keys refuse `:`.
const DASH_PREFIX: &str = "plexsphere-";
/// The built-in profiles that default to [`DASH_PREFIX`] (GCP label keys
/// admit no `:`); every other profile, user profiles included, defaults to
/// [`DEFAULT_PREFIX`].
const DASH_PROFILES: [&str; 2] = ["capg", "gcp"];

/// Whether `object`, of a request in `namespace` (empty for a
/// cluster-scoped kind), is a Crossplane composite resource by its shape:
/// a v2 XR (`spec.crossplane` is an object), or a v1 or v2 `LegacyCluster`
/// XR (cluster-scoped, `spec.compositionUpdatePolicy` `Automatic` or
/// `Manual`). Nothing else is ever tagged, whatever its group.
pub(crate) fn is_composite_resource(object: &Value, namespace: &str) -> bool {
    let spec = object.get("spec");
    let v2 = spec
        .and_then(|spec| spec.get("crossplane"))
        .is_some_and(Value::is_object);
    // No namespace: the request has none, and the object names none (a
    // value that is not a non-empty string names none).
    let own_namespace = object
        .get("metadata")
        .and_then(|metadata| metadata.get("namespace"))
        .and_then(Value::as_str);
    let cluster_scoped = namespace.is_empty() && own_namespace.is_none_or(str::is_empty);
    let policy = spec
        .and_then(|spec| spec.get("compositionUpdatePolicy"))
        .and_then(Value::as_str);
    v2 || (cluster_scoped && matches!(policy, Some("Automatic" | "Manual")))
}

/// The prefix in force under `profile` (chosen for `origin`), in the
/// contract's order: the profile's own `prefix` (only user profiles have
/// one); else `cloudTags.prefix` when the settings set it, for every
/// profile; else the profile's built-in default, `plexsphere-` for the
/// built-in `capg` and `gcp`, `plexsphere:` for every other.
pub(crate) fn prefix_for<'s>(
    profile: &'s TagProfile,
    origin: Origin,
    settings: &'s CloudTagSettings,
) -> &'s str {
    if let Some(own) = profile.prefix.as_deref() {
        return own;
    }
    if let Some(set) = settings.prefix.as_deref() {
        return set;
    }
    match origin {
        Origin::BuiltIn if DASH_PROFILES.contains(&profile.name.as_ref()) => DASH_PREFIX,
        _ => DEFAULT_PREFIX,
    }
}

/// The prefix in force on a composite resource: under the profile its
/// provider value selects (a provider that is not a string selects none;
/// the policy rejects such an object anyway).
pub(crate) fn composite_prefix<'s>(object: &Value, settings: &'s CloudTagSettings) -> &'s str {
    let path: Vec<&str> = settings.provider_path.iter().map(String::as_str).collect();
    let provider = fields::string(object, &path).ok().flatten();
    let (profile, origin) = settings.profiles.resolve(provider);
    prefix_for(profile, origin, settings)
}

/// The prefix in force on an infrastructure object of row `target`: under
/// the profile the row names (a user profile listing that name replaces
/// the built-in; a name no profile has gives the `generic` fallback's).
/// Panics when `settings` cannot prepare their `cloudTags` section (the
/// oracle judges requests the policy evaluated under them).
pub(crate) fn infrastructure_prefix<'s>(target: &Target, settings: &'s Settings) -> &'s str {
    let settings = settings.cloud_tags().expect("the settings prepare");
    let name = target.profile_name().unwrap_or_default();
    let (profile, origin) =
        (settings.profiles.infrastructure(name)).unwrap_or((&GENERIC, Origin::Fallback));
    prefix_for(profile, origin, settings)
}

/// The managed-resource families, by name: each selects the profile of its
/// name (as an XR's provider value would), and owns the API groups ending
/// in `<name>.upbound.io` and, namespaced, `<name>.m.upbound.io`.
const FAMILIES: [&str; 3] = ["aws", "azure", "gcp"];

/// The family of an MR's API `group` and the group as the catalogue keys
/// it (the cluster-scoped one, without `.m.`): the group is a family's
/// suffix, whole or after a service's name and a dot
/// (docs/managed-resources.md, "Families and the catalogue").
pub(crate) fn managed_resource_family(group: &str) -> Option<(&'static str, String)> {
    FAMILIES.into_iter().find_map(|name| {
        let cluster_scoped = format!("{name}.upbound.io");
        [format!("{name}.m.upbound.io"), cluster_scoped.clone()]
            .iter()
            .find_map(|suffix| group.strip_suffix(suffix.as_str()))
            .filter(|service| service.is_empty() || service.ends_with('.'))
            .map(|service| (name, format!("{service}{cluster_scoped}")))
    })
}

/// Whether `object`, of a request in `namespace`, is a managed resource by
/// its shape: `spec.forProvider` and `spec.providerConfigRef` are objects,
/// and it is not a composite resource (an XRD may give an XR a
/// `forProvider`; docs/managed-resources.md, "Which objects are managed
/// resources").
pub(crate) fn is_managed_resource(object: &Value, namespace: &str) -> bool {
    let is_object = |name: &str| object["spec"].get(name).is_some_and(Value::is_object);
    is_object("forProvider")
        && is_object("providerConfigRef")
        && !is_composite_resource(object, namespace)
}

/// Whether the MR `object` is left as submitted whatever its XR says
/// (docs/managed-resources.md, "What is left alone"): not composed (no
/// ownerReference with `controller: true`, a controller of a Cluster API
/// group, which is never a composite resource, or no non-empty
/// `crossplane.io/composite` label), being deleted, never written by its
/// provider (`spec.managementPolicies` without `*`, `Create`, `Update`), or
/// labelled `platform/origin: adopted` itself. An ownerReferences list that
/// does not read is no controller.
pub(crate) fn managed_resource_left_alone(object: &Value) -> bool {
    let metadata = &object["metadata"];
    let composed = metadata["labels"]["crossplane.io/composite"]
        .as_str()
        .is_some_and(|name| !name.is_empty());
    let owners = owners::owner_refs(object).unwrap_or_default();
    let controller = owners.iter().find(|o| o.controller);
    let controlled = controller.is_some_and(|o| !is_capi_group(o.group()));
    let deleting = !metadata["deletionTimestamp"].is_null();
    let written = match &object["spec"]["managementPolicies"] {
        Value::Array(policies) => {
            (policies.iter()).any(|p| matches!(p.as_str(), Some("*" | "Create" | "Update")))
        }
        _ => true,
    };
    let adopted = metadata["labels"]["platform/origin"] == "adopted";
    !(composed && controlled) || deleting || !written || adopted
}

/// The prefix in force on a managed resource of `family`: under the
/// profile the family's name selects, as a provider value would (a user
/// profile listing it, else the built-in of that name).
pub(crate) fn managed_resource_prefix<'s>(family: &str, settings: &'s CloudTagSettings) -> &'s str {
    let (profile, origin) = settings.profiles.resolve(Some(family));
    prefix_for(profile, origin, settings)
}
