//! `--fix`: each deviating object gets one write that changes nothing by
//! itself, a merge patch of the resourceVersion audited, so the admission
//! chain in front of the cluster (the deployed policy's webhook, with the
//! deployed settings) makes the change; the runner never writes a patch it
//! computed. The write's answer, the object as the API server stored it,
//! is judged again, and the object ends in one [`Outcome`]: one request
//! per deviating object. A write that finds the object moved on (409)
//! re-reads it, judges it again and tries again, [`TRIES`] writes at most:
//! someone else's write is never overwritten.

use std::fmt;

use serde_json::{Value, json};

use super::api::{Api, Failure, Resource};

/// Writes of one object at most: the first, and those after each that
/// found the object moved on (docs/validate-and-audit.md, `conflict`).
pub(super) const TRIES: u32 = 3;

/// How one deviating object ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Outcome {
    /// As stored by the write, it keeps the contract.
    Fixed,
    /// A dry run: admission would bring it into line.
    WouldFix,
    /// Admission left it deviating.
    Unchanged,
    /// It moved on under every write.
    Conflict,
    /// Deleted before it could be written.
    Gone,
    /// The runner may not write (or read) it.
    Forbidden,
    /// Admission refused the write.
    Rejected,
    /// Anything else: the API server's or the connection's message.
    Error,
    /// Not written: `--max-objects` reached, or a signal (SIGINT, SIGTERM).
    NotAttempted,
}

/// What an outcome leaves to do, which the run's exit code says
/// ([`super::exit::Exit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Left {
    /// Nothing: in line, or deleted.
    Nothing,
    /// A person must look: admission, RBAC or another writer stands in the way.
    Person,
    /// Running again brings it into line: it was not written, or the
    /// request failed on the way (a timeout, a 5xx).
    RunAgain,
}

impl Outcome {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Outcome::Fixed => "fixed",
            Outcome::WouldFix => "would-fix",
            Outcome::Unchanged => "unchanged",
            Outcome::Conflict => "conflict",
            Outcome::Gone => "gone",
            Outcome::Forbidden => "forbidden",
            Outcome::Rejected => "rejected",
            Outcome::Error => "error",
            Outcome::NotAttempted => "not-attempted",
        }
    }

    /// Whether the object is (or, in a dry run, would be) in line.
    pub(super) fn succeeded(self) -> bool {
        matches!(self, Outcome::Fixed | Outcome::WouldFix)
    }

    /// What is left to do after it: a deleted object needs nothing, as one
    /// in line does (docs/validate-and-audit.md, the outcomes' table).
    pub(super) fn left(self) -> Left {
        match self {
            Outcome::Fixed | Outcome::WouldFix | Outcome::Gone => Left::Nothing,
            Outcome::Unchanged | Outcome::Conflict | Outcome::Forbidden | Outcome::Rejected => {
                Left::Person
            }
            Outcome::Error | Outcome::NotAttempted => Left::RunAgain,
        }
    }

    /// Every outcome, in the order reports count them.
    pub(super) const ALL: [Outcome; 9] = [
        Outcome::Fixed,
        Outcome::WouldFix,
        Outcome::Gone,
        Outcome::Unchanged,
        Outcome::Conflict,
        Outcome::Forbidden,
        Outcome::Rejected,
        Outcome::Error,
        Outcome::NotAttempted,
    ];
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One object's ending.
#[derive(Debug, Clone)]
pub(super) struct Done {
    /// `Kind namespace/name (apiVersion)`, as the audit report names it.
    pub(super) id: String,
    pub(super) outcome: Outcome,
    pub(super) message: String,
    /// Writes sent (0 when none was).
    pub(super) attempts: u32,
    /// What admission changed (or would change): a JSON patch from the
    /// object as read before the write to the object after it.
    pub(super) changes: Value,
    /// The object as the write stored it (the write's answer).
    pub(super) after: Option<Value>,
}

impl Done {
    /// An ending with no write sent: not attempted, forbidden by the
    /// pre-flight, or a kind discovery cannot place.
    pub(super) fn unwritten(id: String, outcome: Outcome, message: String) -> Done {
        Done {
            id,
            outcome,
            message,
            attempts: 0,
            changes: json!([]),
            after: None,
        }
    }
}

