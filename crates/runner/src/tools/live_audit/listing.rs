//! What a live audit lists, and the listing: the resources a policy's rules
//! match, found by discovery (one version per group and resource), each
//! listed page by page. A resource the runner may not list, or that the
//! cluster does not serve, is set aside with the reason, and the rest goes
//! on.

use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, HashSet};
use std::hash::BuildHasher;
use std::sync::Arc;

use cluster_audit::Origin;
use metadata_propagation_core::request::AdmissionRequest;
use serde_json::Value;

use super::api::{Api, Failure, Resource};
use super::deployed::Rule;

/// A resource that was not listed, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Unlisted {
    /// `plural.group`, or `group/version` when the group is not served.
    pub(super) resource: String,
    /// The verb that was refused (`list`), or empty.
    pub(super) verb: String,
    pub(super) message: String,
    /// Whether the cluster serves it: a kind a policy names for a provider
    /// the cluster does not run is noted, and fails nothing.
    pub(super) served: bool,
    /// Whether the list was refused as a bad request (400): with `-l`, the
    /// selector, which is the user's input to correct, not a kind to note.
    pub(super) bad_request: bool,
}

/// What the cluster serves, found once per run: each group's preferred
/// and served versions, and each group version's resources (all at once
/// from aggregated discovery, else each when first needed).
pub(super) struct Discovery {
    groups: BTreeMap<String, (String, Vec<String>)>,
    resources: BTreeMap<(String, String), Served>,
}

/// A group version's resources and their verbs, or why discovery failed.
type Served = Result<Vec<(Resource, Vec<String>)>, Failure>;

impl Discovery {
    /// The groups, and with aggregated discovery every group version's
    /// resources: then [`Discovery::kind`] and [`Discovery::matched`] send
    /// no request.
    pub(super) fn new(api: &Api) -> Result<Discovery, Failure> {
        let discovered = api.discover()?;
        let mut groups = discovered.groups;
        groups
            .entry(String::new())
            .or_insert_with(|| ("v1".to_owned(), vec!["v1".to_owned()]));
        let resources = discovered
            .resources
            .unwrap_or_default()
            .into_iter()
            .map(|(group_version, resources)| (group_version, Ok(resources)))
            .collect();
        Ok(Discovery { groups, resources })
    }

    fn served(&mut self, api: &Api, group: &str, version: &str) -> &Served {
        self.resources
            .entry((group.to_owned(), version.to_owned()))
            .or_insert_with(|| api.resources(group, version))
    }

    /// The resource serving `kind` at `api_version`, for a look-up.
    pub(super) fn kind(
        &mut self,
        api: &Api,
        api_version: &str,
        kind: &str,
    ) -> Result<Resource, String> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        match self.served(api, group, version) {
            Ok(resources) => resources
                .iter()
                .find(|(r, _)| r.kind == kind)
                .map(|(r, _)| r.clone())
                .ok_or_else(|| format!("Cannot find resource {api_version}/{kind}")),
            Err(failure) => Err(format!(
                "error finding resource {api_version} / {kind}: {failure}"
            )),
        }
    }

    /// The resources `rules` match, one version each: the group's preferred
    /// version when a rule names it, else the first a rule names that the
    /// cluster serves (a webhook with `matchPolicy: Equivalent` sees every
    /// version's writes, and listing two would audit each object twice).
    pub(super) fn matched(&mut self, api: &Api, rules: &[Rule]) -> (Vec<Resource>, Vec<Unlisted>) {
        let mut wanted: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
        for rule in rules {
            let groups: Vec<String> = match rule.groups.iter().any(|g| g == "*") {
                true => self.groups.keys().cloned().collect(),
                false => rule.groups.clone(),
            };
            for group in groups {
                for plural in &rule.resources {
                    if plural.contains('/') {
                        continue; // a subresource: nothing to list
                    }
                    let versions = wanted.entry((group.clone(), plural.clone())).or_default();
                    for version in &rule.versions {
                        if !versions.contains(version) {
                            versions.push(version.clone());
                        }
                    }
                }
            }
        }
        let (mut found, mut unlisted) = (Vec::new(), Vec::new());
        for ((group, plural), versions) in wanted {
            let Some((preferred, served)) = self.groups.get(&group).cloned() else {
                unlisted.push(Unlisted {
                    resource: format!("{plural}.{group}"),
                    verb: String::new(),
                    message: format!("the cluster does not serve the API group {group:?}"),
                    served: false,
                    bad_request: false,
                });
                continue;
            };
            let candidates = candidates(&versions, &preferred, &served);
            let mut matched = Vec::new();
            for version in &candidates {
                if let Ok(resources) = self.served(api, &group, version) {
                    matched = resources
                        .iter()
                        .filter(|(r, verbs)| {
                            let named = r.plural == *plural || (plural == "*" && acted_on(r));
                            named && verbs.iter().any(|v| v == "list")
                        })
                        .map(|(r, _)| r.clone())
                        .collect();
                    if !matched.is_empty() {
                        break;
                    }
                }
            }
            if matched.is_empty() {
                unlisted.push(Unlisted {
                    resource: format!("{plural}.{group}"),
                    verb: String::new(),
                    message: format!(
                        "the cluster serves no {plural} in {group} at {}",
                        versions.join(", ")
                    ),
                    served: false,
                    bad_request: false,
                });
            }
            found.extend(matched);
        }
        found.sort();
        found.dedup();
        (found, unlisted)
    }
}

