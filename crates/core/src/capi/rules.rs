//! The CAPI metadata-propagation contract as a table.
//!
//! One [`Rule`] per (child family, parent kind): how the parent is found,
//! which parent maps flow to which child maps, which keys never travel,
//! which bookkeeping keys the child keeps, and which in-place fields
//! (timeouts, `minReadySeconds`, readiness gates, taints, deletion order,
//! machine naming) flow. Each row names the CAPI function it mirrors.
//!
//! Map flows hold the same paths in v1beta1 and v1beta2. A [`FieldFlow`]
//! names its place in each API version ([`ByVersion`]), because v1beta2
//! moved and retyped these fields (v1beta1 `spec.nodeDrainTimeout: "5m"`,
//! v1beta2 `spec.deletion.nodeDrainTimeoutSeconds: 300`). The versioned
//! differences of the topology look-ups (Cluster → ClusterClass references,
//! class metadata paths) are rows of [`super::topology::SHAPES`].

// The contract in five files: the types and the shared paths and helpers
// (contract), the three node timeouts every Machine-creating edge carries,
// the field flows of the topology edges, those of the MachineSet and
// Machine edges, and the rows that use them (table). Each file imports only
// the files before it. Beside them, the paths some child kinds' CRDs lack
// (schema_gaps), which the rules do not write on those kinds.
mod contract;
pub(super) mod machine_fields;
mod node_timeouts;
mod schema_gaps;
mod table;
mod topology_fields;

pub(crate) use contract::*;
pub(crate) use schema_gaps::{is_lacked, lacked_by};
pub(crate) use table::CAPI_RULES;
