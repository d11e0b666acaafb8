//! Why a request cannot be decided, whose fault that is, and the one place
//! a failure becomes a status ([`Error::into_outcome`]).

use crate::json::fields::FieldError;
use crate::request::lookup::ObjectRef;
use crate::request::outcome::Outcome;
use crate::settings_problem::SettingsError;
use std::borrow::Cow;

/// Why a request cannot be decided: what failed, and where. One shape for
/// every stage: a stage words its own failures (what it could not do, and
/// which object), and this decides what they answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// An object the decision reads (the request's, or one a stage reads
    /// of the cluster) is malformed where a stage reads it.
    #[error("{doing}: {whose}{error}")]
    Malformed {
        /// What the stage could not do (`cannot compute cloud tags`).
        doing: &'static str,
        /// Which object, and how the stage came to read it, ending in a
        /// separator; empty for the request's own object when the stage
        /// does not name it.
        whose: String,
        /// The field and what is wrong with it.
        error: FieldError,
    },
    /// An object a stage reads could not be read (NotFound is not a
    /// failure: each reader has its answer for it).
    #[error(
        "cannot read {object}, {reader}: {message}; the request can be retried once the policy \
         can read it"
    )]
    Lookup {
        /// The object asked for.
        object: Box<ObjectRef>,
        /// Who asked for it, in the stage's words (`the parent of this
        /// MachineSet`).
        reader: Cow<'static, str>,
        /// The host's error, made readable (the policy crate's
        /// `host_lookup::readable_host_error`).
        message: String,
    },
    /// An object a stage read of the cluster is malformed where the stage
    /// reads it, and the stage reads it for a request that the object's
    /// owner, not the request's author, makes (a managed resource's
    /// CREATE, which Crossplane composes again on its next reconcile):
    /// not the request's fault, so retryable, once that object is mended.
    #[error(
        "cannot use {object}, {reader}: {error}; the request can be retried once that object \
         is corrected"
    )]
    ReadMalformed {
        /// The object read.
        object: Box<ObjectRef>,
        /// Who read it, in the stage's words.
        reader: Cow<'static, str>,
        /// The field and what is wrong with it.
        error: FieldError,
    },
    /// The settings do not parse (only when `validate_settings`, which
    /// refuses them, was bypassed).
    #[error("policy settings are not valid: {0}")]
    Settings(#[from] SettingsError),
}

/// Whose fault a failure is, which decides its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// The object (or an object it names) is malformed: 400, and fixing
    /// the object is the way out.
    Object,
    /// The cluster did not answer a look-up, or answered with an object
    /// the request's author does not own and a stage cannot use: 500, and
    /// the request can be retried.
    Cluster,
    /// The policy's own configuration: 500 (the request is not at fault),
    /// and only fixing the settings helps.
    Configuration,
}

impl Error {
    /// Whose fault the failure is.
    pub(crate) fn fault(&self) -> Fault {
        match self {
            Error::Malformed { .. } => Fault::Object,
            Error::Lookup { .. } | Error::ReadMalformed { .. } => Fault::Cluster,
            Error::Settings(_) => Fault::Configuration,
        }
    }

    /// The answer: an object at fault is a 400 naming what is wrong; the
    /// cluster's or the configuration's fault a 500.
    pub(crate) fn into_outcome(self) -> Outcome {
        match self.fault() {
            Fault::Object => Outcome::reject(self.to_string()),
            Fault::Cluster | Fault::Configuration => {
                Outcome::reject_with_code(self.to_string(), 500)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::fields::FieldPath;
    use crate::request::outcome::Verdict;

    fn field_error() -> FieldError {
        FieldError::new(
            FieldPath::of(&["metadata", "name"]),
            crate::json::fields::Problem::Required,
        )
    }

    fn cluster() -> ObjectRef {
        ObjectRef {
            api_version: "cluster.x-k8s.io/v1beta2".to_owned(),
            kind: "Cluster".to_owned(),
            name: "c".to_owned(),
            namespace: Some("default".to_owned()),
        }
    }

    /// One place maps a failure to its status, by whose fault it is: only
    /// an object at fault is a 400; a look-up and the settings are not the
    /// request's fault, and only a look-up is worth retrying.
    #[test]
    fn each_failure_is_answered_by_whose_fault_it_is() {
        let cases = [
            (
                Error::Malformed {
                    doing: "cannot compute cloud tags",
                    whose: String::new(),
                    error: field_error(),
                },
                Fault::Object,
                400,
            ),
            (
                Error::Lookup {
                    object: Box::new(cluster()),
                    reader: "whose labels become this object's cloud tags".into(),
                    message: "forbidden".to_owned(),
                },
                Fault::Cluster,
                500,
            ),
            (
                Error::ReadMalformed {
                    object: Box::new(cluster()),
                    reader: "whose labels become this object's cloud tags".into(),
                    error: field_error(),
                },
                Fault::Cluster,
                500,
            ),
        ];
        for (error, fault, status) in cases {
            assert_eq!(error.fault(), fault, "{error}");
            let message = error.to_string();
            match error.into_outcome().verdict {
                Verdict::Reject { code, message: m } => {
                    assert_eq!((code, m), (status, message));
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_look_up_failure_names_the_object_and_who_read_it() {
        let error = Error::Lookup {
            object: Box::new(cluster()),
            reader: "the parent of this MachineSet".into(),
            message: "forbidden".to_owned(),
        };
        assert!(
            error
                .to_string()
                .contains("the parent of this MachineSet: forbidden; the request can be retried"),
            "{error}"
        );
    }
}
