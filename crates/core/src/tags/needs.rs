//! The first half of the tags stage's door: what the tags of a request
//! read of the object and of the cluster, named before any look-up, and
//! how messages name the object.

use super::contract_names::LABELS;
use super::failures::malformed;
use super::object_read::{own_namespace, own_reference, own_set_adopted};
use super::targets::{LabelSource, Target};
use crate::error::Error;
use crate::json::fields::{self, FieldError};
use crate::json::projection::Projection;
use crate::kube::kinds::is_capi_group;
use crate::request::AdmissionRequest;
use crate::request::lookup::ObjectRef;
use crate::request::reads::Need;
use crate::tags::targets::covering_row::{Covered, KindRows};
use crate::tags::targets::field::{self, Current};
use crate::tags::targets::label_source::{self, CLUSTER_NAME_LABEL};
use crate::tags::targets::managed_resource::{self, LeftAlone};
use serde_json::Value;

/// What the tags stage needs of a request, named before any look-up.
pub(crate) enum TagNeeds<'o> {
    /// No row of the tag table covers the object, but it came to the
    /// tags, not to the CAPI rules: allowed unchanged, with a warning
    /// naming its kind.
    NotAComposite,
    /// An object of a managed-resource family the settings turn on that
    /// has no tag field: allowed unchanged, without a warning.
    Untagged,
    /// Left as submitted: adopted by its own label set, asked before any
    /// look-up ([`Adoption::asks_own_early`](super::targets::Adoption::asks_own_early)).
    Adopted,
    /// A managed resource left as submitted, with no look-up and no
    /// warning, and why.
    LeftAlone(LeftAlone),
    /// Tagged from what this names (boxed: a row is large, the other
    /// answers small).
    Tagging(Box<Tagging<'o>>),
}

impl TagNeeds<'_> {
    /// The tags stage's one read: the object whose label set the tags
    /// start from (a Cluster, a composite resource), masked to that label
    /// set.
    pub(super) fn first(&self) -> Option<Need<'_>> {
        match self {
            TagNeeds::Tagging(tagging) => {
                (tagging.source.as_ref()).map(|(source, mask)| (source, mask))
            }
            TagNeeds::NotAComposite
            | TagNeeds::Untagged
            | TagNeeds::Adopted
            | TagNeeds::LeftAlone(_) => None,
        }
    }
}

/// The first half of the stage's door: what the tags of `request` read of
/// the object and of the cluster, from the row of the tag table that
/// covers it, among the rows its kind may be covered by (`rows`: the
/// infrastructure rows in force when `cloudTags.capiInfrastructure` is on,
/// the managed-resource rows when `cloudTags.managedResources` turns a
/// family on), or `None` for a Cluster API object no row covers, which the
/// tags leave to the CAPI rules.
pub(crate) fn needs<'r>(
    request: &'r AdmissionRequest,
    rows: &KindRows,
) -> Result<Option<TagNeeds<'r>>, Error> {
    match rows.row_for(request) {
        Covered::Row(target) => needs_of_row(target, request).map(Some),
        Covered::Untagged => Ok(Some(TagNeeds::Untagged)),
        Covered::Not if is_capi_group(&request.kind.group) => Ok(None),
        Covered::Not => Ok(Some(TagNeeds::NotAComposite)),
    }
}

/// What the tags of `request`, of row `target`, read. The tag field is
/// read here, before any look-up: a field of the wrong shape, the object's
/// fault, is refused with 400 rather than after a look-up that may fail
/// retryably (500). Whatever its tag field holds, an adopted object is
/// left as submitted. What is wrong with the object is worded once, here.
fn needs_of_row(target: Target, request: &AdmissionRequest) -> Result<TagNeeds<'_>, Error> {
    let of_object = OfObject {
        object: &request.object,
        namespace: own_namespace(request),
        stamps: target.stamps(&request.operation),
    };
    match of_object.needs(&target) {
        Ok(Read::Tagging { field, source }) => Ok(TagNeeds::Tagging(Box::new(Tagging {
            target,
            field,
            source: source.map(|source| (source, label_source::label_set_mask())),
        }))),
        Ok(Read::Adopted) => Ok(TagNeeds::Adopted),
        Ok(Read::LeftAlone(why)) => Ok(TagNeeds::LeftAlone(why)),
        Err(error) => Err(malformed(own_reference(&target, request), error)),
    }
}

/// What a row's needs read of the object: the object, its namespace, and
/// whether this request stamps its tag field.
struct OfObject<'o> {
    object: &'o Value,
    namespace: &'o str,
    stamps: bool,
}

/// What [`OfObject::needs`] found.
enum Read<'o> {
    Tagging {
        field: Option<Current<'o>>,
        source: Option<ObjectRef>,
    },
    Adopted,
    LeftAlone(LeftAlone),
}

impl<'o> OfObject<'o> {
    /// The row's needs of the object, one label source after another.
    fn needs(&self, target: &Target) -> Result<Read<'o>, FieldError> {
        let composing = match target.labels {
            LabelSource::ComposingResource => {
                match managed_resource::composing_resource(self.object, self.namespace) {
                    Ok(xr) => Some(xr),
                    Err(why) => return Ok(Read::LeftAlone(why)),
                }
            }
            LabelSource::Object | LabelSource::ClusterAndObject => None,
        };
        let field = self.field(target);
        // The object's own label set, where its row asks it before any
        // look-up: a managed resource's (its labels are no source of its
        // tags, and are asked only this), and a composite resource's whose
        // tag field cannot be read (an adopted object is never refused for
        // its tags).
        if target.adoption.asks_own_early(field.is_err()) && own_set_adopted(self.object)? {
            return Ok(Read::Adopted);
        }
        let field = field?;
        let source = match (composing, target.labels) {
            (Some(xr), _) => Some(xr),
            (None, LabelSource::ClusterAndObject) if self.stamps => self.cluster()?,
            (None, _) => None,
        };
        Ok(Read::Tagging { field, source })
    }

    /// The tag field, read when this request stamps it (`None`
    /// otherwise), for every row in one place.
    fn field(&self, target: &Target) -> Result<Option<Current<'o>>, FieldError> {
        match self.stamps {
            true => field::read(self.object, target.tag_field()).map(Some),
            false => Ok(None),
        }
    }

    /// The Cluster `decide` reads (`None`: it reads none), named once,
    /// before any look-up, so that one read of it can serve the read with
    /// the CAPI stage. Named from the object's labels as submitted: the
    /// label naming the Cluster is CAPI bookkeeping, which the metadata
    /// edits never change.
    fn cluster(&self) -> Result<Option<ObjectRef>, FieldError> {
        let name = fields::string_object(self.object, LABELS)?
            .and_then(|labels| labels.get(CLUSTER_NAME_LABEL)?.as_str());
        label_source::cluster_reference(self.object, name, self.namespace)
    }
}

/// What the tags of one request start from: its row of the tag table, its
/// tag field as submitted (`None` when the request does not stamp it) and
/// the object its labels start from: the Cluster, or a managed resource's
/// composite resource.
pub(crate) struct Tagging<'o> {
    pub(super) target: Target,
    pub(super) field: Option<Current<'o>>,
    pub(super) source: Option<(ObjectRef, Projection<'static>)>,
}
