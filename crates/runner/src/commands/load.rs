//! Loading a policy the way `kwctl run` does, for `run` and `bench`: read
//! the module, decide which Kubernetes resources it may read (kwctl
//! `command/run/evaluator.rs`, with its notices), load what answers its
//! look-ups (a replay session or `--parents` objects), compile the module,
//! and have an instance accept the settings. kwctl prints its notices
//! before the evaluation; the runner prints them after it, and only when
//! the policy's look-ups were denied: an evaluation that looked nothing
//! up (a Kubernetes kind, a composite resource) lost nothing.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use anyhow::{Context, Result, anyhow};
use serde_json::Value;

use crate::cli::RunArgs;
use crate::commands::input::read_lookups;
use crate::commands::metadata::{Metadata, MetadataError};
use crate::commands::wasm_sections::SectionError;
use crate::host::callback::{self, ContextAwareResource, Host};
use crate::host::policy::{Module, Policy};

/// The warnings when an annotated context-aware policy runs without
/// `--allow-context-aware`: kwctl's (`command/run/evaluator.rs`), except
/// that kwctl points at its `inspect` command, which the runner does not
/// have.
const NO_ACCESS_WARNINGS: [&str; 2] = [
    "Policy requires access to Kubernetes resources at evaluation time. During this execution the access to Kubernetes resources is denied. This can cause the policy to not behave properly",
    "The resources it may read are the `contextAwareResources` of the module's metadata (policy-metadata.yml); review them, then run the policy with the `--allow-context-aware` flag.",
];

/// kwctl's notice when `--allow-context-aware` meets an unannotated module.
const NOT_ANNOTATED_NOTICE: &str =
    "Policy is not annotated, access to Kubernetes resources is not allowed";

/// A compiled policy whose settings have been accepted, and the host state
/// behind its instances' callbacks.
pub struct Loaded {
    /// The compiled module.
    pub module: Module,
    /// The host answering every instance's callbacks (allow-list, replay
    /// session).
    pub host: Arc<Mutex<Host>>,
    /// kwctl's notices about the resources the policy may not read, for
    /// [`Loaded::warn_denied_lookups`].
    access_notices: Vec<&'static str>,
}

impl Loaded {
    /// A fresh instance of the module, its host calls answered by
    /// [`Loaded::host`].
    pub fn instantiate(&self) -> Result<Policy> {
        Ok(self
            .module
            .instantiate(callback::callback(Arc::clone(&self.host)))?)
    }

    /// The host state (also after a callback panicked holding it).
    pub fn host(&self) -> MutexGuard<'_, Host> {
        self.host.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Prints kwctl's notices about the resources the policy may not read
    /// (`--allow-context-aware` missing, or given to an unannotated module)
    /// once an evaluation had a look-up denied; nothing otherwise (`run`,
    /// `bench`). The host has named each denied resource as it refused it.
    pub fn warn_denied_lookups(&self) {
        for notice in access_warnings(&self.access_notices, self.host().denied_lookups()) {
            eprintln!("WARN policy-runner: {notice}");
        }
    }
}

/// `notices` when a look-up was denied, else none.
fn access_warnings<'a>(notices: &[&'a str], denied: &[String]) -> Vec<&'a str> {
    if denied.is_empty() {
        Vec::new()
    } else {
        notices.to_vec()
    }
}

/// Warns about what the policy did not ask for: recorded exchanges left
/// over, or `--parents` objects no look-up named (`run`, `profile`).
pub fn warn_leftovers(leftovers: Vec<String>) {
    for leftover in leftovers {
        eprintln!("WARN policy-runner: {leftover}");
    }
}

/// What `run` and `bench` share: read the module at `path`, decide which
/// resources it may read (keeping kwctl's notices for
/// [`Loaded::warn_denied_lookups`]), load the replay
/// session, compile the module, and have an instance of it accept
/// `settings` (refusal → `Provided settings are not valid: …`). `args` says
/// how to host it (context-aware access, replay session, field masks).
/// Returns the compiled policy and that instance.
pub fn load(path: &Path, args: &RunArgs, settings: &Value) -> Result<(Loaded, Policy)> {
    load_granted(path, args, settings, None)
}

