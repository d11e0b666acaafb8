//! The policies a live audit follows: a deployed ClusterAdmissionPolicy
//! read from the cluster (`--policy-name`), or a manifest (`--policy`).
//! Of each it keeps what policy-server acts on: the settings, the rules
//! (which kinds are listed), `spec.mode` and `spec.mutating` (what a fix
//! can expect of the webhook), and `spec.contextAwareResources` (what the
//! look-ups may read), and the selectors its webhook is called under
//! ([`WebhookScope`]).

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result, bail};
use cluster_audit::{AuditSettings, Report};
use serde_json::Value;

use super::api::{Api, Resource};
use super::webhook_scope::WebhookScope;

/// One rule of a policy: the groups, versions and resources it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Rule {
    pub(super) groups: Vec<String>,
    pub(super) versions: Vec<String>,
    pub(super) resources: Vec<String>,
    pub(super) operations: Vec<String>,
}

impl Rule {
    /// Whether an UPDATE of `resource` reaches the policy: the fixer's
    /// write is one.
    pub(super) fn sends_updates_of(&self, resource: &Resource) -> bool {
        let any = |list: &[String], item: &str| list.iter().any(|x| x == "*" || x == item);
        any(&self.groups, &resource.group)
            && any(&self.resources, &resource.plural)
            && any(&self.operations, "UPDATE")
    }
}

/// A policy as deployed (or as its manifest says it would be).
pub(super) struct Deployed {
    pub(super) name: String,
    /// `the cluster` or the manifest's path.
    pub(super) source: String,
    /// `protect` or `monitor`.
    pub(super) mode: String,
    pub(super) mutating: bool,
    pub(super) rules: Vec<Rule>,
    /// `apiVersion` and `kind` of each resource the look-ups may read.
    pub(super) context_aware: BTreeSet<(String, String)>,
    pub(super) settings: AuditSettings,
    /// The objects its webhook is called for, besides its rules.
    pub(super) scope: WebhookScope,
    /// `spec.module`: the module it runs ("" when the spec has none).
    pub(super) module: String,
    /// `status.policyStatus` as kubewarden-controller sets it (`active`,
    /// `pending`, …); `None` for a manifest, or a policy no controller
    /// has seen.
    pub(super) status: Option<String>,
    /// Whether its webhook (`clusterwide-NAME`) is registered, or why it
    /// cannot be said; `None` until it was read.
    pub(super) registered: Option<Result<(), String>>,
}

/// One policy's audit: the policy, and its report on the cluster.
pub(super) struct Audit {
    pub(super) policy: Deployed,
    pub(super) report: Report,
    /// Listed objects its webhook is never called for, left unaudited.
    pub(super) unselected: usize,
}

/// The repository this module is published under (artifacthub-pkg.yml's
/// `containersImages`); a mirror is named with `--module`.
pub(super) const REPOSITORY: &str = "ghcr.io/plexsphere/policies/metadata-propagation";

/// The repository a module reference names: without its scheme
/// (`registry://`), tag and digest, so `registry://ghcr.io/o/p:v1` and
/// `ghcr.io/o/p@sha256:…` both name `ghcr.io/o/p`. A registry's port is
/// before the first `/`, a tag after the last.
pub(super) fn repository(reference: &str) -> &str {
    let rest = reference
        .strip_prefix("registry://")
        .unwrap_or(reference)
        .trim_end_matches('/');
    let rest = rest.split_once('@').map_or(rest, |(name, _)| name);
    let last = rest.rfind('/').map_or(0, |slash| slash + 1);
    match rest[last..].find(':') {
        Some(colon) if last > 0 => &rest[..last + colon],
        _ => rest,
    }
}

/// Refuses a policy whose `spec.module` is not this module (or a mirror
/// `accepted` names): its settings and rules are another module's.
pub(super) fn this_module(policy_name: &str, module: &str, accepted: &[String]) -> Result<()> {
    let repository = repository(module);
    let ours = std::iter::once(REPOSITORY).chain(accepted.iter().map(|m| self::repository(m)));
    if ours.clone().any(|known| known == repository) {
        return Ok(());
    }
    let known: Vec<&str> = ours.collect();
    let runs = match module {
        "" => "has no spec.module".to_owned(),
        module => format!("runs the module {module}"),
    };
    bail!(
        "ClusterAdmissionPolicy {policy_name} {runs}, not this policy ({}): its settings and rules \
         are another module's, so nothing is audited or written by them. For a mirror of this \
         policy, name its repository: --module REPOSITORY",
        known.join(", ")
    )
}

