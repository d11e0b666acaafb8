//! Discovery: what the cluster serves, from aggregated discovery when the
//! API server has it (`/api` and `/apis`, every group version's resources
//! in two answers, as kubectl reads them), else from one document per
//! group version.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{Api, Failure, Resource};

/// The `Accept` of a discovery request: aggregated discovery (`v2` since
/// Kubernetes 1.30, `v2beta1` from 1.26), else the plain document, which
/// every API server serves.
const ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,\
                      application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,\
                      application/json";

/// A group version: `(group, version)`, `""` for the core group.
pub(in crate::tools::live_audit) type GroupVersion = (String, String);

/// Each group's preferred version and the versions it serves.
pub(in crate::tools::live_audit) type Groups = BTreeMap<String, (String, Vec<String>)>;

/// A group version's resources, each with its verbs.
pub(in crate::tools::live_audit) type Resources = Vec<(Resource, Vec<String>)>;

/// What discovery found: each group's preferred version and the versions
/// it serves, and, from aggregated discovery, each group version's
/// resources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::tools::live_audit) struct Discovered {
    pub(in crate::tools::live_audit) groups: Groups,
    /// `None` from a server without aggregated discovery. A version whose
    /// aggregated entry is stale (its aggregated API server did not answer
    /// the API server) is left out, to be asked on its own as without
    /// aggregation: that request's answer says what is wrong.
    pub(in crate::tools::live_audit) resources: Option<BTreeMap<GroupVersion, Resources>>,
}

impl Api {
    /// What the cluster serves: `/apis` and `/api` asked for aggregated
    /// discovery, two requests however many groups; from a server without
    /// it, `/apis` only, the groups (the core group is not among them), and
    /// each group version's resources are asked when needed
    /// ([`Api::resources`]). Counted under `discovery`.
    pub(in crate::tools::live_audit) fn discover(&self) -> Result<Discovered, Failure> {
        let apis = self.send("discovery", request("/apis")?)?;
        if apis["kind"] != "APIGroupDiscoveryList" {
            return Ok(Discovered {
                groups: groups(&apis),
                resources: None,
            });
        }
        let core = self.send("discovery", request("/api")?)?;
        let (mut groups, mut resources) = aggregated(&apis);
        let (core_groups, core_resources) = aggregated(&core);
        groups.extend(core_groups);
        resources.extend(core_resources);
        Ok(Discovered {
            groups,
            resources: Some(resources),
        })
    }

    /// The resources one group version serves (`""` for the core group),
    /// with their verbs; subresources left out. Counted under `discovery`.
    pub(in crate::tools::live_audit) fn resources(
        &self,
        group: &str,
        version: &str,
    ) -> Result<Resources, Failure> {
        let path = match group {
            "" => format!("/api/{version}"),
            _ => format!("/apis/{group}/{version}"),
        };
        let list = self.send("discovery", request(&path)?)?;
        Ok(items(&list["resources"])
            .filter_map(|r| {
                let plural = r["name"].as_str().filter(|name| !name.contains('/'))?;
                let resource = Resource {
                    group: group.to_owned(),
                    version: version.to_owned(),
                    plural: plural.to_owned(),
                    kind: r["kind"].as_str().unwrap_or_default().to_owned(),
                    namespaced: r["namespaced"].as_bool() == Some(true),
                };
                Some((resource, strings(&r["verbs"])))
            })
            .collect())
    }
}

/// A GET of the discovery document at `path`.
fn request(path: &str) -> Result<http::Request<Vec<u8>>, Failure> {
    http::Request::get(path)
        .header(http::header::ACCEPT, ACCEPT)
        .body(Vec::new())
        .map_err(|error| Failure {
            code: None,
            message: format!("cannot build the request: {error}"),
        })
}

/// The elements of a JSON array (none when `value` is not one).
fn items(value: &Value) -> impl Iterator<Item = &Value> {
    value.as_array().into_iter().flatten()
}

