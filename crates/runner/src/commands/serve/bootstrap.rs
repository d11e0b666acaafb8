//! Loading policies.yml's policies as policy-server 1.35 bootstraps them
//! (`evaluation_environment.rs`, `precompiled_policy.rs`): each module must
//! carry Kubewarden metadata with protocol version v1 (an unannotated
//! module is refused, unlike under kwctl), is compiled once, and its
//! settings are validated on a fresh instance; any failure stops the
//! server before it listens, naming the policy.

use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, anyhow, bail};
use semver::Version;

use crate::commands::load::embedded_metadata;
use crate::commands::metadata::Metadata;
use crate::commands::serve::policies::PolicyEntry;
use crate::host::callback::{self, Host};
use crate::host::capabilities::HostCapabilities;
use crate::host::cluster::Cluster;
use crate::host::lookups::Lookups;
use crate::host::policy::{Module, Policy, PolicyError};

/// The Kubewarden release whose policy-server `serve` stands for: a
/// policy's `minimumKubewardenVersion` is checked against it.
const KUBEWARDEN_VERSION: Version = Version::new(1, 35, 0);

/// A policy ready to serve requests.
pub struct Served {
    /// Its policies.yml entry.
    pub entry: PolicyEntry,
    /// The compiled module.
    pub module: Module,
    /// Its `hostCapabilities`, parsed.
    pub capabilities: HostCapabilities,
}

impl Served {
    /// A fresh instance whose host grants the entry's capabilities and
    /// resources and asks `cluster` (policy-server's `rehydrate`).
    pub fn instantiate(&self, cluster: &Cluster) -> Result<Policy, PolicyError> {
        let lookups = Lookups::Cluster(cluster.clone());
        let host = Host::new(self.entry.context_aware_resources.clone(), lookups)
            .with_capabilities(self.capabilities.clone());
        self.module
            .instantiate(callback::callback(Arc::new(Mutex::new(host))))
    }
}

/// Loads policy `id`: its capabilities, its module (checked and compiled,
/// interrupted after `timeoutEvalSeconds` or else `global_timeout`
/// seconds), and its settings, validated on a fresh instance.
pub fn bootstrap(
    id: &str,
    entry: PolicyEntry,
    global_timeout: Option<u64>,
    cluster: &Cluster,
) -> Result<Served> {
    let capabilities = HostCapabilities::new(entry.host_capabilities.iter().map(String::as_str))
        .map_err(|e| anyhow!("invalid hostCapabilities pattern for policy {id}: {e}"))?;
    let path = &entry.module;
    let bytes = std::fs::read(path)
        .with_context(|| format!("policy {id}: cannot read module {}", path.display()))?;
    check_metadata(&bytes).with_context(|| format!("policy {id}: {}", path.display()))?;
    let deadline = entry.timeout_eval_seconds.or(global_timeout);
    let module = Module::compile_with_deadline(&bytes, deadline)
        .with_context(|| format!("policy {id}: {}", path.display()))?;
    let served = Served {
        entry,
        module,
        capabilities,
    };
    let instance = served
        .instantiate(cluster)
        .with_context(|| format!("policy {id}"))?;
    if let Err(message) = instance.validate_settings(&served.entry.settings) {
        let message = if message.is_empty() {
            "no message"
        } else {
            &message
        };
        bail!("policy {id}: Policy settings are invalid: {message}");
    }
    Ok(served)
}

/// policy-server's checks of the embedded metadata: a waPC module (the
/// only kind the runner hosts) with protocol version v1, for a Kubewarden
/// no newer than [`KUBEWARDEN_VERSION`].
fn check_metadata(module: &[u8]) -> Result<()> {
    let metadata = embedded_metadata(module)?;
    let Some(metadata) = metadata else {
        bail!(
            "Policy is missing protocol version, which is required for KubewardenWapc \
             execution mode (the module carries no metadata: annotate it with \
             `policy-runner annotate` or `kwctl annotate`)"
        );
    };
    check_declared(&metadata)
}

fn check_declared(metadata: &Metadata) -> Result<()> {
    if let Some(minimum) = &metadata.minimum_kubewarden_version {
        let wanted = Version::parse(minimum.trim_start_matches('v'))
            .map_err(|e| anyhow!("invalid minimumKubewardenVersion {minimum:?}: {e}"))?;
        let wanted = Version::new(wanted.major, wanted.minor, 0);
        if KUBEWARDEN_VERSION < wanted {
            bail!(
                "Policy required Kubewarden version {wanted} but is running on {KUBEWARDEN_VERSION}"
            );
        }
    }
    if metadata.execution_mode != "kubewarden-wapc" {
        bail!(
            "execution mode {:?} is not supported by policy-runner, which hosts waPC \
             (kubewarden-wapc) policies only",
            metadata.execution_mode
        );
    }
    match metadata.protocol_version.as_deref() {
        Some("v1") => Ok(()),
        Some(other) => bail!("Policy uses protocol version {other:?} but only V1 is supported"),
        None => bail!(
            "Policy is missing protocol version, which is required for KubewardenWapc \
             execution mode"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(extra: &str) -> Metadata {
        Metadata::from_yaml(&format!("rules: []\nmutating: false\n{extra}")).unwrap()
    }

    fn refusal(extra: &str) -> String {
        check_declared(&metadata(extra)).unwrap_err().to_string()
    }

    #[test]
    fn metadata_is_checked_as_policy_server_checks_it() {
        assert!(check_declared(&metadata("protocolVersion: v1\n")).is_ok());
        assert_eq!(
            refusal(""),
            "Policy is missing protocol version, which is required for KubewardenWapc \
             execution mode"
        );
        assert_eq!(
            refusal("protocolVersion: v2\n"),
            "Policy uses protocol version \"v2\" but only V1 is supported"
        );
        assert_eq!(
            refusal("protocolVersion: v1\nminimumKubewardenVersion: 1.40.0\n"),
            "Policy required Kubewarden version 1.40.0 but is running on 1.35.0"
        );
        assert!(
            check_declared(&metadata(
                "protocolVersion: v1\nminimumKubewardenVersion: v1.35.9\n"
            ))
            .is_ok()
        );
        assert!(refusal("protocolVersion: v1\nexecutionMode: opa\n").contains("\"opa\""));
    }

    #[test]
    fn an_unannotated_module_is_refused() {
        let module = wat::parse_str("(module)").unwrap();
        let error = check_metadata(&module).unwrap_err().to_string();
        assert!(
            error.starts_with("Policy is missing protocol version"),
            "{error}"
        );
    }
}
