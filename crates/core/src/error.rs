//! Why a request cannot be decided, whose fault that is, and the one place
//! a failure becomes a status ([`Error::into_outcome`]).

use crate::fields::FieldError;
use crate::lookup::ObjectRef;
use crate::outcome::Outcome;
use crate::settings_problem::SettingsError;
use std::fmt;

/// Why a request cannot be decided: what failed, and where.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// The request's object is malformed where the CAPI rules read it.
    #[error("cannot propagate Cluster API metadata: {0}")]
    Child(#[from] FieldError),
    /// A CAPI parent is malformed where the contract reads it.
    #[error(
        "cannot propagate Cluster API metadata: parent {parent} of this {family} is malformed: {error}"
    )]
    Parent {
        /// The child's family (`MachineSet`, ...).
        family: &'static str,
        /// The object the malformed field was read from.
        parent: Box<ObjectRef>,
        /// The field and what is wrong with it.
        error: FieldError,
    },
    /// A field the cloud tags are read from (the label set, the provider,
    /// the tag field) is malformed.
    #[error("cannot compute cloud tags: {}{error}", object_prefix(.object))]
    Tags {
        /// The object the field was read from, when its row's messages
        /// name it (an infrastructure object or its Cluster); `None` for a
        /// composite resource, the only object read.
        object: Option<Box<ObjectRef>>,
        /// The field and what is wrong with it.
        error: FieldError,
    },
    /// An object the decision reads could not be read (NotFound is not a
    /// failure: each reader has its answer for it).
    #[error(
        "cannot read {object}, {reader}: {message}; the request can be retried once the policy \
         can read it"
    )]
    Lookup {
        /// The object asked for.
        object: Box<ObjectRef>,
        /// Who asked for it.
        reader: Reader,
        /// The host's error, made readable (the policy crate's
        /// `host_lookup::readable_host_error`).
        message: String,
    },
    /// The settings do not parse (only when `validate_settings`, which
    /// refuses them, was bypassed).
    #[error("policy settings are not valid: {0}")]
    Settings(#[from] SettingsError),
}

/// Who asked for an object that could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reader {
    /// A CAPI rule, for the parent of a child of this family.
    Parent {
        /// The child's family (`MachineSet`, ...).
        family: &'static str,
    },
    /// The cloud tags, for the object whose labels they start from (a
    /// Cluster, a managed resource's composite resource).
    TagSource,
}

impl fmt::Display for Reader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reader::Parent { family } => write!(f, "the parent of this {family}"),
            Reader::TagSource => f.write_str("whose labels become this object's cloud tags"),
        }
    }
}

/// Whose fault a failure is, which decides its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// The object (or an object it names) is malformed: 400, and fixing
    /// the object is the way out.
    Object,
    /// The cluster did not answer a look-up: 500, and the request can be
    /// retried.
    Cluster,
    /// The policy's own configuration: 500 (the request is not at fault),
    /// and only fixing the settings helps.
    Configuration,
}

fn object_prefix(object: &Option<Box<ObjectRef>>) -> String {
    object
        .as_ref()
        .map_or_else(String::new, |object| format!("{object} "))
}

impl Error {
    /// A malformed field the cloud tags read, of `object` (`None`: the
    /// composite resource).
    pub(crate) fn tags(object: Option<ObjectRef>, error: FieldError) -> Self {
        Error::Tags {
            object: object.map(Box::new),
            error,
        }
    }

    /// Whose fault the failure is.
    pub(crate) fn fault(&self) -> Fault {
        match self {
            Error::Child(_) | Error::Parent { .. } | Error::Tags { .. } => Fault::Object,
            Error::Lookup { .. } => Fault::Cluster,
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
    use crate::fields::FieldPath;
    use crate::outcome::Verdict;

    fn field_error() -> FieldError {
        FieldError::new(
            FieldPath::of(&["metadata", "name"]),
            crate::fields::Problem::Required,
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
            (Error::Child(field_error()), Fault::Object, 400),
            (Error::tags(None, field_error()), Fault::Object, 400),
            (
                Error::Lookup {
                    object: Box::new(cluster()),
                    reader: Reader::TagSource,
                    message: "forbidden".to_owned(),
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
            reader: Reader::Parent {
                family: "MachineSet",
            },
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
