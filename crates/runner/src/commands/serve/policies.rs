//! policies.yml as policy-server 1.35 reads it (`config.rs`,
//! `PolicyOrPolicyGroup::Policy`): a map from policy id (the last segment
//! of `/validate/<id>`, so no `/`) to an entry with camelCase fields,
//! unknown keys ignored (the controller writes `namespacedName`). Only
//! what the runner can host is accepted: `file:///` modules (nothing is
//! downloaded) and single policies (no policy groups); anything else is
//! refused by name rather than half-served.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value};
use url::Url;

use crate::host::callback::ContextAwareResource;

/// What policy-server does with a policy's verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyMode {
    /// The verdict is the answer.
    #[default]
    Protect,
    /// Always allowed, never mutated; the verdict is only logged.
    Monitor,
}

/// One policy of policies.yml, with policy-server's defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyEntry {
    /// The module, from its `file:///` URL.
    pub module: PathBuf,
    /// `policyMode` (default `protect`).
    pub policy_mode: PolicyMode,
    /// `allowedToMutate` (default false: a patch becomes a rejection).
    pub allowed_to_mutate: bool,
    /// `settings` (default `{}`).
    pub settings: Value,
    /// `contextAwareResources`: what `get_resource` may read.
    pub context_aware_resources: BTreeSet<ContextAwareResource>,
    /// `timeoutEvalSeconds`, overriding `--policy-timeout`.
    pub timeout_eval_seconds: Option<u64>,
    /// `message`: replaces the policy's own when it rejects.
    pub message: Option<String>,
    /// `hostCapabilities` patterns (none: every host call but logging is
    /// denied).
    pub host_capabilities: Vec<String>,
}

/// An entry as written; `policies` and `expression` only to recognise a
/// policy group.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEntry {
    module: Option<String>,
    #[serde(default)]
    policy_mode: PolicyMode,
    allowed_to_mutate: Option<bool>,
    settings: Option<Map<String, Value>>,
    #[serde(default)]
    context_aware_resources: BTreeSet<ContextAwareResource>,
    message: Option<String>,
    timeout_eval_seconds: Option<u64>,
    #[serde(default)]
    host_capabilities: Vec<String>,
    policies: Option<IgnoredAny>,
    expression: Option<IgnoredAny>,
}

/// Reads and checks the policies file at `path`.
pub fn read(path: &Path) -> Result<BTreeMap<String, PolicyEntry>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the policies file {}", path.display()))?;
    parse(&text).with_context(|| format!("error while loading policies from {}", path.display()))
}

/// Parses a policies file.
pub fn parse(text: &str) -> Result<BTreeMap<String, PolicyEntry>> {
    let entries: BTreeMap<String, Value> = match serde_norway::from_str(text)? {
        Value::Null => BTreeMap::new(),
        document => serde_json::from_value(document)
            .map_err(|e| anyhow!("the file must be a map from policy id to policy: {e}"))?,
    };
    if entries.is_empty() {
        bail!("no policies: the file names none");
    }
    entries
        .into_iter()
        .map(|(id, entry)| {
            let entry = policy(&id, entry).with_context(|| format!("policy {id:?}"))?;
            Ok((id, entry))
        })
        .collect()
}

fn policy(id: &str, entry: Value) -> Result<PolicyEntry> {
    if id.contains('/') {
        bail!("policy name '{id}' contains a '/' character");
    }
    let raw: RawEntry = serde_json::from_value(entry)?;
    if raw.policies.is_some() || raw.expression.is_some() {
        bail!(
            "policy groups (`policies`, `expression`) are not supported by policy-runner serve; \
             give each policy its own entry"
        );
    }
    let module = raw.module.ok_or_else(|| anyhow!("`module` is missing"))?;
    Ok(PolicyEntry {
        module: module_path(&module)?,
        policy_mode: raw.policy_mode,
        allowed_to_mutate: raw.allowed_to_mutate.unwrap_or(false),
        settings: Value::Object(raw.settings.unwrap_or_default()),
        context_aware_resources: raw.context_aware_resources,
        timeout_eval_seconds: raw.timeout_eval_seconds,
        message: raw.message,
        host_capabilities: raw.host_capabilities,
    })
}

