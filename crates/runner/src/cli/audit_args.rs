//! `policy-runner audit`: a dump, or the live cluster (`--cluster`) and
//! `--fix` with their connection, policy and pacing flags.

use std::path::PathBuf;

use clap::Args;

use super::common_args::{OutputFormat, SettingsArgs};

/// `policy-runner audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// A dump: what `kubectl get clusters,clusterclasses,machinedeployments,… -A -o yaml`
    /// (or `-o json`) prints; a `List`, several YAML documents, or JSON.
    /// Repeatable.
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "DUMP",
        required_unless_present = "cluster",
        conflicts_with = "cluster"
    )]
    pub dumps: Vec<PathBuf>,

    /// Policy settings (`mode` is ignored: the audit always validates).
    #[command(flatten)]
    pub settings: SettingsArgs,

    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,

    /// The full report: every object with its explanation, look-ups and
    /// patch (text: in the whole tree). By default, only the objects that
    /// deviate or are rejected get them, drawn with the parents that place
    /// them, and the others are counted per kind (JSON: listed with their
    /// status). A live audit keeps every object whole for it, so its memory
    /// grows with the cluster.
    #[arg(long)]
    pub full: bool,

    /// Audit the live cluster instead of a dump: the kinds the policies'
    /// rules match, listed page by page (docs/validate-and-audit.md,
    /// "Objects that were there first").
    #[command(flatten)]
    pub live: LiveArgs,
}

impl AuditArgs {
    /// How much of the report to print (`--full`).
    pub fn form(&self) -> cluster_audit::render::Form {
        match self.full {
            true => cluster_audit::render::Form::Full,
            false => cluster_audit::render::Form::Compact,
        }
    }
}

/// `policy-runner audit --cluster`: where the objects and the policies
/// come from, and `--fix`.
#[derive(Debug, Args)]
pub struct LiveArgs {
    /// Read the objects from the cluster kubectl would talk to.
    #[arg(long, requires = "policy_source")]
    pub cluster: bool,

    /// The kubeconfig file (default: KUBECONFIG, ~/.kube/config, or the
    /// in-cluster configuration in a pod).
    #[arg(long, value_name = "FILE", requires = "cluster")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context (default: its current context).
    #[arg(long, value_name = "NAME", requires = "cluster")]
    pub context: Option<String>,

    /// A deployed ClusterAdmissionPolicy: its settings, rules, mode and
    /// contextAwareResources, read from the cluster. Repeatable.
    #[arg(long = "policy-name", value_name = "NAME", group = "policy_source",
          requires = "cluster", conflicts_with_all = ["policy_files", "settings_path", "settings_json", "dumps"])]
    pub policy_names: Vec<String>,

    /// A ClusterAdmissionPolicy manifest (YAML or JSON) instead of a
    /// deployed one. Repeatable.
    #[arg(long = "policy", value_name = "FILE", group = "policy_source",
          requires = "cluster", conflicts_with_all = ["settings_path", "settings_json", "dumps"])]
    pub policy_files: Vec<PathBuf>,

    /// Audit (and fix) only the objects in this namespace. Cluster-scoped
    /// kinds are in no namespace: they are left out, and the report names
    /// them, unless `--cluster-scoped` is given.
    #[arg(short = 'n', long, value_name = "NAMESPACE", requires = "cluster")]
    pub namespace: Option<String>,

    /// With `-n`: also audit (and fix) the cluster-scoped kinds the rules
    /// match, listed whole (or as `-l` selects).
    #[arg(long, requires = "namespace")]
    pub cluster_scoped: bool,

    /// A policy whose `spec.module` names this repository (any tag or
    /// digest) runs this module too: a mirror of
    /// ghcr.io/plexsphere/policies/metadata-propagation. Repeatable. Any
    /// other module's policy is refused.
    #[arg(long = "module", value_name = "REPOSITORY", requires = "cluster")]
    pub modules: Vec<String>,

    /// List only the objects this label selector matches (kubectl's
    /// syntax); parents it leaves out are read one by one.
    #[arg(short = 'l', long, value_name = "SELECTOR", requires = "cluster")]
    pub selector: Option<String>,

    /// Bring each deviating object into line: one write that changes
    /// nothing by itself, preconditioned on the resourceVersion audited, so
    /// that the deployed policy's webhook makes the change.
    #[arg(long, requires = "cluster")]
    pub fix: bool,

    /// With `--fix`: server-side dry runs; print what admission would
    /// change, write nothing.
    #[arg(long, requires = "fix")]
    pub dry_run: bool,

    /// Requests per second, reads and writes alike.
    #[arg(long, value_name = "QPS", default_value_t = 5.0, requires = "cluster",
          value_parser = positive)]
    pub qps: f64,

    /// Requests that may go at once after a pause.
    #[arg(long, value_name = "N", default_value_t = 10, requires = "cluster",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub burst: u32,

    /// With `--fix`: write at most N objects in this run.
    #[arg(long, value_name = "N", requires = "fix",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_objects: Option<usize>,

    /// Objects per list page (`limit`).
    #[arg(long, value_name = "N", default_value_t = 500, requires = "cluster",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub page_size: u32,
}

/// A number above zero.
fn positive(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(n) if n > 0.0 && n.is_finite() => Ok(n),
        _ => Err(format!("{text:?} is not a number above zero")),
    }
}
