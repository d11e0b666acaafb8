//! What a live audit checks before it judges by a policy, and `--fix`
//! before its first write, so that nothing is written that could not be
//! meant:
//! - (where a policy is read: [`deployed::this_module`]) the policy runs
//!   this module: another module's settings and rules say nothing this
//!   runner can judge by;
//! - with `--fix` (and `--dry-run`), the policy is active and its webhook
//!   registered ([`active`]): a write that no webhook sees changes nothing;
//! - with `--fix`, the runner may `patch` each kind it is to write
//!   ([`Access`]), asked of the API server by a SelfSubjectAccessReview,
//!   so a kind it may not write ends `forbidden` without a request.

use std::collections::BTreeMap;

use super::api::{Api, Resource};
use super::deployed::{self, Deployed};

/// Why `--fix` may not write through `policy`, if it may not: the policy
/// is not active (kubewarden-controller's `status.policyStatus`), or its
/// webhook is not registered, so a write would pass unjudged.
pub(super) fn active(api: &Api, policy: &mut Deployed) -> Option<String> {
    let name = policy.name.clone();
    if let Some(status) = policy.status.as_deref().filter(|s| *s != "active") {
        return Some(format!(
            "ClusterAdmissionPolicy {name} is {status}, not active (`kubectl get \
             clusteradmissionpolicy {name}`): its policy server does not serve it yet"
        ));
    }
    deployed::registration(api, policy)
        .err()
        .map(|why| format!("the webhook of ClusterAdmissionPolicy {name}: {why}"))
}

/// Whether the runner may `patch` each kind (and namespace) it is to
/// write, asked once each: first across every namespace, which one
/// ClusterRole answers; then, when that is refused, in the namespace
/// itself, which a RoleBinding may grant.
#[derive(Default)]
pub(super) struct Access {
    answers: BTreeMap<(Resource, Option<String>), Result<(), String>>,
}

impl Access {
    /// `Err` with the refusal when the runner may not patch `resource` in
    /// `namespace`. A review that fails says nothing: the write is sent,
    /// and its answer tells.
    pub(super) fn may_patch(
        &mut self,
        api: &Api,
        resource: &Resource,
        namespace: Option<&str>,
    ) -> Result<(), String> {
        let everywhere = self.ask(api, resource, None);
        match (everywhere, namespace.filter(|_| resource.namespaced)) {
            (Ok(()), _) => Ok(()),
            (Err(_), Some(namespace)) => self.ask(api, resource, Some(namespace)),
            (refused, None) => refused,
        }
    }

    fn ask(
        &mut self,
        api: &Api,
        resource: &Resource,
        namespace: Option<&str>,
    ) -> Result<(), String> {
        let key = (resource.clone(), namespace.map(str::to_owned));
        self.answers
            .entry(key)
            .or_insert_with(|| match api.may("patch", resource, namespace) {
                Ok((true, _)) | Err(_) => Ok(()),
                Ok((false, reason)) => {
                    let place = match namespace {
                        Some(namespace) => format!(" in namespace {namespace}"),
                        None => String::new(),
                    };
                    let reason = match reason.as_str() {
                        "" => String::new(),
                        reason => format!(" ({reason})"),
                    };
                    Err(format!(
                        "forbidden: needs verb patch on {}{place}{reason}; a \
                         SelfSubjectAccessReview said so before any write, and no write was sent",
                        resource.name()
                    ))
                }
            })
            .clone()
    }
}
