//! Host-capability replay sessions in kwctl's format: the YAML list of
//! `type: Exchange` entries `kwctl run --record-host-capabilities-interactions`
//! writes, each `request` a string holding a document tagged
//! `!KubernetesGetResource` (the only type understood; any other is refused
//! on load, naming the entry). Answered strictly in order, as kwctl
//! `callback_handler/proxy.rs` does.

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

use crate::host::field_mask;

/// A `kubernetes/get_resource` look-up: the payload the guest sends (SDK
/// `GetResourceRequest`) and the body of a recorded `!KubernetesGetResource`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GetResourceRequest {
    /// `apiVersion` of the resource (`v1` for the core group).
    pub api_version: String,
    /// `kind` of the resource.
    pub kind: String,
    /// Name of the resource.
    pub name: String,
    /// Namespace of a namespaced resource; `None` for cluster-scoped ones.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Whether the policy asked to bypass the host's 5 s cache.
    #[serde(default)]
    pub disable_cache: bool,
    /// Dot paths to keep in the answer; `None` (or `null`) for the whole
    /// object. Compared as a set, so order does not matter.
    #[serde(default)]
    pub field_masks: Option<BTreeSet<String>>,
}

impl fmt::Display for GetResourceRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{} {}", self.api_version, self.kind, self.name)?;
        match &self.namespace {
            Some(namespace) => write!(f, " in namespace {namespace}")?,
            None => write!(f, " (cluster-scoped)")?,
        }
        write!(f, " (disable_cache: {}, field_masks: ", self.disable_cache)?;
        match &self.field_masks {
            Some(masks) => {
                let masks: Vec<&str> = masks.iter().map(String::as_str).collect();
                write!(f, "[{}])", masks.join(", "))
            }
            None => write!(f, "none)"),
        }
    }
}

/// The request types a replay file may hold (kwctl `CallbackRequestType`,
/// serialised as a YAML-tagged enum).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum RecordedRequest {
    KubernetesGetResource(GetResourceRequest),
}

/// A recorded answer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "type")]
enum RecordedResponse {
    /// The host answered; `payload` is the JSON text returned to the guest.
    Success { payload: String },
    /// The host failed; `message` is the error text.
    Error { message: String },
}

/// One line of the session file.
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum RawEntry {
    Exchange {
        request: String,
        response: RecordedResponse,
    },
}

#[derive(Debug)]
struct Exchange {
    request: GetResourceRequest,
    response: RecordedResponse,
    /// A `Success` payload parsed once, so an answer is pruned from a
    /// cached object, as policy-server prunes its cached one.
    object: Option<Value>,
}

/// Why a replay file could not be loaded or a look-up could not be answered.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ReplayError {
    /// The file is not a YAML list of `type: Exchange` entries.
    #[error("replay session is not a list of `type: Exchange` entries: {0}")]
    Parse(String),
    /// An entry's `request` string is not a `!KubernetesGetResource` document.
    #[error(
        "replay session entry {index}: request is not a !KubernetesGetResource document: {reason}"
    )]
    Request {
        /// Zero-based position of the entry in the file.
        index: usize,
        /// The YAML error.
        reason: String,
    },
    /// Every entry has been consumed (kwctl's wording).
    #[error("the list of recorded responses is empty")]
    Exhausted,
    /// The next entry records a different request (kwctl's wording).
    #[error("Replay error: unexpected request. Was expecting {expected}, got {received} instead")]
    Unexpected {
        /// The request recorded in the next entry.
        expected: Box<GetResourceRequest>,
        /// The request the policy made.
        received: Box<GetResourceRequest>,
    },
    /// The entry matched and recorded a host error; this is its message.
    #[error("{0}")]
    Recorded(String),
}

/// A loaded session: every recorded exchange, in order, and the position
/// of the next one to replay. [`Replay::rewind`] starts it over, so a
/// benchmark can replay the same exchanges on every evaluation.
#[derive(Debug)]
pub struct Replay {
    exchanges: Vec<Exchange>,
    next: usize,
    apply_field_masks: bool,
}

