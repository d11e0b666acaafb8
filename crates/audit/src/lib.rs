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
//!   apply.
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

pub mod dump;
mod dump_answers;
pub mod live;
pub mod render;
pub mod report;
pub mod tree;

use metadata_propagation_core::lookup::ObjectRef;
use thiserror::Error;

pub use dump::Origin;
pub use dump_answers::{Answer, LiveSource, LookupRecord};
pub use report::{
    AuditSettings, Audited, Detail, Evaluation, Report, Status, Summary, audit_objects,
};

/// Why a dump cannot be audited; each names the file and the document.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AuditError {
    /// A document is neither YAML nor JSON.
    #[error("{file} document {document}: not valid YAML or JSON: {reason}")]
    Syntax {
        /// The file.
        file: String,
        /// The document that does not parse, from 1.
        document: usize,
        /// The parser's message (with line and column).
        reason: String,
    },
    /// The text holds no document at all.
    #[error(
        "{file} holds no YAML or JSON document (an empty file, or only comments): \
         write it with `kubectl get <kinds> -A -o yaml > {file}`"
    )]
    NoDocument {
        /// The file.
        file: String,
    },
    /// A document (or List item) is not a Kubernetes object.
    #[error("{origin}: not a Kubernetes object: {problem}")]
    NotAnObject {
        /// Where it is.
        origin: Origin,
        /// What is missing or mistyped.
        problem: String,
    },
    /// An object is listed twice.
    #[error("{origin}: {object} is also at {first}; a dump must list each object once")]
    Duplicate {
        /// Where it is listed again.
        origin: Origin,
        /// Where it is listed first.
        first: Origin,
        /// The object (boxed: the error stays small).
        object: Box<ObjectRef>,
    },
    /// The settings are refused by the policy's own `validate_settings`.
    #[error("Provided settings are not valid: {0}")]
    Settings(String),
}
