//! What the tags read of the object they tag, for `needs` and `decide`
//! alike: its own label set (its labels under its label-set annotation),
//! whether that set leaves it as submitted, its namespace, and how
//! messages name it.

use super::contract_names::{ANNOTATIONS, LABELS, LABELS_ANNOTATION};
use super::targets::Target;
use crate::json::fields::{self, FieldError, FieldPath, StringMap};
use crate::json::labels_annotation::{self, Entries, Malformed};
use crate::request::AdmissionRequest;
use crate::request::lookup::ObjectRef;
use crate::request::plan::Plan;
use crate::tags::decision::label_set::{LabelSet, Layer, Source};
use serde_json::{Map, Value};

/// What [`own_reference`] reads of the object, for a row named in
/// messages.
pub(super) const NAME_PATHS: [&[&str]; 3] = [
    &["metadata", "name"],
    &["metadata", "generateName"],
    &["metadata", "namespace"],
];

/// The namespace of an infrastructure object (checked by the CAPI stage),
/// or of a managed resource (empty when it is cluster-scoped).
pub(super) fn own_namespace(request: &AdmissionRequest) -> &str {
    request.object_namespace().unwrap_or(&request.namespace)
}

/// The object of the request as messages name it, when its row names it
/// ([`Target::named_in_messages`]).
pub(super) fn own_reference(target: &Target, request: &AdmissionRequest) -> Option<ObjectRef> {
    if !target.named_in_messages {
        return None;
    }
    let kind = &request.kind;
    let name = ["name", "generateName"]
        .into_iter()
        .find_map(|field| fields::string(&request.object, &["metadata", field]).ok()?)
        .unwrap_or_default();
    Some(ObjectRef {
        api_version: format!("{}/{}", kind.group, kind.version),
        kind: kind.kind.clone(),
        name: name.to_owned(),
        namespace: Some(own_namespace(request))
            .filter(|namespace| !namespace.is_empty())
            .map(str::to_owned),
    })
}

/// Whether `object`'s own label set as submitted (its labels, under its
/// label-set annotation) says it is adopted: what `needs` asks when its
/// row's [`Adoption::asks_own_early`](crate::tags::targets::Adoption::asks_own_early).
pub(super) fn own_set_adopted(object: &Value) -> Result<bool, FieldError> {
    let annotations = fields::string_map(object, ANNOTATIONS)?;
    let extra = parse_labels_annotation(&annotations)?;
    let labels = OwnLabels::InPlace(fields::string_object(object, LABELS)?);
    Ok(OwnLayers { labels, extra }
        .over(LabelSet::default())
        .marks_adopted())
}

/// The object's own layers of its label set: its labels and its label-set
/// annotation's entries, as the plan will leave them.
pub(super) struct OwnLayers<'a> {
    labels: OwnLabels<'a>,
    extra: Entries<'a>,
}

impl<'a> OwnLayers<'a> {
    /// The layers of `object` as `plan` leaves them; `annotations` are its
    /// annotations as planned.
    pub(super) fn read(
        plan: &'a Plan,
        object: &'a Value,
        annotations: &StringMap<'a>,
    ) -> Result<Self, FieldError> {
        let extra = parse_labels_annotation(annotations)?;
        let labels = OwnLabels::read(plan, object)?;
        Ok(Self { labels, extra })
    }

    /// `set` with these layers over it: the object's labels, then its
    /// annotation, win over what `set` holds.
    pub(super) fn over<'s>(&'s self, mut set: LabelSet<'s>) -> LabelSet<'s> {
        if let Some(layer) = self.labels.layer() {
            set = set.with(Source::OwnLabels, layer);
        }
        set.with(Source::OwnAnnotation, Layer::Annotation(&self.extra))
    }
}

/// An object's `metadata.labels` as the plan will leave them: read in
/// place when the plan does not edit them (always, on a composite
/// resource), else overlaid by the plan's edits.
enum OwnLabels<'a> {
    InPlace(Option<&'a Map<String, Value>>),
    Planned(StringMap<'a>),
}

impl<'a> OwnLabels<'a> {
    fn read(plan: &'a Plan, object: &'a Value) -> Result<Self, FieldError> {
        if plan.map_edits().any(|edit| edit.path == LABELS) {
            plan.resulting_map(object, LABELS).map(OwnLabels::Planned)
        } else {
            fields::string_object(object, LABELS).map(OwnLabels::InPlace)
        }
    }

    fn layer(&self) -> Option<Layer<'_>> {
        match self {
            OwnLabels::InPlace(labels) => labels.map(Layer::Object),
            OwnLabels::Planned(labels) => Some(Layer::Map(labels)),
        }
    }
}

fn labels_annotation_field() -> FieldPath {
    FieldPath::of(ANNOTATIONS).key(LABELS_ANNOTATION)
}

/// The label-set annotation's entries (none when it is absent).
pub(super) fn parse_labels_annotation<'o>(
    annotations: &StringMap<'o>,
) -> Result<Entries<'o>, FieldError> {
    let Some(text) = annotations.get(LABELS_ANNOTATION) else {
        return Ok(Entries::default());
    };
    labels_annotation::decode(text).map_err(|malformed| {
        let field = match &malformed {
            Malformed::NotAString { key, .. } => labels_annotation_field().key(key),
            Malformed::Empty | Malformed::NotJson(_) | Malformed::NotAnObject(_) => {
                labels_annotation_field()
            }
        };
        FieldError::new(field, malformed)
    })
}
