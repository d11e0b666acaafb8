//! Cloud tags on CAPI infrastructure (`cloudTags.capiInfrastructure`; README,
//! "Cloud tags on CAPI infrastructure"): the opted-in labels of an
//! infrastructure object, and for a cluster-level object those of its
//! Cluster too, become tags in the provider's own tag field.
//!
//! The same four stages as for XRs, run by the CAPI evaluation into its own
//! plan, so an object that is also a CAPI child (an AWSMachine cloned by a
//! MachineSet) gets its metadata and its tags in one decision and one patch:
//! *resolve* the label set, the object's labels as they will be stored after
//! the plan's metadata edits; *transform* under the row's profile, the
//! user's entries taking room under the cap; *stamp* the field and the skip
//! annotation; *report* each skip as a warning.

pub mod cluster;
pub mod targets;

use super::label_set::{LabelSet, Layer, Source};
use super::labels_annotation;

use super::decision::Inputs;
use super::field::{self, Owned};
use crate::explain::{CloudTags, Explanation};
use crate::fields::{self, FieldError, StringMap};
use crate::lookup::{Lookup, ObjectRef};
use crate::plan::Plan;
use crate::quote::quoted;
use crate::request::AdmissionRequest;
use crate::settings::{Settings, SettingsError};
use crate::tags::profile::{GENERIC, Origin, TagProfile};
use cluster::ClusterFound;
use targets::{LabelSource, Target};

const LABELS: &[&str] = &["metadata", "labels"];
const ANNOTATIONS: &[&str] = &["metadata", "annotations"];

/// Why an infrastructure object's tags cannot be decided.
#[derive(Debug, thiserror::Error)]
pub enum InfraTagsError {
    /// The object or its Cluster is malformed where the label set or the
    /// tag field is read.
    #[error("cannot compute cloud tags: {object} {error}")]
    Malformed {
        /// The object the field was read from.
        object: Box<ObjectRef>,
        /// The field and what is wrong with it.
        error: FieldError,
    },
    /// The Cluster could not be read (not NotFound).
    #[error(
        "cannot read {cluster}, whose labels become this object's cloud tags: {message}; the \
         request can be retried once the policy can read it"
    )]
    Lookup {
        /// The Cluster asked for.
        cluster: Box<ObjectRef>,
        /// The host's error, made readable.
        message: String,
    },
    /// The settings could not be prepared (only when `validate_settings`,
    /// which refuses them, was bypassed).
    #[error("policy settings are not valid: {0}")]
    Settings(#[from] SettingsError),
}

impl InfraTagsError {
    /// Whether the request may succeed when retried (the host failed, or
    /// the policy's own settings did), rather than the object being at fault.
    pub fn is_retryable(&self) -> bool {
        !matches!(self, InfraTagsError::Malformed { .. })
    }
}

/// The cloud-tag target row of an infrastructure object, when
/// `cloudTags.capiInfrastructure` is on and the kind has one.
pub fn target(request: &AdmissionRequest, settings: &Settings) -> Option<&'static Target> {
    let kind = &request.kind;
    settings
        .capi_infrastructure()
        .then(|| targets::target_for(&kind.group, &kind.kind, &kind.version))
        .flatten()
}

/// The tag field, read when this request stamps it (`None` on the UPDATE of
/// a CREATE-only row): read before any look-up, so a field of the wrong
/// shape, the object's fault, is refused with 400 rather than after a
/// look-up that may fail retryably (500).
pub fn read_field<'o>(
    request: &'o AdmissionRequest,
    target: &Target,
    namespace: &str,
) -> Result<Option<field::Current<'o>>, InfraTagsError> {
    if target.create_only && request.operation != "CREATE" {
        return Ok(None);
    }
    field::read(&request.object, target.tag_field())
        .map(Some)
        .map_err(|error| malformed(own_reference(request, namespace), error))
}

/// Makes the Cluster look-up [`plan_tags`] makes for `request`, with the
/// same mask, deciding nothing (the benchmark's look-up floor,
/// [`crate::capi::look_up_parents`]). The label naming the Cluster is
/// CAPI bookkeeping, which the metadata edits never change, so the object's
/// own labels name the same Cluster.
pub fn look_up_cluster(
    request: &AdmissionRequest,
    target: &Target,
    namespace: &str,
    lookup: &dyn Lookup,
) -> Result<(), InfraTagsError> {
    let skipped = target.create_only && request.operation != "CREATE";
    if skipped || target.labels == LabelSource::Object {
        return Ok(());
    }
    let own = |error| malformed(own_reference(request, namespace), error);
    let labels = fields::string_map(&request.object, LABELS).map_err(own)?;
    let reference = cluster::reference(&request.object, &labels, namespace).map_err(own)?;
    cluster::read(reference, lookup)
        .map(drop)
        .map_err(|failed| InfraTagsError::Lookup {
            cluster: Box::new(failed.cluster),
            message: failed.message,
        })
}