const GROUP: &str = "policies.kubewarden.io";
const KIND: &str = "ClusterAdmissionPolicy";

/// Reads ClusterAdmissionPolicy `name` from the cluster.
pub(super) fn from_cluster(api: &Api, name: &str, accepted: &[String]) -> Result<Deployed> {
    let resource = Resource {
        group: GROUP.to_owned(),
        version: "v1".to_owned(),
        plural: "clusteradmissionpolicies".to_owned(),
        kind: KIND.to_owned(),
        namespaced: false,
    };
    let object = api.get(&resource, None, name).map_err(|failure| match failure.code {
        Some(404) => anyhow::anyhow!(
            "ClusterAdmissionPolicy {name} is not in the cluster (`kubectl get clusteradmissionpolicies` lists them)"
        ),
        Some(403) => anyhow::anyhow!(
            "cannot read ClusterAdmissionPolicy {name}: forbidden: needs verb get on \
             clusteradmissionpolicies.{GROUP} ({failure})"
        ),
        _ => anyhow::anyhow!("cannot read ClusterAdmissionPolicy {name}: {failure}"),
    })?;
    let mut policy = parse(&object, "the cluster".to_owned(), accepted)?;
    policy.status = object["status"]["policyStatus"].as_str().map(str::to_owned);
    match registered_scope(api, &policy)? {
        Ok(scope) => {
            policy.scope = scope;
            policy.registered = Some(Ok(()));
        }
        Err(why) => {
            eprintln!(
                "warning: cannot read the webhook of ClusterAdmissionPolicy {} (clusterwide-{}): {why}; \
                 judging by the policy's own namespaceSelector and objectSelector, without \
                 Kubewarden's exclusion of its own namespace",
                policy.name, policy.name
            );
            policy.registered = Some(Err(why));
        }
    }
    Ok(policy)
}

/// Whether the webhook of `policy` is registered (`Ok`), or why it cannot
/// be said, read once: `--fix` writes only through a registered one.
pub(super) fn registration(api: &Api, policy: &mut Deployed) -> Result<(), String> {
    if policy.registered.is_none() {
        let read = registered_scope(api, policy).map_err(|error| format!("{error:#}"));
        policy.registered = Some(read.and_then(|scope| scope.map(|_| ())));
    }
    policy.registered.clone().unwrap_or(Ok(()))
}

/// The selectors of the webhook kubewarden-controller registered for
/// `policy` (`clusterwide-<name>`, mutating or validating as the policy
/// is): the policy's own, and the exclusion of Kubewarden's namespace the
/// controller adds. The inner `Err` says why it cannot be read (not
/// registered, forbidden): the caller decides whether the policy's own
/// selectors stand in.
fn registered_scope(api: &Api, policy: &Deployed) -> Result<Result<WebhookScope, String>> {
    let (plural, kind) = match policy.mutating {
        true => (
            "mutatingwebhookconfigurations",
            "MutatingWebhookConfiguration",
        ),
        false => (
            "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration",
        ),
    };
    let resource = Resource {
        group: "admissionregistration.k8s.io".to_owned(),
        version: "v1".to_owned(),
        plural: plural.to_owned(),
        kind: kind.to_owned(),
        namespaced: false,
    };
    let name = format!("clusterwide-{}", policy.name);
    let why = match api.get(&resource, None, &name) {
        Ok(config) => {
            let from = format!("{plural}.admissionregistration.k8s.io {name}");
            return WebhookScope::read(&config["webhooks"][0], from).map(Ok);
        }
        Err(failure) if failure.code == Some(404) => {
            format!(
                "{plural}.admissionregistration.k8s.io {name} is not registered (is the policy active?)"
            )
        }
        Err(failure) if failure.code == Some(403) => format!(
            "forbidden: needs verb get on {plural}.admissionregistration.k8s.io ({failure})"
        ),
        Err(failure) => failure.to_string(),
    };
    Ok(Err(why))
}