/// What `--fix` did in one run.
#[derive(Debug, Default)]
pub(super) struct FixRun {
    /// Each written (or not) object's ending, in the order they were taken.
    pub(super) done: Vec<Done>,
    /// The deviating objects the audit found, each once however many
    /// policies found it: the run's one count of them.
    pub(super) deviating: usize,
    /// Children that deviated only once their parent was written (from
    /// what admission wrote on it), written after it in this run.
    pub(super) after_parent: usize,
    /// Why nothing was written, when the pre-flight refused the fix.
    pub(super) refused: Vec<String>,
}

/// What the audit makes of an object as read now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Judgement {
    Compliant,
    /// The deviations, as validate mode words them.
    Deviates(Vec<String>),
    /// Rejected for another reason (a parent it cannot read).
    Rejected(String),
}

/// The writes of one run.
pub(super) struct Fixer<'a> {
    pub(super) api: &'a Api,
    pub(super) dry_run: bool,
    /// The audit's verdict on an object as read now.
    pub(super) judge: &'a dyn Fn(&Value) -> Judgement,
    /// What to check when admission leaves `resource` as it was: the
    /// policies' mode, rules and webhook.
    pub(super) hint: &'a dyn Fn(&Resource) -> String,
}

/// The first write of `object` (as audited): what [`Fixer::fix`] makes of
/// its answer. It needs nothing but the API, so the first writes of objects
/// that do not wait on one another go together, from threads of their own.
pub(super) fn first_write(
    api: &Api,
    dry_run: bool,
    resource: &Resource,
    object: &Value,
) -> Result<Value, Failure> {
    let (namespace, name) = namespace_and_name(object);
    api.touch(resource, namespace, name, resource_version(object), dry_run)
}

fn namespace_and_name(object: &Value) -> (Option<&str>, &str) {
    let metadata = &object["metadata"];
    let namespace = metadata["namespace"].as_str().filter(|ns| !ns.is_empty());
    (namespace, metadata["name"].as_str().unwrap_or_default())
}

fn resource_version(object: &Value) -> &str {
    object["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
}

impl Fixer<'_> {
    /// Brings `object` (as audited, deviating) into line, from the answer
    /// to its first write ([`first_write`]).
    pub(super) fn fix(
        &self,
        id: String,
        resource: &Resource,
        object: &Value,
        first: Result<Value, Failure>,
    ) -> Done {
        let (namespace, name) = namespace_and_name(object);
        let end = |outcome, message: String, attempts, changes| Done {
            id: id.clone(),
            outcome,
            message,
            attempts,
            changes,
            after: None,
        };
        let mut current = object.clone();
        let mut answer = Some(first);
        let mut attempts = 0;
        while attempts < TRIES {
            attempts += 1;
            let written = answer.take().unwrap_or_else(|| {
                let version = resource_version(&current);
                (self.api).touch(resource, namespace, name, version, self.dry_run)
            });
            // The failure, and the verb of the request that failed.
            let (failure, verb) = match written {
                // What a dry run answers is the object admission would store.
                Ok(answer) if self.dry_run => {
                    let done = self.judged(resource, &current, &answer, Outcome::WouldFix);
                    return end(done.0, done.1, attempts, done.2);
                }
                // The write's answer is the object as stored, after the
                // whole admission chain: nothing to read again.
                Ok(stored) => {
                    let done = self.judged(resource, &current, &stored, Outcome::Fixed);
                    return Done {
                        after: Some(stored),
                        ..end(done.0, done.1, attempts, done.2)
                    };
                }
                // The last try refused: nothing more is written, so nothing
                // more is read.
                Err(failure) if failure.code == Some(409) && attempts == TRIES => break,
                Err(failure) if failure.code == Some(409) => {
                    // Someone else wrote it since it was read: read it again,
                    // and write again only if it still deviates.
                    match self.api.get(resource, namespace, name) {
                        Ok(read) => {
                            if (self.judge)(&read) == Judgement::Compliant {
                                let message =
                                    "compliant after another writer's change; nothing written"
                                        .to_owned();
                                return end(Outcome::Fixed, message, attempts, json!([]));
                            }
                            current = read;
                            continue;
                        }
                        Err(failure) => (failure, "get"),
                    }
                }
                Err(failure) => (failure, "patch"),
            };
            let (outcome, message) = classify(&failure, verb, resource);
            return end(outcome, message, attempts, json!([]));
        }
        let message = format!(
            "it changed under each of {attempts} writes (someone else keeps writing it); run --fix again later"
        );
        end(Outcome::Conflict, message, attempts, json!([]))
    }

    /// The outcome of a write whose result is `after`: `success` when the
    /// audit finds it in line, else `unchanged`; the message, and the
    /// changes from `before`.
    fn judged(
        &self,
        resource: &Resource,
        before: &Value,
        after: &Value,
        success: Outcome,
    ) -> (Outcome, String, Value) {
        let changes = changes(before, after);
        match (self.judge)(after) {
            Judgement::Compliant => {
                let verb = if success == Outcome::WouldFix {
                    "would change"
                } else {
                    "changed"
                };
                (success, count(&changes, verb), changes)
            }
            judgement => {
                let message = self.left_deviating(resource, &judgement, &changes);
                (Outcome::Unchanged, message, changes)
            }
        }
    }

    fn left_deviating(
        &self,
        resource: &Resource,
        judgement: &Judgement,
        changes: &Value,
    ) -> String {
        let wrote = match changes.as_array().map_or(0, Vec::len) {
            0 => "admission changed nothing".to_owned(),
            n => format!(
                "admission changed {n} {} but it still deviates",
                plural(n, "field", "fields")
            ),
        };
        let why = match judgement {
            Judgement::Deviates(deviations) => deviations.join("; "),
            Judgement::Rejected(message) => message.clone(),
            Judgement::Compliant => String::new(),
        };
        format!("{wrote}: {why}; {}", (self.hint)(resource))
    }
}