impl Replay {
    /// Parses a kwctl session file.
    pub fn from_yaml(text: &str) -> Result<Replay, ReplayError> {
        let raw: Vec<RawEntry> =
            serde_norway::from_str(text).map_err(|e| ReplayError::Parse(e.to_string()))?;
        let exchanges = raw
            .into_iter()
            .enumerate()
            .map(|(index, RawEntry::Exchange { request, response })| {
                let RecordedRequest::KubernetesGetResource(request) =
                    serde_norway::from_str(&request).map_err(|e| ReplayError::Request {
                        index,
                        reason: e.to_string(),
                    })?;
                let object = match &response {
                    RecordedResponse::Success { payload } => serde_json::from_str(payload).ok(),
                    RecordedResponse::Error { .. } => None,
                };
                Ok(Exchange {
                    request,
                    response,
                    object,
                })
            })
            .collect::<Result<Vec<_>, ReplayError>>()?;
        Ok(Replay {
            exchanges,
            next: 0,
            apply_field_masks: true,
        })
    }

    /// Answers `request` from the next entry, consuming it whether or not it
    /// matches (as kwctl does). A match returns the recorded object, pruned
    /// by the request's field masks as policy-evaluator prunes a live
    /// object ([`crate::host::field_mask`]) and serialised again (a
    /// payload that is not JSON is returned as recorded), or the recorded
    /// error message.
    pub fn answer(&mut self, request: &GetResourceRequest) -> Result<Vec<u8>, ReplayError> {
        let exchange = self
            .exchanges
            .get(self.next)
            .ok_or(ReplayError::Exhausted)?;
        self.next += 1;
        if exchange.request != *request {
            return Err(ReplayError::Unexpected {
                expected: Box::new(exchange.request.clone()),
                received: Box::new(request.clone()),
            });
        }
        match (&exchange.response, &exchange.object) {
            // As policy-server answers from its cache: a copy of the object,
            // pruned when there are masks, serialised for the guest.
            (RecordedResponse::Success { .. }, Some(object)) => {
                let masks = request
                    .field_masks
                    .as_ref()
                    .filter(|_| self.apply_field_masks);
                let pruned = field_mask::prune(object, masks);
                Ok(serde_json::to_vec(&pruned).expect("JSON values always serialise"))
            }
            (RecordedResponse::Success { payload }, _) => Ok(payload.clone().into_bytes()),
            (RecordedResponse::Error { message }, _) => Err(ReplayError::Recorded(message.clone())),
        }
    }

    /// Without `apply`, answers with the recorded objects whole, whatever
    /// the masks, like a host that ignores them (kwctl's replay does): the
    /// policy's own projection must then keep only what it reads.
    pub fn with_field_masks(mut self, apply: bool) -> Replay {
        self.apply_field_masks = apply;
        self
    }

    /// How many entries have not been replayed.
    pub fn remaining(&self) -> usize {
        self.exchanges.len() - self.next
    }

    /// How many entries have been replayed since the start (or the last rewind).
    pub fn replayed(&self) -> usize {
        self.next
    }