/// The versions to look for a resource at, in order: the group's preferred
/// one first when the rule names it (or names `*`), then the others the
/// rule names, each only if the cluster serves it.
fn candidates(named: &[String], preferred: &str, served: &[String]) -> Vec<String> {
    let any = named.iter().any(|v| v == "*");
    let first = (any || named.iter().any(|v| v == preferred)).then(|| preferred.to_owned());
    let rest = if any { served } else { named };
    let mut out: Vec<String> = Vec::new();
    for version in first.into_iter().chain(rest.iter().cloned()) {
        if served.contains(&version) && !out.contains(&version) {
            out.push(version);
        }
    }
    out
}

/// Whether the policy acts on `resource`'s kind at all: a wildcard rule
/// (`resources: ["*"]`, narrowed by `matchConditions` the runner does not
/// evaluate) lists only those, never Secrets or Pods.
fn acted_on(resource: &Resource) -> bool {
    let probe = serde_json::json!({"apiVersion": resource.api_version(), "kind": resource.kind});
    AdmissionRequest::for_object("UPDATE", probe).acted_on()
}

/// How a resource's listing went, when it was listed to the end.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Listed {
    /// Objects handed to the caller, each once.
    pub(super) objects: usize,
    /// Whether the continue token expired (410 Gone: the API server keeps a
    /// list's snapshot about five minutes, which a slow judge or a low
    /// `--qps` outlasts) and the kind was listed again from its first
    /// page, handing over only the objects the first listing had not.
    pub(super) relisted_after_expiry: bool,
}

/// The objects of one kind handed to the caller so far: of each, a
/// 128-bit hash of its namespace and name, what a listing started again
/// must not hand over twice. 16 bytes an object, where the names took about
/// a hundred (a kind can hold a fifth of a cluster); the two halves are
/// std's SipHash under keys drawn afresh for each run, so no name can be
/// made to collide with another, and by chance two of a million objects do
/// once in 10^26 runs.
#[derive(Debug, Default)]
struct Handed {
    seen: HashSet<u128>,
    keys: (RandomState, RandomState),
}

impl Handed {
    /// `items` less those already handed over, which are now handed.
    fn fresh(&mut self, items: Vec<Value>) -> Vec<Value> {
        items
            .into_iter()
            .filter(|item| {
                let metadata = &item["metadata"];
                let field = |field: &str| metadata[field].as_str().unwrap_or_default();
                let key = self.key(field("namespace"), field("name"));
                self.seen.insert(key)
            })
            .collect()
    }

    fn key(&self, namespace: &str, name: &str) -> u128 {
        let half = |keys: &RandomState| u128::from(keys.hash_one((namespace, name)));
        half(&self.keys.0) << 64 | half(&self.keys.1)
    }
}