/// Reads the ClusterAdmissionPolicies of a manifest (YAML or JSON, one or
/// several documents; its other documents, such as the policy's RBAC, are
/// passed over).
pub(super) fn from_file(path: &Path, accepted: &[String]) -> Result<Vec<Deployed>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let source = path.display().to_string();
    let documents = cluster_audit::dump::documents(&text).map_err(|unreadable| {
        anyhow::anyhow!(
            "{source} document {}: not valid YAML or JSON: {}",
            unreadable.document,
            unreadable.reason
        )
    })?;
    let policies: Vec<Deployed> = documents
        .iter()
        .filter(|(_, document)| document["kind"] == KIND)
        .map(|(_, document)| parse(document, source.clone(), accepted))
        .collect::<Result<_>>()?;
    if policies.is_empty() {
        bail!("{source} holds no {GROUP} {KIND}");
    }
    Ok(policies)
}

/// `accepted`: the mirrors `--module` names ([`this_module`]).
fn parse(object: &Value, source: String, accepted: &[String]) -> Result<Deployed> {
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    if object["kind"] != KIND || !api_version.starts_with(&format!("{GROUP}/")) {
        bail!(
            "{source}: not a {GROUP} {KIND} (apiVersion {api_version:?}, kind {:?})",
            object["kind"].as_str().unwrap_or_default()
        );
    }
    let spec = &object["spec"];
    // Before anything of the spec is read: another module's settings would
    // be refused in this module's words, or worse, accepted.
    let module = spec["module"].as_str().unwrap_or_default().to_owned();
    this_module(&name, &module, accepted).with_context(|| source.clone())?;
    let strings = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| i.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let rules: Vec<Rule> = spec["rules"]
        .as_array()
        .map(|rules| {
            rules
                .iter()
                .map(|rule| Rule {
                    groups: strings(&rule["apiGroups"]),
                    versions: strings(&rule["apiVersions"]),
                    resources: strings(&rule["resources"]),
                    operations: strings(&rule["operations"]),
                })
                .collect()
        })
        .unwrap_or_default();
    if rules.is_empty() {
        bail!(
            "{source}: ClusterAdmissionPolicy {name} has no spec.rules: it matches no kind to list"
        );
    }
    let context_aware = spec["contextAwareResources"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|r| {
                    let text = |key: &str| r[key].as_str().unwrap_or_default().to_owned();
                    (text("apiVersion"), text("kind"))
                })
                .collect()
        })
        .unwrap_or_default();
    let settings = match &spec["settings"] {
        Value::Null => Value::Object(Default::default()),
        settings => settings.clone(),
    };
    let raw = serde_json::to_vec(&settings).expect("JSON values always serialise");
    let settings = AuditSettings::from_json(&raw)
        .with_context(|| format!("{source}: ClusterAdmissionPolicy {name}"))?;
    let scope = WebhookScope::read(spec, format!("ClusterAdmissionPolicy {name}"))
        .with_context(|| source.clone())?;
    Ok(Deployed {
        name,
        source,
        mode: spec["mode"].as_str().unwrap_or("protect").to_owned(),
        mutating: spec["mutating"].as_bool().unwrap_or(false),
        rules,
        context_aware,
        settings,
        scope,
        module,
        status: None,
        registered: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A manifest of this module's policy with `spec` (and its module).
    fn manifest(mut spec: Value) -> Value {
        if spec.get("module").is_none() {
            spec["module"] =
                "registry://ghcr.io/plexsphere/policies/metadata-propagation:v0.1.0".into();
        }
        serde_json::json!({
            "apiVersion": "policies.kubewarden.io/v1",
            "kind": "ClusterAdmissionPolicy",
            "metadata": {"name": "p"},
            "spec": spec,
        })
    }

    #[test]
    fn a_manifest_gives_rules_mode_grants_and_settings() {
        let policy = parse(
            &manifest(serde_json::json!({
                "mode": "monitor", "mutating": true,
                "rules": [{"apiGroups": ["cluster.x-k8s.io"], "apiVersions": ["v1beta2"],
                           "resources": ["machinesets"], "operations": ["CREATE", "UPDATE"]}],
                "contextAwareResources": [{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment"}],
                "settings": {"cloudTags": {"propagatingLabels": ["team"]}},
            })),
            "p.yaml".to_owned(),
            &[],
        )
        .unwrap();
        assert_eq!(
            (policy.name.as_str(), policy.mode.as_str(), policy.mutating),
            ("p", "monitor", true)
        );
        assert_eq!(policy.rules[0].resources, ["machinesets"]);
        assert!(policy.context_aware.contains(&(
            "cluster.x-k8s.io/v1beta2".to_owned(),
            "MachineDeployment".to_owned()
        )));
        let machinesets = Resource {
            group: "cluster.x-k8s.io".to_owned(),
            version: "v1beta2".to_owned(),
            plural: "machinesets".to_owned(),
            kind: "MachineSet".to_owned(),
            namespaced: true,
        };
        assert!(policy.rules[0].sends_updates_of(&machinesets));
    }

    #[test]
    fn refused_settings_and_other_kinds_name_the_source() {
        let error = parse(
            &manifest(serde_json::json!({
                "rules": [{"apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "operations": ["*"]}],
                "settings": {"mode": "sideways"},
            })),
            "p.yaml".to_owned(),
            &[],
        )
        .err()
        .unwrap();
        assert!(
            format!("{error:#}").starts_with("p.yaml: ClusterAdmissionPolicy p: "),
            "{error:#}"
        );
        let error = parse(
            &serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap"}),
            "c.yaml".to_owned(),
            &[],
        )
        .err()
        .unwrap();
        assert!(
            error
                .to_string()
                .contains("not a policies.kubewarden.io ClusterAdmissionPolicy")
        );
    }

    #[test]
    fn another_modules_policy_is_refused_before_its_settings_are_read() {
        let error = parse(
            &manifest(serde_json::json!({
                "module": "registry://ghcr.io/kubewarden/policies/safe-labels:v1.0.0",
                "rules": [{"apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "operations": ["*"]}],
                "settings": {"denied_labels": ["cost-center"]},
            })),
            "p.yaml".to_owned(),
            &[],
        )
        .err()
        .unwrap();
        let error = format!("{error:#}");
        assert!(
            error.starts_with("p.yaml: ClusterAdmissionPolicy p runs the module registry://ghcr.io/kubewarden/policies/safe-labels:v1.0.0"),
            "{error}"
        );
    }

    #[test]
    fn a_reference_names_its_repository_without_scheme_tag_or_digest() {
        for reference in [
            "registry://ghcr.io/plexsphere/policies/metadata-propagation:v0.1.0",
            "ghcr.io/plexsphere/policies/metadata-propagation@sha256:0123abcd",
            "registry://ghcr.io/plexsphere/policies/metadata-propagation:v1@sha256:0123abcd",
            "ghcr.io/plexsphere/policies/metadata-propagation",
        ] {
            assert_eq!(repository(reference), REPOSITORY, "{reference}");
        }
        assert_eq!(
            repository("registry://mirror.example.com:5000/platform/mp:v1"),
            "mirror.example.com:5000/platform/mp"
        );
        assert_eq!(
            repository("mirror.example.com:5000/mp"),
            "mirror.example.com:5000/mp"
        );
        assert_eq!(
            repository("file:///var/lib/policies/policy.wasm"),
            "file:///var/lib/policies/policy.wasm"
        );
    }

    #[test]
    fn another_modules_policy_is_refused_naming_its_module() {
        this_module(
            "p",
            "registry://ghcr.io/plexsphere/policies/metadata-propagation:v0.1.0",
            &[],
        )
        .unwrap();
        let error = this_module(
            "safe-labels",
            "registry://ghcr.io/kubewarden/policies/safe-labels:v1.0.0",
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with(
                "ClusterAdmissionPolicy safe-labels runs the module \
                 registry://ghcr.io/kubewarden/policies/safe-labels:v1.0.0, not this policy \
                 (ghcr.io/plexsphere/policies/metadata-propagation)"
            ),
            "{error}"
        );
        assert!(error.ends_with("--module REPOSITORY"), "{error}");
        let error = this_module("bare", "", &[]).unwrap_err().to_string();
        assert!(
            error.starts_with("ClusterAdmissionPolicy bare has no spec.module"),
            "{error}"
        );
    }

    #[test]
    fn a_mirror_named_with_module_is_this_module() {
        let mirror = ["registry.example.com/platform/metadata-propagation:v0.1.0".to_owned()];
        this_module(
            "p",
            "registry://registry.example.com/platform/metadata-propagation@sha256:00",
            &mirror,
        )
        .unwrap();
        let error = this_module("p", "registry://registry.example.com/other:v1", &mirror)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains(
                "(ghcr.io/plexsphere/policies/metadata-propagation, \
                 registry.example.com/platform/metadata-propagation)"
            ),
            "{error}"
        );
    }
}
