//! The names the cloud-tags contract fixes: its two annotations, the origin
//! label, and where an object keeps its labels and annotations (its tag
//! field is its row's: [`super::targets`]).

/// Annotation holding extra labels as a JSON object (qualified keys may
/// contain `:`, which Kubernetes label keys cannot).
pub(crate) const LABELS_ANNOTATION: &str = "cloud-tags.plexsphere.io/labels";
/// Annotation listing every skipped label as a JSON array.
pub(crate) const SKIPPED_ANNOTATION: &str = "cloud-tags.plexsphere.io/skipped";
/// Label marking where a resource came from; `adopted` ones never propagate.
pub(crate) const ORIGIN_LABEL: &str = "platform/origin";

/// Where an object's labels and annotations (the label-set annotation
/// among them) live.
pub(crate) use crate::json::fields::{ANNOTATIONS, LABELS};