/// [`load`], granted `grants` when a policy definition names them (as
/// kwctl grants a ClusterAdmissionPolicy's `contextAwareResources`,
/// `--allow-context-aware` or not), else as `args` say.
pub fn load_granted(
    path: &Path,
    args: &RunArgs,
    settings: &Value,
    grants: Option<&BTreeSet<ContextAwareResource>>,
) -> Result<(Loaded, Policy)> {
    let module =
        fs::read(path).with_context(|| format!("cannot read policy module {}", path.display()))?;
    let metadata = match &args.metadata_path {
        Some(file) => {
            let text = fs::read_to_string(file)
                .with_context(|| format!("cannot read metadata {}", file.display()))?;
            let metadata = Metadata::from_yaml(&text)
                .with_context(|| format!("invalid metadata {}", file.display()))?;
            Some(metadata)
        }
        None => embedded_metadata(&module)
            .with_context(|| format!("cannot read the metadata of {}", path.display()))?,
    };

    let (allow_list, access_notices) = match grants {
        Some(grants) => (grants.clone(), Vec::new()),
        None => allow_list(args.allow_context_aware, metadata.as_ref()),
    };
    let lookups = read_lookups(
        args.replay_host_capabilities_interactions.as_deref(),
        &args.parents,
        !args.ignore_field_masks,
    )?;
    let mut host = Host::new(allow_list, lookups);
    if args.record_session.is_some() {
        host.record();
    }

    let loaded = Loaded {
        module: Module::compile(&module)?,
        host: Arc::new(Mutex::new(host)),
        access_notices,
    };
    let policy = loaded.instantiate()?;
    policy
        .validate_settings(settings)
        .map_err(|message| anyhow!("Provided settings are not valid: {message}"))?;
    Ok((loaded, policy))
}

/// The resources the policy may read, and the notices kwctl prints about
/// them. Without `--allow-context-aware` nothing is granted; with it, the
/// module's embedded `contextAwareResources` are (nothing if unannotated).
fn allow_list(
    allow_context_aware: bool,
    metadata: Option<&Metadata>,
) -> (BTreeSet<ContextAwareResource>, Vec<&'static str>) {
    match (allow_context_aware, metadata) {
        (false, Some(metadata)) if !metadata.context_aware_resources.is_empty() => {
            (BTreeSet::new(), NO_ACCESS_WARNINGS.to_vec())
        }
        (false, _) => (BTreeSet::new(), Vec::new()),
        (true, Some(metadata)) => (metadata.context_aware_resources.clone(), Vec::new()),
        (true, None) => (BTreeSet::new(), vec![NOT_ANNOTATED_NOTICE]),
    }
}

/// The module's embedded metadata; a text (`.wat`) module has none.
pub fn embedded_metadata(module: &[u8]) -> Result<Option<Metadata>, MetadataError> {
    match Metadata::from_module(module) {
        Err(MetadataError::Module(SectionError::NotWasm)) => Ok(None),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata_with(resources: &[(&str, &str)]) -> Metadata {
        let resources: Vec<String> = resources
            .iter()
            .map(|(api_version, kind)| format!("{{apiVersion: {api_version}, kind: {kind}}}"))
            .collect();
        Metadata::from_yaml(&format!(
            "rules: []\nmutating: false\ncontextAwareResources: [{}]\n",
            resources.join(", ")
        ))
        .unwrap()
    }

    fn cluster() -> ContextAwareResource {
        ContextAwareResource {
            api_version: "cluster.x-k8s.io/v1beta1".to_owned(),
            kind: "Cluster".to_owned(),
        }
    }

    #[test]
    fn allow_list_trusts_embedded_resources_when_allowed() {
        let metadata = metadata_with(&[("cluster.x-k8s.io/v1beta1", "Cluster")]);

        assert_eq!(
            allow_list(true, Some(&metadata)),
            (BTreeSet::from([cluster()]), Vec::new())
        );
    }

    #[test]
    fn allow_list_is_empty_without_flag_and_warns_like_kwctl() {
        let metadata = metadata_with(&[("cluster.x-k8s.io/v1beta1", "Cluster")]);

        assert_eq!(
            allow_list(false, Some(&metadata)),
            (BTreeSet::new(), NO_ACCESS_WARNINGS.to_vec())
        );
    }

    #[test]
    fn allow_list_is_empty_for_unannotated_module() {
        assert_eq!(
            allow_list(true, None),
            (BTreeSet::new(), vec![NOT_ANNOTATED_NOTICE])
        );
        assert_eq!(allow_list(false, None), (BTreeSet::new(), Vec::new()));
    }

    #[test]
    fn access_warnings_only_after_a_denied_lookup() {
        let notices = NO_ACCESS_WARNINGS.to_vec();

        assert_eq!(access_warnings(&notices, &[]), Vec::<&str>::new());
        assert_eq!(
            access_warnings(
                &notices,
                &["cluster.x-k8s.io/v1beta2/MachineDeployment".to_owned()]
            ),
            notices
        );
        assert_eq!(
            access_warnings(&[], &["v1/Node".to_owned()]),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn embedded_metadata_is_none_for_text_modules() {
        assert_eq!(embedded_metadata(b"(module)").unwrap(), None);
    }
}