/// The outcome of a write or read the API server refused.
/// How a request of `verb` on `resource` that failed ends the object.
/// A 4xx is admission's refusal, but for the client's own (401: not
/// authenticated, 408 and 429: slow down), which are errors to run again.
fn classify(failure: &Failure, verb: &str, resource: &Resource) -> (Outcome, String) {
    match failure.code {
        Some(404) => (
            Outcome::Gone,
            "deleted before it could be written".to_owned(),
        ),
        Some(403) => (
            Outcome::Forbidden,
            format!(
                "forbidden: needs verb {verb} on {} ({failure})",
                resource.name()
            ),
        ),
        Some(code)
            if failure.message.contains("admission webhook")
                || ((400..500).contains(&code) && !matches!(code, 401 | 408 | 429)) =>
        {
            (Outcome::Rejected, failure.message.clone())
        }
        _ => (Outcome::Error, failure.to_string()),
    }
}

/// What admission changed: a JSON patch from `before` to `after`, without
/// the bookkeeping every write moves (resourceVersion, generation,
/// managedFields) and without `status`: a write of the object never changes
/// its status (the status subresource does), so a status change between the
/// read and the write is a controller's, not admission's.
pub(super) fn changes(before: &Value, after: &Value) -> Value {
    let strip = |object: &Value| {
        let mut object = object.clone();
        if let Some(map) = object.as_object_mut() {
            map.remove("status");
        }
        if let Some(metadata) = object["metadata"].as_object_mut() {
            for key in ["resourceVersion", "generation", "managedFields"] {
                metadata.remove(key);
            }
        }
        object
    };
    serde_json::to_value(json_patch::diff(&strip(before), &strip(after)))
        .unwrap_or_else(|_| json!([]))
}

