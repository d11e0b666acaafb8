//! The arguments of the commands that annotate, push, pull and describe a
//! policy module, as kwctl's `annotate`, `push`, `pull` and `scaffold
//! artifacthub` take them.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::common_args::OutputFormat;

/// `policy-runner annotate`.
#[derive(Debug, Args)]
pub struct AnnotateArgs {
    /// The policy metadata (metadata.yml).
    #[arg(short = 'm', long, value_name = "FILE")]
    pub metadata_path: PathBuf,

    /// Usage documentation stored as `io.kubewarden.policy.usage` (README.md).
    #[arg(short = 'u', long, value_name = "FILE")]
    pub usage_path: Option<PathBuf>,

    /// Where to write the annotated module.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output_path: PathBuf,

    /// The policy module to annotate.
    #[arg(value_name = "POLICY.wasm")]
    pub policy: PathBuf,
}

/// `policy-runner push`.
#[derive(Debug, Args)]
pub struct PushArgs {
    /// Push a module that carries no metadata (not annotated).
    #[arg(short = 'f', long)]
    pub force: bool,

    /// Reach the registry over plain HTTP (a local test registry).
    #[arg(long)]
    pub insecure_http: bool,

    /// kwctl sources file; its `insecure_sources` are reached over plain HTTP.
    #[arg(long, value_name = "FILE")]
    pub sources_path: Option<PathBuf>,

    /// `text`, or `json` for `{"immutable_ref": …}`.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,

    /// The annotated policy module.
    #[arg(value_name = "POLICY.wasm")]
    pub policy: PathBuf,

    /// Destination: `[registry://]HOST[:PORT]/REPOSITORY:TAG`.
    #[arg(value_name = "URI")]
    pub uri: String,
}

/// `policy-runner pull`.
#[derive(Debug, Args)]
pub struct PullArgs {
    /// Reach the registry over plain HTTP (a local test registry).
    #[arg(long)]
    pub insecure_http: bool,

    /// kwctl sources file; its `insecure_sources` are reached over plain HTTP.
    #[arg(long, value_name = "FILE")]
    pub sources_path: Option<PathBuf>,

    /// Where to write the module.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output_path: PathBuf,

    /// Source: `[registry://]HOST[:PORT]/REPOSITORY:TAG` or `…@sha256:DIGEST`.
    #[arg(value_name = "URI")]
    pub uri: String,
}

/// `policy-runner scaffold …`.
#[derive(Debug, Subcommand)]
pub enum ScaffoldCommand {
    /// The artifacthub-pkg.yml of the policy, like `kwctl scaffold artifacthub`.
    Artifacthub(ArtifacthubArgs),
}

/// `policy-runner scaffold artifacthub`.
#[derive(Debug, Args)]
pub struct ArtifacthubArgs {
    /// The policy metadata (default: metadata.yml or metadata.yaml).
    #[arg(short = 'm', long, value_name = "FILE")]
    pub metadata_path: Option<PathBuf>,

    /// Rancher UI questions (default: questions-ui.yml or .yaml, if present).
    #[arg(short = 'q', long, value_name = "FILE")]
    pub questions_path: Option<PathBuf>,

    /// Where to write the document (default: stdout).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}
