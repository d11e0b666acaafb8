//! Listing and judging: the kinds each policy's rules match, each listed
//! once for all policies within the scope, parents' kinds first, and each
//! page judged by every policy whose webhook is called for its objects as
//! it arrives, then dropped ([`cluster_audit::live`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use anyhow::{Result, anyhow, bail};
use cluster_audit::live::{LiveAudit, Parents};
use cluster_audit::tree;
use metadata_propagation_core::request::GroupVersionKind;
use serde_json::Value;

use super::api::{Api, Resource};
use super::cluster_reads::{Cluster, ClusterReads, namespace_labels};
use super::deployed::{Audit, Deployed};
use super::listing::{self, Unlisted};
use super::progress::Listing;
use super::signals::Stop;
use crate::cli::LiveArgs;

/// Every policy's audit of what it is called for, the kinds not listed,
/// those the scope left out, and the possible parents as listed (which
/// `--fix` judges the objects it writes against).
pub(super) struct Judged {
    pub(super) audits: Vec<Audit>,
    pub(super) unlisted: BTreeSet<Unlisted>,
    pub(super) left_out: BTreeSet<String>,
    /// The kinds listed again after their continue token expired.
    pub(super) relisted: BTreeSet<String>,
    pub(super) parents: Parents,
}

/// Lists the kinds each policy's rules match, within the scope (`-n`
/// leaves out cluster-scoped kinds, unless `--cluster-scoped`), each kind
/// once for all policies, parents' kinds first, and judges each page as it
/// arrives. `None` when a signal stopped the listing.
pub(super) fn list_and_judge(
    cluster: Cluster,
    policies: Vec<Deployed>,
    live: &LiveArgs,
    full: bool,
    stop: &Stop,
) -> Result<Option<Judged>> {
    let Cluster {
        api,
        discovery,
        read,
    } = cluster;
    let mut unlisted: BTreeSet<Unlisted> = BTreeSet::new();
    let mut left_out: BTreeSet<String> = BTreeSet::new();
    let mut kinds: Vec<BTreeSet<Resource>> = Vec::new();
    for policy in &policies {
        let (resources, missing) = discovery.borrow_mut().matched(api, &policy.rules);
        unlisted.extend(missing);
        let (resources, outside): (Vec<Resource>, Vec<Resource>) =
            resources.into_iter().partition(|resource| {
                resource.namespaced || live.namespace.is_none() || live.cluster_scoped
            });
        left_out.extend(outside.iter().map(Resource::name));
        kinds.push(resources.into_iter().collect());
    }
    // Parents' kinds first: their objects answer the look-ups of the
    // objects listed after them.
    let mut order: Vec<&Resource> = kinds.iter().flatten().collect();
    order.sort_by_key(|r| (tree::rank(&r.group, &r.kind), *r));
    order.dedup();

    let reads: Vec<ClusterReads> = (policies.iter())
        .map(|policy| ClusterReads {
            api,
            discovery,
            granted: &policy.context_aware,
            read,
        })
        .collect();
    let mut judges: Vec<LiveAudit> = (policies.iter().zip(&reads))
        .map(|(policy, reads)| LiveAudit::new(&policy.settings, reads, full))
        .collect();
    let mut unselected = vec![0; policies.len()];
    // Of each possible parent, what the policies' look-ups of the kinds
    // listed read: the masks their stages declare.
    let listed: Vec<GroupVersionKind> = (order.iter())
        .map(|r| GroupVersionKind {
            group: r.group.clone(),
            version: r.version.clone(),
            kind: r.kind.clone(),
        })
        .collect();
    let mut parents = Parents::for_kinds(policies.iter().map(|p| &p.settings), &listed);
    // A parent not listed keeps as much of itself.
    read.borrow_mut().declaring(parents.declared());
    let mut namespaces = NamespaceLabels::new();
    let mut progress = Listing::new();
    let mut relisted = BTreeSet::new();
    for resource in order {
        if stop.requested().is_some() {
            return Ok(None);
        }
        let judged_by: Vec<usize> = (0..policies.len())
            .filter(|&p| kinds[p].contains(resource))
            .collect();
        let mut failure: Option<anyhow::Error> = None;
        let mut judge_page = |listed: &Arc<cluster_audit::Listed>, page: Vec<Value>| {
            if failure.is_some() {
                return;
            }
            // A page's own objects can be parents of one another.
            page.iter().for_each(|object| parents.keep(object));
            let mut judged = BTreeSet::new();
            for &p in &judged_by {
                let policy = &policies[p];
                judges[p].expect(page.len());
                for (i, object) in page.iter().enumerate() {
                    let outcome = selected(api, policy, object, &mut namespaces).and_then(|yes| {
                        if !yes {
                            unselected[p] += 1;
                            return Ok(());
                        }
                        judged.insert(i);
                        (judges[p].judge(&parents, listed, object))
                            .map_err(|e| anyhow!(e))
                            .map_err(|e| {
                                e.context(format!("ClusterAdmissionPolicy {}", policy.name))
                            })
                    });
                    if let Err(error) = outcome {
                        failure = Some(error);
                        return;
                    }
                }
            }
            progress.page(&resource.name(), page.len(), judged.len());
        };
        let listed = listing::list(
            api,
            resource,
            live.namespace.as_deref(),
            live.selector.as_deref(),
            live.page_size,
            &mut judge_page,
        );
        if let Some(error) = failure {
            return Err(error);
        }
        progress.kind_done(&resource.name());
        match listed {
            Ok(listed) => {
                if listed.relisted_after_expiry {
                    relisted.insert(resource.name());
                }
            }
            Err(missing) if missing.bad_request && live.selector.is_some() => bail!(
                "-l {:?}: the API server refuses the label selector: {}",
                live.selector.as_deref().unwrap_or_default(),
                missing.message
            ),
            Err(missing) => {
                if unlisted.insert(missing.clone()) {
                    eprintln!(
                        "warning: not listed: {}: {}",
                        missing.resource, missing.message
                    );
                }
            }
        }
    }
    if stop.requested().is_some() {
        return Ok(None);
    }
    let reports: Vec<_> = judges.into_iter().map(LiveAudit::finish).collect();
    drop(reads);
    let audits = (policies.into_iter().zip(reports).zip(unselected))
        .map(|((policy, report), unselected)| Audit {
            policy,
            report,
            unselected,
        })
        .collect();
    Ok(Some(Judged {
        audits,
        unlisted,
        left_out,
        relisted,
        parents,
    }))
}

/// The labels of each namespace read so far (`None`: it is gone).
type NamespaceLabels = BTreeMap<String, Option<serde_json::Map<String, Value>>>;

/// Whether `policy`'s webhook is called for `object`
/// ([`super::webhook_scope`]); a namespace is read (once for the run) only
/// when the selector asks for more than its name.
fn selected(
    api: &Api,
    policy: &Deployed,
    object: &Value,
    namespaces: &mut NamespaceLabels,
) -> Result<bool> {
    let scope = &policy.scope;
    let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
    if scope.reads_namespaces() && !namespace.is_empty() && !namespaces.contains_key(namespace) {
        let labels = namespace_labels(api, namespace).map_err(|failure| {
            anyhow!(
                "cannot read namespace {namespace}, whose labels the namespaceSelector of {} \
                 selects on: {}{failure}",
                scope.from,
                if failure.code == Some(403) {
                    "forbidden: needs verb get on namespaces; "
                } else {
                    ""
                }
            )
        })?;
        namespaces.insert(namespace.to_owned(), labels);
    }
    let labels = namespaces.get(namespace).and_then(Option::as_ref);
    Ok(scope.selects(object, labels))
}