    /// Starts the session over: the next look-up is answered by the first entry.
    pub fn rewind(&mut self) {
        self.next = 0;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A session entry: `!KubernetesGetResource` of `kind` `name`
    /// (`cluster.x-k8s.io/v1beta1`, namespace `default`) with `field_masks`
    /// `masks` (YAML), answered by `response` (a YAML flow map).
    pub fn exchange(kind: &str, name: &str, masks: &str, response: &str) -> String {
        format!(
            "- type: Exchange\n  request: |\n    !KubernetesGetResource\n    \
             api_version: cluster.x-k8s.io/v1beta1\n    kind: {kind}\n    name: {name}\n    \
             namespace: default\n    disable_cache: false\n    field_masks: {masks}\n  \
             response: {response}\n"
        )
    }

    const SESSION: &str = r#"
- type: Exchange
  request: |
    !KubernetesGetResource
    api_version: cluster.x-k8s.io/v1beta1
    kind: MachineDeployment
    name: md-0
    namespace: default
    disable_cache: false
    field_masks: null
  response:
    type: Success
    payload: '{"kind":"MachineDeployment"}'
- type: Exchange
  request: |
    !KubernetesGetResource
    api_version: cluster.x-k8s.io/v1beta1
    kind: MachineDeployment
    name: md-9
    namespace: default
    disable_cache: false
  response:
    type: Error
    message: Cannot find cluster.x-k8s.io/v1beta1/MachineDeployment named 'md-9' inside of namespace 'Some("default")'
- type: Exchange
  request: |
    !KubernetesGetResource
    api_version: v1
    kind: Namespace
    name: team-a
    namespace: null
    disable_cache: true
    field_masks: ["spec.template.metadata", "metadata.labels"]
  response:
    type: Success
    payload: '{"kind":"Namespace"}'
"#;

    fn md(name: &str) -> GetResourceRequest {
        GetResourceRequest {
            api_version: "cluster.x-k8s.io/v1beta1".to_owned(),
            kind: "MachineDeployment".to_owned(),
            name: name.to_owned(),
            namespace: Some("default".to_owned()),
            disable_cache: false,
            field_masks: None,
        }
    }

    fn namespace_with_masks() -> GetResourceRequest {
        GetResourceRequest {
            api_version: "v1".to_owned(),
            kind: "Namespace".to_owned(),
            name: "team-a".to_owned(),
            namespace: None,
            disable_cache: true,
            field_masks: Some(BTreeSet::from([
                "metadata.labels".to_owned(),
                "spec.template.metadata".to_owned(),
            ])),
        }
    }

    #[test]
    fn replay_answers_entries_in_order() {
        let mut replay = Replay::from_yaml(SESSION).unwrap();

        assert_eq!(
            replay.answer(&md("md-0")),
            Ok(br#"{"kind":"MachineDeployment"}"#.to_vec())
        );
        assert_eq!(
            replay.answer(&md("md-9")),
            Err(ReplayError::Recorded(
                r#"Cannot find cluster.x-k8s.io/v1beta1/MachineDeployment named 'md-9' inside of namespace 'Some("default")'"#
                    .to_owned()
            ))
        );
        assert_eq!(
            replay.answer(&namespace_with_masks()),
            Ok(br#"{"kind":"Namespace"}"#.to_vec())
        );
        assert_eq!(replay.remaining(), 0);
    }

    #[test]
    fn replay_parses_missing_field_masks_as_none() {
        let mut replay = Replay::from_yaml(SESSION).unwrap();
        replay.answer(&md("md-0")).unwrap();

        // entry 1 has no `field_masks` key at all
        assert_eq!(replay.exchanges[replay.next].request, md("md-9"));
    }

    #[test]
    fn replay_compares_field_masks_as_sets() {
        let mut replay = Replay::from_yaml(SESSION).unwrap();
        replay.next = 2;

        // recorded as ["spec.template.metadata", "metadata.labels"]
        assert!(replay.answer(&namespace_with_masks()).is_ok());
    }

    #[test]
    fn replay_prunes_a_masked_answer_like_the_host() {
        let session = exchange(
            "MachineDeployment",
            "md-0",
            "[metadata.annotations, spec.template.metadata.labels]",
            r#"{type: Success, payload: '{"kind":"MachineDeployment","metadata":{"name":"md-0","labels":{"a":"1"}},"spec":{"replicas":1,"template":{"metadata":{"labels":{"b":"2"}},"spec":{}}},"status":{}}'}"#,
        );
        let mut replay = Replay::from_yaml(&session).unwrap();
        let mut request = md("md-0");
        request.field_masks = Some(BTreeSet::from([
            "metadata.annotations".to_owned(),
            "spec.template.metadata.labels".to_owned(),
        ]));

        let answer = replay.answer(&request).unwrap();

        assert_eq!(
            serde_json::from_slice::<Value>(&answer).unwrap(),
            serde_json::json!({"kind": "MachineDeployment",
                               "metadata": {"name": "md-0", "labels": {"a": "1"}},
                               "spec": {"template": {"metadata": {"labels": {"b": "2"}}}}})
        );
    }

    #[test]
    fn replay_rejects_out_of_order_request_naming_both() {
        let mut replay = Replay::from_yaml(SESSION).unwrap();

        let err = replay.answer(&md("md-9")).unwrap_err();

        assert_eq!(
            err.to_string(),
            "Replay error: unexpected request. Was expecting \
             cluster.x-k8s.io/v1beta1/MachineDeployment md-0 in namespace default \
             (disable_cache: false, field_masks: none), got \
             cluster.x-k8s.io/v1beta1/MachineDeployment md-9 in namespace default \
             (disable_cache: false, field_masks: none) instead"
        );
        // the mismatched entry is consumed, as in kwctl
        assert_eq!(replay.remaining(), 2);
    }

    #[test]
    fn replay_rejects_request_differing_only_in_field_masks() {
        let mut replay = Replay::from_yaml(SESSION).unwrap();
        let mut masked = md("md-0");
        masked.field_masks = Some(BTreeSet::from(["metadata.labels".to_owned()]));

        let err = replay.answer(&masked).unwrap_err();

        assert_eq!(
            err.to_string(),
            "Replay error: unexpected request. Was expecting \
             cluster.x-k8s.io/v1beta1/MachineDeployment md-0 in namespace default \
             (disable_cache: false, field_masks: none), got \
             cluster.x-k8s.io/v1beta1/MachineDeployment md-0 in namespace default \
             (disable_cache: false, field_masks: [metadata.labels]) instead"
        );
    }

    #[test]
    fn replay_ignoring_field_masks_answers_whole_objects() {
        let session = SESSION.replace(
            "payload: '{\"kind\":\"Namespace\"}'",
            "payload: '{\"kind\":\"Namespace\",\"spec\":{\"finalizers\":[\"kubernetes\"]}}'",
        );
        let mut replay = Replay::from_yaml(&session).unwrap().with_field_masks(false);
        replay.next = 2;

        assert_eq!(
            replay.answer(&namespace_with_masks()),
            Ok(br#"{"kind":"Namespace","spec":{"finalizers":["kubernetes"]}}"#.to_vec())
        );
    }

    #[test]
    fn replay_ignoring_field_masks_still_matches_them_as_its_help_says() {
        // `--ignore-field-masks` answers whole objects; the entry must still
        // record the masks the policy sends.
        let mut replay = Replay::from_yaml(SESSION).unwrap().with_field_masks(false);
        replay.next = 2;
        let mut other_masks = namespace_with_masks();
        other_masks.field_masks = Some(BTreeSet::from(["metadata.labels".to_owned()]));

        assert!(matches!(
            replay.answer(&other_masks),
            Err(ReplayError::Unexpected { .. })
        ));
    }

    #[test]
    fn replay_rewind_answers_the_same_entries_again() {
        let mut replay = Replay::from_yaml(SESSION).unwrap();
        replay.answer(&md("md-0")).unwrap();
        replay.answer(&md("md-9")).unwrap_err();

        replay.rewind();

        assert_eq!((replay.replayed(), replay.remaining()), (0, 3));
        assert_eq!(
            replay.answer(&md("md-0")),
            Ok(br#"{"kind":"MachineDeployment"}"#.to_vec())
        );
        assert_eq!((replay.replayed(), replay.remaining()), (1, 2));
    }

    #[test]
    fn replay_reports_exhaustion() {
        let mut replay = Replay::from_yaml("[]").unwrap();

        assert_eq!(replay.answer(&md("md-0")), Err(ReplayError::Exhausted));
        assert_eq!(
            ReplayError::Exhausted.to_string(),
            "the list of recorded responses is empty"
        );
    }

    #[test]
    fn replay_display_names_cluster_scoped_resources() {
        assert_eq!(
            namespace_with_masks().to_string(),
            "v1/Namespace team-a (cluster-scoped) (disable_cache: true, \
             field_masks: [metadata.labels, spec.template.metadata])"
        );
    }

    #[test]
    fn replay_rejects_unsupported_request_type_naming_entry() {
        let session = r#"
- type: Exchange
  request: |
    !KubernetesListResourceAll
    api_version: v1
    kind: Namespace
    label_selector: null
    field_selector: null
  response:
    type: Success
    payload: '{}'
"#;

        let err = Replay::from_yaml(session).unwrap_err();

        assert!(
            matches!(err, ReplayError::Request { index: 0, .. }),
            "unexpected error: {err}"
        );
    }

    #[test]
    fn replay_rejects_entries_that_are_not_exchanges() {
        let err = Replay::from_yaml("- type: Other\n").unwrap_err();

        assert!(
            matches!(err, ReplayError::Parse(_)),
            "unexpected error: {err}"
        );
    }
}
