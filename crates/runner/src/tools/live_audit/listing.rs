//! What a live audit lists, and the listing: the resources a policy's rules
//! match, found by discovery (one version per group and resource), each
//! listed page by page. A resource the runner may not list, or that the
//! cluster does not serve, is set aside with the reason, and the rest goes
//! on.

use std::collections::BTreeMap;

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
    /// Objects handed to the caller.
    pub(super) objects: usize,
}

/// Lists `resource` (in `namespace`, if any, and with `selector`) page by
/// page, `limit` objects a page, handing each page to `page` as it
/// arrives: the listing keeps no page, so its memory is one page.
pub(super) fn list(
    api: &Api,
    resource: &Resource,
    namespace: Option<&str>,
    selector: Option<&str>,
    limit: u32,
    page: &mut dyn FnMut(Vec<(Origin, Value)>),
) -> Result<Listed, Unlisted> {
    let list = format!("{}/{}", resource.name(), resource.version);
    let mut listed = Listed::default();
    let mut token = None;
    loop {
        let (items, next) = api
            .list_page(resource, namespace, selector, limit, token)
            .map_err(|failure| Unlisted {
                resource: resource.name(),
                verb: if failure.code == Some(403) {
                    "list".to_owned()
                } else {
                    String::new()
                },
                message: match failure.code {
                    Some(403) => format!(
                        "forbidden: needs verb list on {} ({failure})",
                        resource.name()
                    ),
                    _ => format!("cannot list {}: {failure}", resource.name()),
                },
                served: true,
                bad_request: failure.code == Some(400),
            })?;
        listed.objects += items.len();
        page(
            items
                .into_iter()
                .map(|item| (Origin::list(list.clone()), item))
                .collect(),
        );
        match next {
            Some(next) => token = Some(next),
            None => break,
        }
    }
    Ok(listed)
}

#[cfg(test)]
mod tests {
    use super::super::api::fake_api_server::{discovery, fake_api};
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