/// The local file a `file:///abs/path.wasm` module names.
fn module_path(module: &str) -> Result<PathBuf> {
    let refused = || {
        anyhow!(
            "module {module:?} is not a file:/// URL: policy-runner serve loads modules from \
             local files only (file:///abs/path.wasm); registry:// and https:// modules need \
             policy-server, which downloads them"
        )
    };
    let url = Url::parse(module).map_err(|_| refused())?;
    if url.scheme() != "file" {
        return Err(refused());
    }
    url.to_file_path().map_err(|()| refused())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn error(text: &str) -> String {
        format!("{:#}", parse(text).unwrap_err())
    }

    #[test]
    fn an_entry_gets_policy_servers_defaults_and_unknown_keys_are_ignored() {
        let policies = parse(
            "clusterwide-capi:\n  module: file:///opt/p/policy.wasm\n  \
             namespacedName: {name: capi}\n  somethingNew: 1\n",
        )
        .unwrap();
        assert_eq!(
            policies["clusterwide-capi"],
            PolicyEntry {
                module: PathBuf::from("/opt/p/policy.wasm"),
                policy_mode: PolicyMode::Protect,
                allowed_to_mutate: false,
                settings: json!({}),
                context_aware_resources: BTreeSet::new(),
                timeout_eval_seconds: None,
                message: None,
                host_capabilities: Vec::new(),
            }
        );
    }

    #[test]
    fn every_field_is_read_in_camel_case() {
        let policies = parse(
            r#"
p1:
  module: file:///opt/p/a%20b.wasm
  policyMode: monitor
  allowedToMutate: true
  settings: {mode: validate}
  contextAwareResources: [{apiVersion: cluster.x-k8s.io/v1beta2, kind: Cluster}]
  timeoutEvalSeconds: 7
  message: custom
  hostCapabilities: ["kubernetes/get_resource"]
p2:
  module: file:///opt/p/b.wasm
  settings: null
"#,
        )
        .unwrap();
        let p1 = &policies["p1"];
        assert_eq!(p1.module, PathBuf::from("/opt/p/a b.wasm"));
        assert_eq!(p1.policy_mode, PolicyMode::Monitor);
        assert!(p1.allowed_to_mutate);
        assert_eq!(p1.settings, json!({"mode": "validate"}));
        assert_eq!(
            p1.context_aware_resources,
            BTreeSet::from([ContextAwareResource {
                api_version: "cluster.x-k8s.io/v1beta2".to_owned(),
                kind: "Cluster".to_owned(),
            }])
        );
        assert_eq!(p1.timeout_eval_seconds, Some(7));
        assert_eq!(p1.message.as_deref(), Some("custom"));
        assert_eq!(p1.host_capabilities, ["kubernetes/get_resource"]);
        assert_eq!(policies["p2"].settings, json!({}));
    }

    #[test]
    fn modules_other_than_local_files_are_refused_by_name() {
        for module in [
            "registry://ghcr.io/kubewarden/policies/x:v1",
            "https://example.com/p.wasm",
            "/opt/p/policy.wasm",
            "file://relative/p.wasm",
        ] {
            let text = error(&format!("p:\n  module: {module}\n"));
            assert!(
                text.starts_with(&format!(
                    "policy \"p\": module {module:?} is not a file:/// URL"
                )),
                "{text}"
            );
        }
    }

    #[test]
    fn ids_with_a_slash_groups_and_bad_entries_are_refused() {
        assert_eq!(
            error("a/b:\n  module: file:///p.wasm\n"),
            "policy \"a/b\": policy name 'a/b' contains a '/' character"
        );
        let group = error(
            "g:\n  policies: {a: {module: file:///p.wasm}}\n  expression: a()\n  message: no\n",
        );
        assert!(group.contains("policy groups"), "{group}");
        assert_eq!(
            error("p:\n  policyMode: protect\n"),
            "policy \"p\": `module` is missing"
        );
        let mode = error("p:\n  module: file:///p.wasm\n  policyMode: audit\n");
        assert!(
            mode.starts_with("policy \"p\": unknown variant `audit`"),
            "{mode}"
        );
        let settings = error("p:\n  module: file:///p.wasm\n  settings: [1]\n");
        assert!(
            settings.starts_with("policy \"p\": invalid type"),
            "{settings}"
        );
        assert!(error("").contains("no policies"));
        assert!(error("- a\n").contains("must be a map"));
    }
}
