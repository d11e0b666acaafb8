//! What a module answered the benchmark's request, summarised: the verdict,
//! the patch the host builds from a mutated object, the warnings and audit
//! annotations, and the look-ups it made. Every evaluation must answer the
//! same.

use anyhow::{Context, Result};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Serialize;
use serde_json::Value;

use crate::host::request::AdmissionRequest;
use crate::host::response::PolicyResponse;

/// What the module answered (identical on every evaluation).
#[derive(Debug, Serialize)]
pub struct Answer {
    /// Whether the request was admitted.
    pub accepted: bool,
    /// The status code, when the module set one.
    pub code: Option<u16>,
    /// Whether the module returned a mutated object.
    pub mutated: bool,
    /// Operations in the JSONPatch the host built from the mutated object.
    pub patch_operations: usize,
    /// Warnings returned.
    pub warnings: usize,
    /// Audit annotations returned.
    pub audit_annotations: usize,
    /// Look-ups answered from the replay session per evaluation.
    pub lookups: usize,
    /// Recorded exchanges an evaluation left unused.
    pub unreplayed: usize,
    /// Size of the guest's reply.
    pub reply_bytes: usize,
}

impl Answer {
    /// The answer in `reply` to `request`, after `lookups` replayed
    /// exchanges with `unreplayed` left over.
    pub fn new(
        reply: &[u8],
        request: &AdmissionRequest,
        lookups: usize,
        unreplayed: usize,
    ) -> Result<Answer> {
        let response = policy_response(reply)?;
        let mutated = response.mutated_object.is_some();
        let admission = request.respond(response);
        let patch_operations = match &admission.patch {
            None => 0,
            Some(patch) => {
                let bytes = STANDARD.decode(patch)?;
                serde_json::from_slice::<Vec<Value>>(&bytes)?.len()
            }
        };
        Ok(Answer {
            accepted: admission.allowed,
            code: admission.status.and_then(|s| s.code),
            mutated,
            patch_operations,
            warnings: admission.warnings.map_or(0, |w| w.len()),
            audit_annotations: admission.audit_annotations.map_or(0, |a| a.len()),
            lookups,
            unreplayed,
            reply_bytes: reply.len(),
        })
    }

    /// One line for people.
    pub fn summary(&self) -> String {
        let mut parts = vec![
            if self.accepted {
                "accepted"
            } else {
                "rejected"
            }
            .to_owned(),
        ];
        if let Some(code) = self.code {
            parts.push(format!("code {code}"));
        }
        if self.mutated {
            parts.push(format!(
                "mutated ({})",
                plural(self.patch_operations, "patch operation")
            ));
        }
        parts.push(plural(self.warnings, "warning"));
        parts.push(plural(self.audit_annotations, "audit annotation"));
        parts.push(plural(self.lookups, "look-up"));
        parts.push(format!("{} reply bytes", self.reply_bytes));
        parts.join(", ")
    }
}

/// `1 thing`, `0 things`, `2 things`.
pub fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// The guest's reply decoded as the host decodes it.
pub fn policy_response(reply: &[u8]) -> Result<PolicyResponse> {
    serde_json::from_slice(reply).with_context(|| {
        format!(
            "invalid response from policy: {}",
            String::from_utf8_lossy(reply)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_summarises_the_guest_reply() {
        let reply = br#"{"accepted":true,"message":null,"code":null,"mutated_object":{"a":1,"b":2},"audit_annotations":{"node-labels":""},"warnings":["w1","w2"]}"#;
        let request = AdmissionRequest::from_document(serde_json::json!({
            "uid": "u", "kind": {}, "resource": {}, "operation": "UPDATE", "userInfo": {},
            "object": {"a": 1}}))
        .unwrap();

        let answer = Answer::new(reply, &request, 1, 0).unwrap();

        assert_eq!(
            answer.summary(),
            format!(
                "accepted, mutated (1 patch operation), 2 warnings, 1 audit annotation, \
                 1 look-up, {} reply bytes",
                reply.len()
            )
        );
    }
}
