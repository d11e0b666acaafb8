//! A whole management cluster audited at once, from what
//! `kubectl get clusters,clusterclasses,machinedeployments,… -A -o yaml`
//! prints, with no cluster to ask: the model `policy-runner audit` and the
//! web page share, so the two render one decision.
//!
//! - [`dump`] turns the text of a dump into objects that know where they
//!   were read (file, document, item).
//! - [`report`] evaluates every object the policy acts on with the policy's
//!   own core, in validate mode, its look-ups answered from the dump, and
//!   keeps the explanation, the look-ups and the patch mutate mode would
//!   apply, compactly ([`compact`]: as the text and JSON printed).
//! - [`live`] judges a live cluster's objects a page at a time, keeping
//!   per object what the report and `--fix` need.
//! - [`tree`] is the ownership tree over the objects.
//! - [`render`] prints the report as text (the CLI) and as one JSON document
//!   (the CLI's `-o json`, and what the page renders).
//!
//! Reading files, printing and exit codes are the callers'.

// Two callers (the runner and the web page) build on this API, and its
// documented meanings (what an origin counts, which objects are refused) are
// what keep them agreeing: an undocumented public item fails the build, not
// only warns as the workspace's lint does.
#![deny(missing_docs)]

mod audit_error;
pub mod compact;
pub mod dump;
mod dump_answers;
pub mod live;
mod origin;
pub mod render;
pub mod report;
pub mod tree;

pub use audit_error::AuditError;
pub use dump_answers::{Answer, LiveSource, LookupRecord};
pub use origin::Origin;
pub use report::{
    AuditSettings, Audited, Detail, Evaluation, Listed, Report, Status, Summary, audit_objects,
};
