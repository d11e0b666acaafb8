//! What can be wrong with the settings that name tags (`cloudTags.prefix`,
//! a profile's `prefix`, `cloudTags.tagKeys`), each kind worded here once.

use crate::json::fields::quoted;

/// The longest prefix, in bytes: room for a company's name and a
/// separator, far below every provider's key ceiling.
pub(crate) const PREFIX_MAX: usize = 64;

/// What is wrong with a tag-key prefix or a `cloudTags.tagKeys` entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TagKeyProblem {
    /// An empty prefix would make every entry of a tag field the policy's.
    #[error(
        "empty prefix: the prefix marks which tags the policy owns, so every user tag would be \
         removed; use e.g. \"plexsphere:\" (the default) or omit the field"
    )]
    EmptyPrefix,
    /// A prefix over `PREFIX_MAX` bytes.
    #[error("the prefix is {0} bytes, at most {PREFIX_MAX} are allowed; use e.g. \"acme:\"")]
    PrefixTooLong(usize),
    /// A prefix with a control character, which no cloud admits in a key.
    #[error(
        "{} contains the control character U+{:04X}, which no cloud admits in a tag key; \
         remove it",
        quoted(.prefix),
        u32::from(*.character)
    )]
    PrefixControl {
        /// The prefix as written.
        prefix: String,
        /// The first control character.
        character: char,
    },
    /// A `tagKeys` entry for a label that is not opted in.
    #[error(
        "{} is not in cloudTags.propagatingLabels, so it never becomes a tag; add it there or \
         remove this entry",
        quoted(.0)
    )]
    NotOptedIn(String),
    /// A `tagKeys` entry with an empty body.
    #[error(
        "empty tag-key body for label {}: give the name its tag gets after the prefix, e.g. \
         \"cost-center\", or remove the entry to keep the label's own key",
        quoted(.0)
    )]
    EmptyBody(String),
    /// Two opted-in labels whose tag keys would have one body.
    #[error(
        "labels {} and {} both get the tag-key body {}{}, so they would write one tag; give \
         each label a body of its own",
        quoted(.first),
        quoted(.second),
        quoted(.body),
        own_key_note(.first, .second, .body)
    )]
    SharedBody {
        /// The label that sorts first.
        first: String,
        /// The other label.
        second: String,
        /// The body both would get.
        body: String,
    },
}

/// Which of two labels sharing `body` has it as its own key (no entry).
fn own_key_note(first: &str, second: &str, body: &str) -> String {
    [first, second]
        .into_iter()
        .find(|label| *label == body)
        .map(|label| {
            format!(
                " ({} has no tagKeys entry, so its body is its own key)",
                quoted(label)
            )
        })
        .unwrap_or_default()
}

impl From<TagKeyProblem> for crate::settings_problem::SettingsProblemKind {
    fn from(problem: TagKeyProblem) -> Self {
        Self::Checked(problem.to_string())
    }
}