fn count(changes: &Value, verb: &str) -> String {
    let n = changes.as_array().map_or(0, Vec::len);
    format!("admission {verb} {n} {}", plural(n, "field", "fields"))
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::super::api::fake_api_server::{Answer, Seen, fake_api, machines, ok, status};
    use super::*;

    fn failure(code: u16, message: &str) -> Failure {
        Failure {
            code: Some(code),
            message: message.to_owned(),
        }
    }

    #[test]
    fn refusals_become_named_outcomes() {
        let (outcome, message) =
            classify(&failure(403, "machines is forbidden"), "patch", &machines());
        assert_eq!(outcome, Outcome::Forbidden);
        assert!(
            message.contains("needs verb patch on machines.cluster.x-k8s.io"),
            "{message}"
        );
        let (_, message) = classify(&failure(403, "forbidden"), "get", &machines());
        assert!(message.contains("needs verb get on machines"), "{message}");
        for code in [401, 408, 429] {
            assert_eq!(
                classify(&failure(code, "slow down"), "patch", &machines()).0,
                Outcome::Error,
                "{code}"
            );
        }
        assert_eq!(
            classify(&failure(404, "not found"), "patch", &machines()).0,
            Outcome::Gone
        );
        let denied =
            "admission webhook \"clusterwide-capi.kubewarden.admission\" denied the request: no";
        assert_eq!(
            classify(&failure(400, denied), "patch", &machines()),
            (Outcome::Rejected, denied.to_owned())
        );
        assert_eq!(
            classify(&failure(503, "unavailable"), "patch", &machines()).0,
            Outcome::Error
        );
        let offline = Failure {
            code: None,
            message: "connection refused".to_owned(),
        };
        assert_eq!(
            classify(&offline, "patch", &machines()),
            (Outcome::Error, "connection refused".to_owned())
        );
    }

    #[test]
    fn a_deleted_object_leaves_nothing_to_do_and_a_refusal_needs_a_person() {
        let left = |outcome: Outcome| outcome.left();
        assert_eq!(left(Outcome::Gone), Left::Nothing);
        assert_eq!(left(Outcome::Fixed), Left::Nothing);
        assert_eq!(left(Outcome::WouldFix), Left::Nothing);
        for outcome in [
            Outcome::Unchanged,
            Outcome::Conflict,
            Outcome::Forbidden,
            Outcome::Rejected,
        ] {
            assert_eq!(left(outcome), Left::Person, "{outcome}");
        }
        assert_eq!(left(Outcome::NotAttempted), Left::RunAgain);
        assert_eq!(left(Outcome::Error), Left::RunAgain);
    }

    /// What `fix` does against a server answering `respond`: the ending,
    /// and the methods of the requests it sent. An object keeps the
    /// contract when it has the label `b`.
    fn fixed(
        respond: impl Fn(&Seen) -> Answer + Send + Sync + 'static,
    ) -> (Done, Vec<String>, BTreeMap<&'static str, usize>) {
        let (api, log) = fake_api(respond);
        let judge = |object: &Value| match object["metadata"]["labels"]["b"].is_string() {
            true => Judgement::Compliant,
            false => Judgement::Deviates(vec!["no label b".to_owned()]),
        };
        let fixer = Fixer {
            api: &api,
            dry_run: false,
            judge: &judge,
            hint: &|_| String::new(),
        };
        let object = json!({"metadata": {"name": "m", "namespace": "default",
                                         "resourceVersion": "1", "labels": {"a": "1"}}});
        let first = first_write(&api, false, &machines(), &object);
        let done = fixer.fix("Machine default/m".to_owned(), &machines(), &object, first);
        let methods = log
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.method.clone())
            .collect();
        (done, methods, api.counts())
    }

    fn stored(version: &str) -> Value {
        json!({"metadata": {"name": "m", "namespace": "default", "resourceVersion": version,
                            "labels": {"a": "1", "b": "2"}}})
    }

    #[test]
    fn a_written_object_is_judged_from_the_writes_answer_without_reading_it_again() {
        let (done, methods, counts) = fixed(|_| ok(&stored("2")));
        assert_eq!(done.outcome, Outcome::Fixed, "{}", done.message);
        assert_eq!(done.after, Some(stored("2")));
        assert_eq!(
            done.changes,
            json!([{"op": "add", "path": "/metadata/labels/b", "value": "2"}])
        );
        assert_eq!(methods, ["PATCH"]);
        assert_eq!(counts, BTreeMap::from([("patch", 1)]));
    }

    #[test]
    fn a_conflict_reads_the_object_again_before_the_next_write() {
        let moved_on = json!({"metadata": {"name": "m", "namespace": "default",
                                           "resourceVersion": "5", "labels": {"a": "1"}}});
        let patches = AtomicUsize::new(0);
        let (done, methods, counts) = fixed(move |seen| match seen.method.as_str() {
            "GET" => ok(&moved_on),
            _ => match patches.fetch_add(1, Ordering::SeqCst) {
                0 => status(409, "the object has been modified", Vec::new()),
                _ => ok(&stored("6")),
            },
        });
        assert_eq!(done.outcome, Outcome::Fixed, "{}", done.message);
        assert_eq!((done.attempts, done.after), (2, Some(stored("6"))));
        assert_eq!(methods, ["PATCH", "GET", "PATCH"]);
        assert_eq!(counts, BTreeMap::from([("get", 1), ("patch", 2)]));
    }

    #[test]
    fn changes_leave_out_the_bookkeeping_of_a_write() {
        let before = json!({"metadata": {"name": "m", "resourceVersion": "1", "generation": 1,
                             "managedFields": [], "labels": {"a": "1"}}});
        let after = json!({"metadata": {"name": "m", "resourceVersion": "2", "generation": 2,
                            "managedFields": [{"manager": "x"}], "labels": {"a": "1", "b": "2"}},
                           "status": {"conditions": [{"observedGeneration": 2}]}});
        assert_eq!(
            changes(&before, &after),
            json!([{"op": "add", "path": "/metadata/labels/b", "value": "2"}])
        );
        assert_eq!(changes(&before, &before), json!([]));
    }
}