/// Lists `resource` (in `namespace`, if any, and with `selector`) page by
/// page, `limit` objects a page, handing each page to `page` as it
/// arrives: the listing keeps no page, only the names of the objects it
/// handed over. A continue token that expires (410) starts the listing
/// again once; a second expiry leaves the kind unlisted.
pub(super) fn list(
    api: &Api,
    resource: &Resource,
    namespace: Option<&str>,
    selector: Option<&str>,
    limit: u32,
    page: &mut dyn FnMut(&Arc<cluster_audit::Listed>, Vec<Value>),
) -> Result<Listed, Unlisted> {
    let list = format!("{}/{}", resource.name(), resource.version);
    // Where every object of the list was read, kept once for all of them.
    let read = cluster_audit::Listed::new(Origin::list(list), &resource.api_version());
    let mut listed = Listed::default();
    let mut handed = Handed::default();
    let mut token = None;
    loop {
        let continued = token.is_some();
        let (items, next) = match api.list_page(resource, namespace, selector, limit, token) {
            Ok(answer) => answer,
            Err(failure)
                if failure.code == Some(410) && continued && !listed.relisted_after_expiry =>
            {
                listed.relisted_after_expiry = true;
                token = None;
                continue;
            }
            Err(failure) => return Err(unlisted(resource, &failure, continued)),
        };
        let items = handed.fresh(items);
        listed.objects += items.len();
        page(&read, items);
        match next {
            Some(next) => token = Some(next),
            None => break,
        }
    }
    Ok(listed)
}

/// The kind `resource` left unlisted by `failure`, of a page after the
/// first when `continued`.
fn unlisted(resource: &Resource, failure: &Failure, continued: bool) -> Unlisted {
    let name = resource.name();
    Unlisted {
        resource: name.clone(),
        verb: if failure.code == Some(403) {
            "list".to_owned()
        } else {
            String::new()
        },
        message: match failure.code {
            Some(403) => format!("forbidden: needs verb list on {name} ({failure})"),
            Some(410) if continued => format!(
                "cannot list {name}: its continue token expired again in the listing started \
                 over after the first expiry ({failure})"
            ),
            _ => format!("cannot list {name}: {failure}"),
        },
        served: true,
        bad_request: failure.code == Some(400),
    }
}

#[cfg(test)]
mod tests {
    use super::super::api::fake_api_server::{discovery, fake_api, ok, status};
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_preferred_version_first_when_the_rule_names_it_and_only_served_ones() {
        let served = strings(&["v1beta2", "v1beta1"]);
        assert_eq!(
            candidates(&strings(&["v1beta1", "v1beta2"]), "v1beta2", &served),
            ["v1beta2", "v1beta1"]
        );
        assert_eq!(
            candidates(&strings(&["v1beta1"]), "v1beta2", &served),
            ["v1beta1"]
        );
        assert_eq!(
            candidates(&strings(&["*"]), "v1beta2", &served),
            ["v1beta2", "v1beta1"]
        );
        assert_eq!(
            candidates(&strings(&["v1alpha4", "v1beta1"]), "v1beta2", &served),
            ["v1beta1"]
        );
        assert!(candidates(&strings(&["v1alpha4"]), "v1beta2", &served).is_empty());
    }

    /// The resources a CAPI policy's rules match, discovered from a server
    /// with or without aggregated discovery, and the requests sent.
    fn discovered(aggregated: bool) -> (Vec<String>, usize) {
        let (api, log) = fake_api(discovery(aggregated));
        let mut discovery = Discovery::new(&api).unwrap();
        let rule = |group: &str, resources: &[&str]| Rule {
            groups: strings(&[group]),
            versions: strings(&["*"]),
            resources: strings(resources),
            operations: strings(&["UPDATE"]),
        };
        let rules = [
            rule("cluster.x-k8s.io", &["machinesets", "machinesets/scale"]),
            rule("apps", &["deployments"]),
            rule("", &["pods"]),
        ];
        let (found, unlisted) = discovery.matched(&api, &rules);
        assert!(unlisted.is_empty(), "{unlisted:?}");
        let namespace = discovery.kind(&api, "v1", "Namespace").unwrap();
        assert!(!namespace.namespaced);
        let mut names: Vec<String> = found
            .iter()
            .map(|r| format!("{}/{}", r.name(), r.version))
            .collect();
        names.push(namespace.name());
        let sent = log.lock().unwrap().len();
        assert_eq!(api.counts(), BTreeMap::from([("discovery", sent)]));
        (names, sent)
    }

    #[test]
    fn aggregated_discovery_answers_every_look_up_from_its_two_requests() {
        let (aggregated, sent) = discovered(true);
        assert_eq!(
            aggregated,
            [
                "pods/v1",
                "deployments.apps/v1",
                "machinesets.cluster.x-k8s.io/v1beta2",
                "namespaces"
            ]
        );
        assert_eq!(sent, 2);
        // Without it: `/apis`, then the three group versions looked in.
        assert_eq!(discovered(false), (aggregated, 1 + 3));
    }

