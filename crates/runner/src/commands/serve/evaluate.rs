//! One `POST /validate/<id>` evaluation, as policy-server's `evaluate`
//! runs it (`api/service.rs`): a fresh instance of the policy, `validate`
//! on it, the verdict shaped by the policy's mode, mutation permission and
//! custom message, and one line on stderr. It blocks (the guest and its
//! look-ups are synchronous), so the server runs it on a blocking thread.

use std::collections::BTreeMap;

use crate::commands::serve::bootstrap::Served;
use crate::commands::serve::policies::PolicyMode;
use crate::commands::serve::review;
use crate::host::cluster::Cluster;
use crate::host::engine::INIT_INTERRUPTED;
use crate::host::request::AdmissionRequest;
use crate::host::response::AdmissionResponse;

/// What every request shares: the policies and the API server.
pub struct State {
    /// The loaded policies, by id.
    pub policies: BTreeMap<String, Served>,
    /// What answers their look-ups.
    pub cluster: Cluster,
}

/// Why a request got no AdmissionReview back (policy-server's
/// `EvaluationError`s).
#[derive(Debug, PartialEq, Eq)]
pub enum Failure {
    /// No policy has this id: HTTP 404 `unknown policy: <id>`.
    UnknownPolicy(String),
    /// The instance could not be made: HTTP 500, logged.
    Instance(String),
}

impl State {
    /// Evaluates `request` with policy `id` and answers as policy-server
    /// does.
    pub fn evaluate(
        &self,
        id: &str,
        request: &AdmissionRequest,
    ) -> Result<AdmissionResponse, Failure> {
        let served =
            (self.policies.get(id)).ok_or_else(|| Failure::UnknownPolicy(id.to_owned()))?;
        let uid = request.uid();
        let policy = match served.instantiate(&self.cluster) {
            Ok(policy) => policy,
            // policy-server answers a start function past its deadline
            // with the timeout rejection, unshaped
            Err(e) if e.to_string().contains(INIT_INTERRUPTED) => {
                let response = AdmissionResponse::timed_out(uid);
                eprintln!("{}", log_line(id, &response, None));
                return Ok(response);
            }
            Err(e) => {
                let error = format!("policy {id}: cannot rehydrate the policy: {e}");
                eprintln!("ERROR policy-runner: {error}");
                return Err(Failure::Instance(error));
            }
        };
        let verdict = policy.validate(request, &served.entry.settings);
        let response = review::shape(id, &served.entry, verdict.clone());
        let monitored = (served.entry.policy_mode == PolicyMode::Monitor).then_some(&verdict);
        eprintln!("{}", log_line(id, &response, monitored));
        Ok(response)
    }
}

/// The request's line on stderr: policy, uid, verdict, and in monitor mode
/// what the policy would have answered (policy-server logs it at info).
fn log_line(
    id: &str,
    response: &AdmissionResponse,
    monitored: Option<&AdmissionResponse>,
) -> String {
    let mut line = format!(
        "INFO policy-runner: policy={id} uid={} allowed={}",
        response.uid, response.allowed
    );
    if response.patch.is_some() {
        line.push_str(" mutated=true");
    }
    if let Some(message) = response.status.as_ref().and_then(|s| s.message.as_ref()) {
        line.push_str(&format!(" message={message:?}"));
    }
    if let Some(verdict) = monitored {
        line.push_str(&format!(
            " (monitor mode: the policy answered allowed={}{}{})",
            verdict.allowed,
            if verdict.patch.is_some() {
                " mutated=true"
            } else {
                ""
            },
            (verdict.status.as_ref().and_then(|s| s.message.as_ref()))
                .map_or(String::new(), |m| format!(" message={m:?}"))
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::response::Status;

    fn response(allowed: bool, message: Option<&str>, patch: bool) -> AdmissionResponse {
        AdmissionResponse {
            uid: "u-1".to_owned(),
            allowed,
            patch_type: None,
            patch: patch.then(|| "W10=".to_owned()),
            status: message.map(|m| Status {
                message: Some(m.to_owned()),
                details: None,
                code: None,
            }),
            audit_annotations: None,
            warnings: None,
        }
    }

    #[test]
    fn the_log_line_names_policy_uid_and_verdict() {
        assert_eq!(
            log_line("p", &response(true, None, true), None),
            "INFO policy-runner: policy=p uid=u-1 allowed=true mutated=true"
        );
        assert_eq!(
            log_line("p", &response(false, Some("no"), false), None),
            "INFO policy-runner: policy=p uid=u-1 allowed=false message=\"no\""
        );
        assert_eq!(
            log_line(
                "p",
                &response(true, None, false),
                Some(&response(false, Some("no"), true))
            ),
            "INFO policy-runner: policy=p uid=u-1 allowed=true (monitor mode: the policy \
             answered allowed=false mutated=true message=\"no\")"
        );
    }
}
