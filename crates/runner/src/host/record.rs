//! The look-ups a policy made, written as the kwctl session that replays
//! them (`run --record-session`): the YAML `kwctl run
//! --record-host-capabilities-interactions` writes, a list of `type:
//! Exchange` entries whose `request` is a `!KubernetesGetResource` document
//! with the policy's field masks, answered by what the host gave the guest.
//! A `Success` payload is the object as the guest received it, already
//! pruned by the masks: kwctl's replay hands the recorded payload back
//! whole, so the same session gives the policy the same bytes under a real
//! kwctl as under policy-server.

use serde::Serialize;

use crate::host::replay::{GetResourceRequest, RecordedRequest};

#[derive(Serialize)]
#[serde(tag = "type")]
enum Entry {
    Exchange { request: String, response: Response },
}

#[derive(Serialize)]
#[serde(tag = "type")]
enum Response {
    Success { payload: String },
    Error { message: String },
}

/// The exchanges of one evaluation, in the order the policy made them.
#[derive(Debug, Default)]
pub struct Recording {
    exchanges: Vec<(GetResourceRequest, Result<String, String>)>,
}

impl Recording {
    /// Records a look-up and the host's answer: the payload handed to the
    /// guest, or the error text (without policy-evaluator's `Callback
    /// evaluation failure: ` prefix, which kwctl adds again on replay).
    pub fn push(&mut self, request: &GetResourceRequest, answer: Result<&[u8], &str>) {
        let answer = answer
            .map(|payload| String::from_utf8_lossy(payload).into_owned())
            .map_err(str::to_owned);
        self.exchanges.push((request.clone(), answer));
    }

    /// The session file: `[]` when the policy looked nothing up (a session
    /// that lets no look-up through).
    pub fn to_yaml(&self) -> String {
        let entries: Vec<Entry> = self
            .exchanges
            .iter()
            .map(|(request, answer)| Entry::Exchange {
                request: serde_norway::to_string(&RecordedRequest::KubernetesGetResource(
                    request.clone(),
                ))
                .expect("a look-up always serialises"),
                response: match answer {
                    Ok(payload) => Response::Success {
                        payload: payload.clone(),
                    },
                    Err(message) => Response::Error {
                        message: message.clone(),
                    },
                },
            })
            .collect();
        serde_norway::to_string(&entries).expect("a session always serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::replay::Replay;
    use std::collections::BTreeSet;

    fn request(name: &str, masks: Option<&[&str]>) -> GetResourceRequest {
        GetResourceRequest {
            api_version: "cluster.x-k8s.io/v1beta2".to_owned(),
            kind: "MachineDeployment".to_owned(),
            name: name.to_owned(),
            namespace: Some("default".to_owned()),
            disable_cache: false,
            field_masks: masks.map(|m| m.iter().map(|s| (*s).to_owned()).collect::<BTreeSet<_>>()),
        }
    }

    #[test]
    fn an_empty_recording_is_an_empty_session() {
        assert_eq!(Recording::default().to_yaml(), "[]\n");
        assert_eq!(Replay::from_yaml("[]\n").unwrap().remaining(), 0);
    }

    #[test]
    fn the_session_has_kwctls_shape() {
        let mut recording = Recording::default();
        recording.push(
            &request("md-0", Some(&["spec.template.metadata", "metadata.labels"])),
            Ok(br#"{"kind":"MachineDeployment","metadata":{"name":"md-0"}}"#),
        );

        assert_eq!(
            recording.to_yaml(),
            "- type: Exchange\n  request: |\n    !KubernetesGetResource\n    \
             api_version: cluster.x-k8s.io/v1beta2\n    kind: MachineDeployment\n    \
             name: md-0\n    namespace: default\n    disable_cache: false\n    \
             field_masks:\n    - metadata.labels\n    - spec.template.metadata\n  \
             response:\n    type: Success\n    \
             payload: '{\"kind\":\"MachineDeployment\",\"metadata\":{\"name\":\"md-0\"}}'\n"
        );
    }

    #[test]
    fn a_recorded_session_replays_the_same_answers() {
        let found = request("md-0", Some(&["metadata.labels"]));
        let missing = request("md-9", None);
        let not_found = "Cannot find cluster.x-k8s.io/v1beta2/MachineDeployment named 'md-9' \
                         inside of namespace 'Some(\"default\")'";
        let payload = br#"{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"MachineDeployment","metadata":{"labels":{"a":"it's"},"name":"md-0"}}"#;
        let mut recording = Recording::default();
        recording.push(&found, Ok(payload));
        recording.push(&missing, Err(not_found));

        let mut replay = Replay::from_yaml(&recording.to_yaml()).unwrap();

        assert_eq!(replay.answer(&found).unwrap(), payload.to_vec());
        assert_eq!(replay.answer(&missing).unwrap_err().to_string(), not_found);
        assert_eq!(replay.remaining(), 0);
    }
}