    fn machine(name: &str) -> Value {
        serde_json::json!({"metadata": {"name": name, "namespace": "default"}})
    }

    #[test]
    fn a_listing_started_again_hands_over_only_what_it_had_not() {
        let mut handed = Handed::default();
        let names = |items: Vec<Value>| -> Vec<String> {
            items
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(
            names(handed.fresh(vec![machine("a"), machine("b")])),
            ["a", "b"]
        );
        let mut other_namespace = machine("a");
        other_namespace["metadata"]["namespace"] = "prod".into();
        let again = vec![machine("a"), machine("b"), machine("c"), other_namespace];
        assert_eq!(names(handed.fresh(again)), ["c", "a"]);
        assert!(handed.fresh(vec![machine("c")]).is_empty());
    }

    /// Lists machines from a server whose pages after the first answer 410
    /// `expiries` times, then as asked: the names handed over, in order.
    fn listed_through_expiry(expiries: usize) -> (Result<Listed, Unlisted>, Vec<String>, usize) {
        let expired = std::sync::atomic::AtomicUsize::new(0);
        let (api, log) = fake_api(move |seen| {
            let list = |names: &[&str], next: &str| {
                let items: Vec<Value> = names.iter().map(|n| machine(n)).collect();
                ok(&serde_json::json!({"kind": "MachineList", "items": items,
                                       "metadata": {"continue": next}}))
            };
            match seen.uri.split_once("continue=") {
                None => list(&["m1", "m2"], "page-2"),
                Some(_) if expired.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < expiries => {
                    status(
                        410,
                        "The provided continue parameter is too old",
                        Vec::new(),
                    )
                }
                Some((_, "page-2")) => list(&["m2", "m3"], "page-3"),
                Some(_) => list(&["m4"], ""),
            }
        });
        let machines = Resource {
            group: "cluster.x-k8s.io".to_owned(),
            version: "v1beta2".to_owned(),
            plural: "machines".to_owned(),
            kind: "Machine".to_owned(),
            namespaced: true,
        };
        let mut names = Vec::new();
        let listed = list(&api, &machines, None, None, 2, &mut |_, page| {
            names.extend(
                page.iter()
                    .map(|o| o["metadata"]["name"].as_str().unwrap().to_owned()),
            );
        });
        let sent = log.lock().unwrap().len();
        (listed, names, sent)
    }

    #[test]
    fn an_expired_continue_token_lists_the_kind_again_once_without_handing_an_object_twice() {
        let (listed, names, sent) = listed_through_expiry(0);
        assert_eq!(
            listed,
            Ok(Listed {
                objects: 4,
                relisted_after_expiry: false
            })
        );
        assert_eq!((names, sent), (strings(&["m1", "m2", "m3", "m4"]), 3));

        let (listed, names, sent) = listed_through_expiry(1);
        assert_eq!(
            listed,
            Ok(Listed {
                objects: 4,
                relisted_after_expiry: true
            })
        );
        // Page 1, the 410, page 1 again (m1 and m2 not handed again), 2, 3.
        assert_eq!((names, sent), (strings(&["m1", "m2", "m3", "m4"]), 5));

        let (listed, names, sent) = listed_through_expiry(2);
        let unlisted = listed.unwrap_err();
        assert!(unlisted.served && unlisted.verb.is_empty());
        assert!(
            unlisted.message.contains("expired again") && unlisted.message.contains("(410)"),
            "{}",
            unlisted.message
        );
        assert_eq!((names, sent), (strings(&["m1", "m2"]), 4));
    }

    #[test]
    fn a_wildcard_lists_only_kinds_the_policy_acts_on() {
        let resource = |group: &str, kind: &str| Resource {
            group: group.to_owned(),
            version: "v1".to_owned(),
            plural: format!("{}s", kind.to_lowercase()),
            kind: kind.to_owned(),
            namespaced: true,
        };
        assert!(!acted_on(&resource("", "Secret")));
        assert!(!acted_on(&resource("apps", "Deployment")));
        assert!(acted_on(&resource("ec2.aws.m.upbound.io", "VPC")));
        assert!(acted_on(&resource("cluster.x-k8s.io", "MachineSet")));
        assert!(!acted_on(&resource("cluster.x-k8s.io", "Cluster")));
    }
}