fn strings(value: &Value) -> Vec<String> {
    items(value)
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// The groups of an `APIGroupList`: each one's preferred version (else
/// its first) and the versions it serves.
fn groups(list: &Value) -> Groups {
    items(&list["groups"])
        .filter_map(|group| {
            let name = group["name"].as_str()?;
            let versions: Vec<String> = items(&group["versions"])
                .filter_map(|v| v["version"].as_str().map(str::to_owned))
                .collect();
            let preferred = group["preferredVersion"]["version"]
                .as_str()
                .map(str::to_owned)
                .or_else(|| versions.first().cloned())
                .unwrap_or_default();
            Some((name.to_owned(), (preferred, versions)))
        })
        .collect()
}

/// The groups and resources of an `APIGroupDiscoveryList`: a group's
/// versions come preferred first; a resource's subresources are not
/// resources to list.
fn aggregated(list: &Value) -> (Groups, BTreeMap<GroupVersion, Resources>) {
    let (mut groups, mut found) = (BTreeMap::new(), BTreeMap::new());
    for group in items(&list["items"]) {
        let name = group["metadata"]["name"].as_str().unwrap_or_default();
        let mut versions = Vec::new();
        for entry in items(&group["versions"]) {
            let Some(version) = entry["version"].as_str() else {
                continue;
            };
            versions.push(version.to_owned());
            if entry["freshness"] == "Stale" {
                continue;
            }
            let resources = items(&entry["resources"])
                .filter_map(|r| {
                    let resource = Resource {
                        group: name.to_owned(),
                        version: version.to_owned(),
                        plural: r["resource"].as_str()?.to_owned(),
                        kind: r["responseKind"]["kind"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                        namespaced: r["scope"] == "Namespaced",
                    };
                    Some((resource, strings(&r["verbs"])))
                })
                .collect();
            found.insert((name.to_owned(), version.to_owned()), resources);
        }
        if let Some(preferred) = versions.first().cloned() {
            groups.insert(name.to_owned(), (preferred, versions));
        }
    }
    (groups, found)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::fake_api_server::{discovery, fake_api};
    use super::*;

    #[test]
    fn aggregated_discovery_finds_in_two_requests_what_one_per_group_version_finds() {
        let (api, log) = fake_api(discovery(true));
        let aggregated = api.discover().unwrap();
        let uris: Vec<String> = log.lock().unwrap().iter().map(|s| s.uri.clone()).collect();
        assert_eq!(uris, ["/apis", "/api"]);
        assert!(log.lock().unwrap().iter().all(|s| s.accept == ACCEPT));
        assert_eq!(api.counts(), BTreeMap::from([("discovery", 2)]));
        let resources = aggregated.resources.clone().unwrap();

        let (legacy_api, legacy_log) = fake_api(discovery(false));
        let legacy = legacy_api.discover().unwrap();
        assert_eq!(legacy.resources, None);
        let mut groups = legacy.groups.clone();
        groups.insert(String::new(), ("v1".to_owned(), vec!["v1".to_owned()]));
        assert_eq!(groups, aggregated.groups);
        assert_eq!(
            groups["cluster.x-k8s.io"],
            (
                "v1beta2".to_owned(),
                vec!["v1beta2".to_owned(), "v1beta1".to_owned()]
            )
        );
        let mut found = BTreeMap::new();
        for (group, (_, versions)) in &groups {
            for version in versions {
                let served = legacy_api.resources(group, version).unwrap();
                found.insert((group.clone(), version.clone()), served);
            }
        }
        assert_eq!(found, resources);
        // `/apis`, then `/api/v1`, `/apis/apps/v1` and both cluster.x-k8s.io versions.
        assert_eq!(legacy_log.lock().unwrap().len(), 1 + 4);
        assert_eq!(legacy_api.counts(), BTreeMap::from([("discovery", 1 + 4)]));

        let core = &resources[&(String::new(), "v1".to_owned())];
        let names: Vec<(&str, &str, bool)> = core
            .iter()
            .map(|(r, _)| (r.plural.as_str(), r.kind.as_str(), r.namespaced))
            .collect();
        assert_eq!(
            names,
            [("namespaces", "Namespace", false), ("pods", "Pod", true)]
        );
        assert!(
            core.iter()
                .all(|(_, verbs)| verbs.iter().any(|v| v == "list"))
        );
    }

    #[test]
    fn a_stale_group_version_is_left_to_be_asked_on_its_own() {
        let list = json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
            "metadata": {}, "items": [{"metadata": {"name": "metrics.k8s.io"}, "versions": [
                {"version": "v1beta1", "freshness": "Stale", "resources": []}]}]});
        let (groups, resources) = aggregated(&list);
        assert_eq!(
            groups["metrics.k8s.io"],
            ("v1beta1".to_owned(), vec!["v1beta1".to_owned()])
        );
        assert!(resources.is_empty());
    }
}
