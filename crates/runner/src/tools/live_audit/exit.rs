//! The exit code of `audit --cluster`, for a scheduler (a CronJob's
//! podFailurePolicy, a CI step) to act on without reading the report:
//! nothing left, a person needed, bad input, or run again. When a person
//! is needed and the run was also cut short, a person is needed: running
//! again would not remove that.

/// How a run ended (docs/validate-and-audit.md, "Exit codes").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Exit {
    /// 0: nothing left to do: nothing deviates, or each deviating object
    /// was fixed (a dry run: would be), made compliant by another writer,
    /// or deleted.
    InLine,
    /// 1: something needs a person: an object deviates (without `--fix`),
    /// is rejected, ended `unchanged`, `forbidden`, `conflict` or
    /// `rejected`; a kind could not be listed; the policy was not active.
    NeedsPerson,
    /// 2: bad input: no cluster, a policy that cannot be read or is
    /// another module's, settings it refuses.
    BadInput,
    /// 3: cut short (`--max-objects`, a signal) or a request failed on the
    /// way (a timeout, a 5xx): running again does the rest.
    RunAgain,
}

impl Exit {
    pub(super) fn code(self) -> u8 {
        match self {
            Exit::InLine => 0,
            Exit::NeedsPerson => 1,
            Exit::BadInput => 2,
            Exit::RunAgain => 3,
        }
    }

    pub(super) fn as_str(self) -> &'static str {
        match self {
            Exit::InLine => "in-line",
            Exit::NeedsPerson => "needs-a-person",
            Exit::BadInput => "bad-input",
            Exit::RunAgain => "run-again",
        }
    }

    /// The exit of a run that found `person` something for a person and
    /// `again` something a next run does.
    pub(super) fn of(person: bool, again: bool) -> Exit {
        match (person, again) {
            (true, _) => Exit::NeedsPerson,
            (false, true) => Exit::RunAgain,
            (false, false) => Exit::InLine,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_person_comes_before_running_again() {
        assert_eq!(Exit::of(false, false).code(), 0);
        assert_eq!(Exit::of(true, false).code(), 1);
        assert_eq!(Exit::of(true, true).code(), 1);
        assert_eq!(Exit::of(false, true).code(), 3);
        assert_eq!(Exit::BadInput.code(), 2);
    }
}
