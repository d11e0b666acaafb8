//! Command-line parsing: a compatible subset of `kwctl run`, `kwctl annotate`
//! and `kwctl bench`.
//!
//! clap fills typed structs here; run.rs and annotate.rs execute them (kwctl
//! keeps the same split between `cli/` and `command/`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Runs a Kubewarden waPC policy module locally, the way `kwctl run` does.
#[derive(Debug, Parser)]
#[command(name = "policy-runner", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Evaluate one admission request and print the AdmissionResponse on stdout.
    Run(RunArgs),
    /// Embed metadata.yml (and the README) into the module, like `kwctl annotate`.
    Annotate(AnnotateArgs),
    /// Time `validate` on one request, like `kwctl bench`.
    Bench(BenchArgs),
}

/// `policy-runner run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// File holding an AdmissionRequest or a whole AdmissionReview (JSON).
    #[arg(short = 'r', long, value_name = "FILE")]
    pub request_path: PathBuf,

    /// Policy settings as an inline JSON (or YAML) map.
    #[arg(
        short = 's',
        long,
        value_name = "JSON",
        conflicts_with = "settings_path"
    )]
    pub settings_json: Option<String>,

    /// File holding the policy settings (YAML or JSON).
    #[arg(long, value_name = "FILE")]
    pub settings_path: Option<PathBuf>,

    /// Grant the Kubernetes resources listed in the module's embedded
    /// `contextAwareResources` (written by `annotate`).
    #[arg(long)]
    pub allow_context_aware: bool,

    /// kwctl session file answering the policy's host calls, in order.
    #[arg(long, value_name = "FILE")]
    pub replay_host_capabilities_interactions: Option<PathBuf>,

    /// The policy module (.wasm).
    #[arg(value_name = "POLICY.wasm")]
    pub policy: PathBuf,
}

/// Where the settings come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsSource {
    /// No settings flag: `{}`.
    Empty,
    /// `--settings-json`.
    Inline(String),
    /// `--settings-path`.
    File(PathBuf),
}

impl RunArgs {
    /// The settings source; clap has already refused both flags together.
    pub fn settings_source(&self) -> SettingsSource {
        match (&self.settings_json, &self.settings_path) {
            (Some(json), _) => SettingsSource::Inline(json.clone()),
            (None, Some(path)) => SettingsSource::File(path.clone()),
            (None, None) => SettingsSource::Empty,
        }
    }
}

/// `policy-runner bench`: the `run` inputs plus how long to measure.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The request, settings, replay session and module, as for `run`.
    #[command(flatten)]
    pub run: RunArgs,

    /// Timed evaluations.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    pub iterations: u32,

    /// Untimed evaluations before the timed ones.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub warmup: u32,

    /// A floor module (decodes the request and accepts) to run the same
    /// request against, reporting the ratio of medians policy / floor.
    #[arg(long, value_name = "FLOOR.wasm")]
    pub floor: Option<PathBuf>,

    /// Report format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

/// How `bench` prints its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Lines for people.
    Text,
    /// One JSON object, for scripts.
    Json,
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::error::ErrorKind;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("policy-runner").chain(args.iter().copied()))
    }

    #[test]
    fn cli_run_parses_every_flag() {
        let cli = parse(&[
            "run",
            "--request-path",
            "req.json",
            "--settings-path",
            "s.yml",
            "--allow-context-aware",
            "--replay-host-capabilities-interactions",
            "session.yml",
            "policy.wasm",
        ])
        .unwrap();

        let Command::Run(run) = cli.command else {
            panic!("expected run");
        };
        assert_eq!(run.request_path, PathBuf::from("req.json"));
        assert_eq!(
            run.settings_source(),
            SettingsSource::File(PathBuf::from("s.yml"))
        );
        assert!(run.allow_context_aware);
        assert_eq!(
            run.replay_host_capabilities_interactions,
            Some(PathBuf::from("session.yml"))
        );
        assert_eq!(run.policy, PathBuf::from("policy.wasm"));
    }

    #[test]
    fn cli_run_without_settings_is_empty() {
        let cli = parse(&["run", "-r", "req.json", "policy.wasm"]).unwrap();

        let Command::Run(run) = cli.command else {
            panic!("expected run");
        };
        assert_eq!(run.settings_source(), SettingsSource::Empty);
        assert!(!run.allow_context_aware);
    }

    #[test]
    fn cli_run_conflicting_settings_names_both_flags() {
        let err = parse(&[
            "run",
            "--request-path",
            "req.json",
            "--settings-json",
            "{}",
            "--settings-path",
            "s.yml",
            "policy.wasm",
        ])
        .unwrap_err();

        assert_eq!(err.kind(), ErrorKind::ArgumentConflict);
        let text = err.to_string();
        assert!(text.contains("--settings-json"), "{text}");
        assert!(text.contains("--settings-path"), "{text}");
    }

    #[test]
    fn cli_bench_parses_run_flags_and_its_own() {
        let cli = parse(&[
            "bench",
            "--request-path",
            "req.json",
            "--settings-json",
            "{}",
            "--allow-context-aware",
            "--replay-host-capabilities-interactions",
            "session.yml",
            "--iterations",
            "50",
            "--warmup",
            "5",
            "--floor",
            "floor.wasm",
            "--output",
            "json",
            "policy.wasm",
        ])
        .unwrap();

        let Command::Bench(bench) = cli.command else {
            panic!("expected bench");
        };
        assert_eq!(bench.run.request_path, PathBuf::from("req.json"));
        assert_eq!(
            bench.run.settings_source(),
            SettingsSource::Inline("{}".to_owned())
        );
        assert!(bench.run.allow_context_aware);
        assert_eq!(bench.iterations, 50);
        assert_eq!(bench.warmup, 5);
        assert_eq!(bench.floor, Some(PathBuf::from("floor.wasm")));
        assert_eq!(bench.output, OutputFormat::Json);
        assert_eq!(bench.run.policy, PathBuf::from("policy.wasm"));
    }

    #[test]
    fn cli_bench_defaults_and_refuses_zero_iterations() {
        let cli = parse(&["bench", "-r", "req.json", "policy.wasm"]).unwrap();

        let Command::Bench(bench) = cli.command else {
            panic!("expected bench");
        };
        assert_eq!((bench.iterations, bench.warmup), (1000, 100));
        assert_eq!(bench.floor, None);
        assert_eq!(bench.output, OutputFormat::Text);

        let err = parse(&["bench", "-r", "req.json", "--iterations", "0", "p.wasm"]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ValueValidation);
    }

    #[test]
    fn cli_annotate_parses_kwctl_flags() {
        let cli = parse(&[
            "annotate",
            "--metadata-path",
            "metadata.yml",
            "--usage-path",
            "README.md",
            "--output-path",
            "annotated-policy.wasm",
            "policy.wasm",
        ])
        .unwrap();

        let Command::Annotate(annotate) = cli.command else {
            panic!("expected annotate");
        };
        assert_eq!(annotate.metadata_path, PathBuf::from("metadata.yml"));
        assert_eq!(annotate.usage_path, Some(PathBuf::from("README.md")));
        assert_eq!(annotate.output_path, PathBuf::from("annotated-policy.wasm"));
        assert_eq!(annotate.policy, PathBuf::from("policy.wasm"));
    }
}