/// Adds the tags decision of an infrastructure object of row `target` to
/// `plan`, which already holds the object's CAPI metadata edits, and
/// returns the skip warnings. `current` is the tag field as [`read_field`]
/// read it (`None`: not stamped on this request). Fills `explain` when
/// given.
#[allow(clippy::too_many_arguments)]
pub fn plan_tags(
    request: &AdmissionRequest,
    target: &'static Target,
    current: Option<field::Current<'_>>,
    namespace: &str,
    settings: &Settings,
    lookup: &dyn Lookup,
    plan: &mut Plan,
    explain: Option<&mut Explanation>,
) -> Result<Vec<String>, InfraTagsError> {
    let object = &request.object;
    let this = || own_reference(request, namespace);
    let Some(current) = current else {
        if let Some(explain) = explain {
            explain.notes.push(format!(
                "{} is tagged on CREATE only ({} makes {} immutable): its tags are left as \
                 they are",
                request.kind.kind,
                target.profile,
                target.field.join(".")
            ));
        }
        return Ok(Vec::new());
    };
    let settings = settings.cloud_tags()?;
    let (profile, origin) = settings
        .profiles
        .infrastructure(target.profile)
        .unwrap_or((&GENERIC, Origin::Fallback));
    let own = |error| malformed(this(), error);

    // Borrowed from the plan: everything below is computed into owned
    // edits before the plan is changed.
    let labels = plan.resulting_map(object, LABELS).map_err(own)?;
    let annotations = plan.resulting_map(object, ANNOTATIONS).map_err(own)?;
    let own_extra = super::parse_labels_annotation(&annotations).map_err(own)?;
    let found = match target.labels {
        LabelSource::Object => ClusterFound::Unnamed,
        LabelSource::ClusterAndObject => {
            let reference = cluster::reference(object, &labels, namespace).map_err(own)?;
            cluster::read(reference, lookup).map_err(|failed| InfraTagsError::Lookup {
                cluster: Box::new(failed.cluster),
                message: failed.message,
            })?
        }
    };
    // The Cluster's labels are read in place (a serde_json map iterates
    // sorted, each key once): the label set is built in one pass over them.
    let (cluster_labels, cluster_annotations) = match &found {
        ClusterFound::Read(reference, cluster) => {
            let of_cluster = |error| malformed(reference.clone(), error);
            (
                fields::string_object(cluster, LABELS).map_err(of_cluster)?,
                fields::string_map(cluster, ANNOTATIONS).map_err(of_cluster)?,
            )
        }
        _ => (None, StringMap::new()),
    };
    let cluster_extra = match &found {
        ClusterFound::Read(reference, _) => super::parse_labels_annotation(&cluster_annotations)
            .map_err(|error| malformed(reference.clone(), error))?,
        _ => labels_annotation::Entries::default(),
    };

    // Later sources win: the Cluster's labels, its annotation, the
    // object's labels, its annotation.
    let mut set = LabelSet::default();
    if let Some(cluster_labels) = cluster_labels {
        set = set.with(Source::ClusterLabels, Layer::Object(cluster_labels));
    }
    let set = set
        .with(Source::ClusterAnnotation, Layer::Annotation(&cluster_extra))
        .with(Source::OwnLabels, Layer::Map(&labels))
        .with(Source::OwnAnnotation, Layer::Annotation(&own_extra));
    let keys = settings.tag_keys(profile);
    let cluster = cluster_name(&found);
    let decided = super::decision::decide(
        Inputs {
            field: target.tag_field(),
            set: &set,
            current: &current,
            profile: (profile, origin),
            keys,
            owned: Owned {
                prefix: keys.prefix,
                old_prefix: None,
            },
            user_room: true,
            propagating: &settings.propagating_labels,
            annotations: &annotations,
            cluster: &cluster,
        },
        explain.is_some(),
        || labels_source(&found, profile),
    );
    if let (Some(explain), Some(explained)) = (explain, decided.explained) {
        explain.cloud_tags = Some(CloudTags {
            provider: labels_source(&found, profile),
            why: why_profile(request, target, origin, profile),
            field: Some(target.field.join(".")),
            ..explained
        });
        if let ClusterFound::NotFound(reference) = &found {
            explain.notes.push(format!(
                "{reference} was not found: the tags come from this object's own labels"
            ));
        }
    }
    if let Some(edit) = decided.edit {
        plan.push(edit);
    }
    plan.merge(decided.skipped);
    Ok(decided.warnings)
}

fn malformed(object: ObjectRef, error: FieldError) -> InfraTagsError {
    InfraTagsError::Malformed {
        object: Box::new(object),
        error,
    }
}

/// The object of the request, as messages name it.
fn own_reference(request: &AdmissionRequest, namespace: &str) -> ObjectRef {
    let kind = &request.kind;
    let name = ["name", "generateName"]
        .into_iter()
        .find_map(|field| fields::string(&request.object, &["metadata", field]).ok()?)
        .unwrap_or_default();
    ObjectRef {
        api_version: format!("{}/{}", kind.group, kind.version),
        kind: kind.kind.clone(),
        name: name.to_owned(),
        namespace: Some(namespace.to_owned()),
    }
}

/// Whose labels the tags come from, in words.
fn labels_source(found: &ClusterFound, profile: &TagProfile) -> String {
    let own = format!("this object's labels under profile {}", profile.name);
    match found {
        ClusterFound::Read(reference, _) => format!("the labels of {reference}, then {own}"),
        _ => own,
    }
}

/// Why the profile applied, naming the row or the setting that selected it.
fn why_profile(
    request: &AdmissionRequest,
    target: &Target,
    origin: Origin,
    profile: &TagProfile,
) -> String {
    let kind = &request.kind;
    let row = format!(
        "{} ({}/{}) keeps its tags in {}",
        kind.kind,
        kind.group,
        kind.version,
        target.field.join(".")
    );
    match origin {
        Origin::UserDefined { index } => format!(
            "{row}; cloudTags.profiles[{index}] lists {} among its providers, replacing the \
             built-in profile",
            quoted(target.profile)
        ),
        _ => format!("{row} under the built-in profile {}", profile.name),
    }
}

/// The Cluster the labels were read from, as explanations name it.
fn cluster_name(found: &ClusterFound) -> String {
    match found {
        ClusterFound::Read(reference, _) => reference.to_string(),
        _ => String::new(),
    }
}
