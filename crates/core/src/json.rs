//! Reading and writing JSON: typed values out of untyped objects, decoding
//! only the parts the policy reads, keyed lists, the label-set annotation's
//! format, Go's duration text, `null` as a setting's default, and quoting.

pub(crate) mod field_path;
pub mod fields;
pub(crate) mod go_duration;
pub(crate) mod keyed_list;
pub(crate) mod labels_annotation;
pub(crate) mod null_unset;
pub mod projection;
pub(crate) mod quote;
pub(crate) mod sorted_map;
