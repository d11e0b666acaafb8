//! Listing and judging: the kinds each policy's rules match, listed once
//! for all policies within the scope, and each policy's audit of the
//! objects its webhook is called for.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context, Result, bail};
use cluster_audit::{Origin, audit_live};
use serde_json::Value;

use super::api::{Api, Resource};
use super::cluster_reads::{ClusterReads, Reads};
use super::deployed::{Audit, Deployed};
use super::listing::{self, Discovery, Unlisted};
use super::signals::Stop;
use crate::cli::LiveArgs;

/// Every policy's audit of what it is called for, the kinds not listed,
/// and those the scope left out. `None` when a signal stopped the listing.
pub(super) struct Judged {
    pub(super) audits: Vec<Audit>,
    pub(super) unlisted: BTreeSet<Unlisted>,
    pub(super) left_out: BTreeSet<String>,
}

/// Lists the kinds each policy's rules match, within the scope (`-n`
/// leaves out cluster-scoped kinds, unless `--cluster-scoped`), each kind
/// once for all policies, and judges the objects each policy's webhook is
/// called for.
pub(super) fn list_and_judge(
    api: &Api,
    discovery: &RefCell<Discovery>,
    read: &Reads,
    policies: Vec<Deployed>,
    live: &LiveArgs,
    stop: &Stop,
) -> Result<Option<Judged>> {
    let mut listed: BTreeMap<Resource, Result<Vec<(Origin, Value)>, Unlisted>> = BTreeMap::new();
    let mut unlisted: BTreeSet<Unlisted> = BTreeSet::new();
    let mut left_out: BTreeSet<String> = BTreeSet::new();
    let mut audits = Vec::new();
    let mut namespaces = BTreeMap::new();
    for policy in policies {
        let (resources, missing) = discovery.borrow_mut().matched(api, &policy.rules);
        unlisted.extend(missing);
        let (resources, outside): (Vec<Resource>, Vec<Resource>) =
            resources.into_iter().partition(|resource| {
                resource.namespaced || live.namespace.is_none() || live.cluster_scoped
            });
        left_out.extend(outside.iter().map(Resource::name));
        let mut objects = Vec::new();
        for resource in resources {
            if stop.requested().is_some() {
                return Ok(None);
            }
            let list = listed.entry(resource.clone()).or_insert_with(|| {
                let mut found = Vec::new();
                listing::list(
                    api,
                    &resource,
                    live.namespace.as_deref(),
                    live.selector.as_deref(),
                    live.page_size,
                    &mut |page| found.extend(page),
                )
                .map(|_| found)
            });
            match list {
                Ok(found) => objects.extend(found.iter().cloned()),
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
        let listed_count = objects.len();
        let objects = selected(api, &policy, objects, &mut namespaces)?;
        let unselected = listed_count - objects.len();
        let reads = ClusterReads {
            api,
            discovery,
            granted: &policy.context_aware,
            read,
        };
        let report = audit_live(objects, &policy.settings, &reads)
            .with_context(|| format!("ClusterAdmissionPolicy {}", policy.name))?;
        audits.push(Audit {
            policy,
            report,
            unselected,
        });
    }
    Ok(Some(Judged {
        audits,
        unlisted,
        left_out,
    }))
}

/// The labels of each namespace read so far (`None`: it is gone).
type NamespaceLabels = BTreeMap<String, Option<serde_json::Map<String, Value>>>;

/// The `objects` `policy`'s webhook is called for ([`super::webhook_scope`]); a
/// namespace is read (once for the run) only when the selector asks for
/// more than its name.
fn selected(
    api: &Api,
    policy: &Deployed,
    objects: Vec<(Origin, Value)>,
    namespaces: &mut NamespaceLabels,
) -> Result<Vec<(Origin, Value)>> {
    let scope = &policy.scope;
    let resource = Resource {
        group: String::new(),
        version: "v1".to_owned(),
        plural: "namespaces".to_owned(),
        kind: "Namespace".to_owned(),
        namespaced: false,
    };
    let mut kept = Vec::with_capacity(objects.len());
    for (origin, object) in objects {
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
        if scope.reads_namespaces() && !namespace.is_empty() && !namespaces.contains_key(namespace)
        {
            let labels = match api.get(&resource, None, namespace) {
                Ok(found) => Some(
                    found["metadata"]["labels"]
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                ),
                Err(failure) if failure.code == Some(404) => None,
                Err(failure) => bail!(
                    "cannot read namespace {namespace}, whose labels the namespaceSelector of {} \
                     selects on: {}{failure}",
                    scope.from,
                    if failure.code == Some(403) {
                        "forbidden: needs verb get on namespaces; "
                    } else {
                        ""
                    }
                ),
            };
            namespaces.insert(namespace.to_owned(), labels);
        }
        let labels = namespaces.get(namespace).and_then(Option::as_ref);
        if scope.selects(&object, labels) {
            kept.push((origin, object));
        }
    }
    Ok(kept)
}
