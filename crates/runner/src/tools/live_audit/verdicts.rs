//! What the policies that found an object deviating make of it once
//! `--fix` wrote it: their verdict on it as it is now, and, when admission
//! left it deviating, what to check.

use cluster_audit::Status;
use cluster_audit::live::{Parents, evaluate};
use metadata_propagation_core::outcome::Verdict;
use serde_json::Value;

use super::api::Resource;
use super::cluster_reads::{Cluster, ClusterReads};
use super::deployed::Audit;
use super::fix::Judgement;

/// The verdict of every policy that found the object deviating on it as it
/// is now.
pub(super) fn judge(
    audits: &[Audit],
    flagged: &[usize],
    now: &Value,
    cluster: Cluster,
    parents: &Parents,
) -> Judgement {
    let Cluster {
        api,
        discovery,
        read,
    } = cluster;
    let mut deviations = Vec::new();
    for &p in flagged {
        let audit = &audits[p];
        let reads = ClusterReads {
            api,
            discovery,
            granted: &audit.policy.context_aware,
            read,
        };
        let evaluation = evaluate(now, &audit.policy.settings, parents, &reads);
        match Status::of(evaluation.as_ref()) {
            Status::Compliant | Status::NotEvaluated => {}
            Status::Deviates => {
                deviations.extend(evaluation.into_iter().flat_map(|e| e.deviations));
            }
            Status::Rejected => {
                let message = match evaluation.map(|e| e.outcome.verdict) {
                    Some(Verdict::Reject { message, .. }) => message,
                    _ => String::new(),
                };
                return Judgement::Rejected(format!("policy {}: {message}", audit.policy.name));
            }
        }
    }
    match deviations.is_empty() {
        true => Judgement::Compliant,
        false => Judgement::Deviates(deviations),
    }
}

/// What to check when admission left an object of `resource` deviating.
pub(super) fn hint(audits: &[Audit], flagged: &[usize], resource: &Resource) -> String {
    let checks: Vec<String> = flagged
        .iter()
        .map(|&p| {
            let policy = &audits[p].policy;
            let name = &policy.name;
            if policy.mode != "protect" {
                format!("ClusterAdmissionPolicy {name} is in {} mode, where its patches are not applied", policy.mode)
            } else if !policy.mutating {
                format!("ClusterAdmissionPolicy {name} has spec.mutating false: its patches are refused")
            } else if !policy.rules.iter().any(|rule| rule.sends_updates_of(resource)) {
                format!("the rules of ClusterAdmissionPolicy {name} send no UPDATE of {}", resource.name())
            } else {
                format!(
                    "check that the webhook of ClusterAdmissionPolicy {name} (clusterwide-{name}) is registered and \
                     its policy server serves it, with the settings audited here; policy-server answers a look-up \
                     from what it read in the last 5 s, so a parent changed just before is seen as it was: run again"
                )
            }
        })
        .collect();
    checks.join("; ")
}
