//! Command-line parsing: a compatible subset of `kwctl run`, `annotate`,
//! `bench`, `push`, `pull` and `scaffold artifacthub`, of policy-server's
//! flags (`serve`, in `cli/serve.rs`), and the runner's own `profile`,
//! `explain`, `audit` and `patch`, into typed structs the modules of
//! `commands/` and `tools/` execute.

mod audit_args;
mod common_args;
mod distribution;
mod serve_args;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub use audit_args::AuditArgs;
#[cfg(feature = "network")]
pub use audit_args::LiveArgs;
pub use common_args::{OutputFormat, SettingsArgs};
#[cfg(feature = "network")]
pub use distribution::ArtifacthubArgs;
pub use distribution::{AnnotateArgs, PullArgs, PushArgs, ScaffoldCommand};
pub use serve_args::ServeArgs;

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
    /// Time `validate` on one request: on a fresh instance per evaluation
    /// (policy-server) or on one instance (`kwctl bench`).
    Bench(BenchArgs),
    /// Time each phase of one evaluation, with the policy's core linked
    /// natively (where a `bench` evaluation's time goes).
    Profile(ProfileArgs),
    /// Explain why each label, annotation and tag did or did not flow, with
    /// parents read from files (no cluster, no replay session).
    Explain(ExplainArgs),
    /// Audit a whole management cluster from a dump (`kubectl get … -o yaml`):
    /// every object the policy acts on, in validate mode, over the ownership
    /// tree. Exit code 0: nothing deviates; 1: something deviates or is
    /// rejected; 2: bad input.
    Audit(AuditArgs),
    /// Apply an RFC 6902 JSON patch to an object and print the result (what
    /// the API server does with a response's patch).
    Patch(PatchArgs),
    /// Push an annotated module to an OCI registry, like `kwctl push`.
    Push(PushArgs),
    /// Pull a module from an OCI registry into a file, like `kwctl pull -o`.
    Pull(PullArgs),
    /// Generate files from the policy metadata, like `kwctl scaffold`.
    #[command(subcommand)]
    Scaffold(ScaffoldCommand),
    /// Serve policies as an admission webhook, like Kubewarden's
    /// policy-server (its flags and policies.yml; `file://` modules only).
    Serve(ServeArgs),
}

/// `policy-runner explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// File holding an AdmissionRequest, an AdmissionReview, or just the
    /// object (YAML or JSON; a bare object is explained as an UPDATE).
    #[arg(short = 'r', long, value_name = "FILE")]
    pub request_path: PathBuf,

    /// The operation to explain a bare object as (default UPDATE).
    #[arg(long, value_name = "CREATE|UPDATE", value_parser = ["CREATE", "UPDATE"])]
    pub operation: Option<String>,

    /// A file with parent objects (YAML, several documents allowed, or
    /// JSON; a `List` or an array works too). Repeatable.
    #[arg(short = 'p', long = "parent", value_name = "FILE")]
    pub parents: Vec<PathBuf>,

    /// Policy settings.
    #[command(flatten)]
    pub settings: SettingsArgs,

    /// Output format.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,

    /// Also list the in-place fields neither parent nor child sets.
    #[arg(short = 'v', long)]
    pub verbose: bool,

    /// The policy metadata whose `contextAwareResources` say what the
    /// look-ups may read, as for a module annotated with it (`annotate -m`);
    /// default: the policy-metadata.yml the module is shipped with. A
    /// look-up it does not grant is refused, as a policy-server refuses the
    /// module's, and the request is rejected (500).
    #[arg(short = 'm', long, value_name = "FILE")]
    pub metadata_path: Option<PathBuf>,
}

/// `policy-runner patch`.
#[derive(Debug, Args)]
pub struct PatchArgs {
    /// The object to patch, YAML or JSON (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub object: PathBuf,

    /// The JSON patch: an array of operations (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub patch: PathBuf,
}

/// `policy-runner run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// File holding an AdmissionRequest or a whole AdmissionReview (JSON or
    /// YAML), or, with `--operation`, just the object.
    #[arg(short = 'r', long, value_name = "FILE")]
    pub request_path: PathBuf,

    /// Build the AdmissionRequest around the bare object the file holds.
    #[arg(long, value_name = "CREATE|UPDATE", value_parser = ["CREATE", "UPDATE"])]
    pub operation: Option<String>,

    /// With `--operation UPDATE`: the old object (default: the object itself).
    #[arg(long, value_name = "FILE", requires = "operation")]
    pub old_object: Option<PathBuf>,

    /// Policy settings.
    #[command(flatten)]
    pub settings: SettingsArgs,

    /// Grant the Kubernetes resources listed in the module's embedded
    /// `contextAwareResources` (written by `annotate`).
    #[arg(long)]
    pub allow_context_aware: bool,

    /// With `--allow-context-aware`: grant the `contextAwareResources` of
    /// this policy metadata instead of the module's, as a
    /// ClusterAdmissionPolicy's `spec.contextAwareResources` replace them
    /// (a user's own kinds, such as the XRs that compose managed resources).
    #[arg(
        short = 'm',
        long,
        value_name = "FILE",
        requires = "allow_context_aware"
    )]
    pub metadata_path: Option<PathBuf>,

    /// kwctl session file answering the policy's host calls, in order:
    /// each look-up must match the next entry exactly (apiVersion, kind,
    /// name, namespace, disable_cache and field masks).
    #[arg(long, value_name = "FILE", conflicts_with = "parents")]
    pub replay_host_capabilities_interactions: Option<PathBuf>,

    /// Objects that answer the policy's look-ups, as a cluster would: a
    /// `List` or YAML/JSON documents, as `kubectl get -o yaml` prints them.
    /// Each look-up gets the object with its apiVersion, kind, namespace and
    /// name, pruned by the look-up's field masks, or the host's NotFound
    /// text. Objects no look-up asked for are reported on stderr.
    /// Repeatable.
    #[arg(long, value_name = "FILE")]
    pub parents: Vec<PathBuf>,

    /// Write the look-ups the policy made, with their field masks and the
    /// answers it got, as a kwctl session (`kwctl run
    /// --replay-host-capabilities-interactions OUT.yml` replays it).
    #[arg(long, value_name = "OUT.yml")]
    pub record_session: Option<PathBuf>,

    /// Evaluate on the instance that validated the settings (`kwctl run`,
    /// `kwctl bench`) instead of a fresh instance per evaluation
    /// (policy-server).
    #[arg(long, env = "POLICY_RUNNER_REUSE_INSTANCE", value_parser = clap::builder::BoolishValueParser::new())]
    pub reuse_instance: bool,

    /// Answer look-ups with whole objects (recorded or `--parents`),
    /// without pruning them by the look-ups' field masks, as kwctl's replay
    /// does (policy-server prunes by the masks). A replay session's entries
    /// must still match the masks the policy sends.
    #[arg(long, env = "POLICY_RUNNER_IGNORE_FIELD_MASKS", value_parser = clap::builder::BoolishValueParser::new())]
    pub ignore_field_masks: bool,

    /// The policy module (.wasm); for `run`, also a policy definition
    /// (a ClusterAdmissionPolicy or AdmissionPolicy `.yaml` whose
    /// `spec.module` is a `file://` URI), run with its settings and
    /// `contextAwareResources`, as kwctl runs one.
    #[arg(value_name = "POLICY.wasm")]
    pub policy: PathBuf,
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

    /// The accept floor: a module that decodes the payload and accepts,
    /// measured in the same run and shape as the policy.
    #[arg(long, alias = "floor", value_name = "FLOOR.wasm")]
    pub accept_floor: Option<PathBuf>,

    /// The echo floor: a module that decodes the payload and returns the
    /// request's object as `mutated_object` (the least a mutating policy
    /// costs, the host's diff included), measured in the same run and shape.
    #[arg(long, value_name = "FLOOR.wasm")]
    pub echo_floor: Option<PathBuf>,

    /// The look-up floor: a module that makes the policy's look-ups for the
    /// request (same field masks), decodes the answers as the policy does
    /// and echoes the request's object (the least a context-aware policy
    /// costs), measured in the same run and shape.
    #[arg(long, value_name = "FLOOR.wasm")]
    pub lookup_floor: Option<PathBuf>,

    /// The result floor: a module that decodes the payload (and, built with
    /// the look-up floor's look-ups, makes them) and answers with the
    /// policy's own reply for this request, compiled in, without computing
    /// it (crates/floor; the host then pays the reply's decode and diff as
    /// for the policy), measured in the same run and shape.
    #[arg(long, value_name = "FLOOR.wasm")]
    pub result_floor: Option<PathBuf>,

    /// Write the policy's reply to this request (the bytes `validate`
    /// returns, identical on every evaluation) to FILE: what a result floor
    /// is built with.
    #[arg(long, value_name = "FILE")]
    pub save_reply: Option<PathBuf>,

    /// Report format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

/// `policy-runner profile`.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// File holding an AdmissionRequest or a whole AdmissionReview (JSON).
    #[arg(short = 'r', long, value_name = "FILE")]
    pub request_path: PathBuf,

    /// Policy settings.
    #[command(flatten)]
    pub settings: SettingsArgs,

    /// kwctl session file answering the look-ups, in order.
    #[arg(long, value_name = "FILE", conflicts_with = "parents")]
    pub replay_host_capabilities_interactions: Option<PathBuf>,

    /// Objects that answer the look-ups, as for `run --parents`: a `List`
    /// or YAML/JSON documents, as `kubectl get -o yaml` prints them, each
    /// look-up answered with the object it names, pruned by its field
    /// masks, or the host's NotFound text. Repeatable.
    #[arg(long, value_name = "FILE")]
    pub parents: Vec<PathBuf>,

    /// Also time what a fresh instance of this module costs before and
    /// after `validate`: instantiation, `wapc_init` and the drop.
    /// Repeatable, to compare modules (the policy and a floor).
    #[arg(long = "module", value_name = "MODULE.wasm")]
    pub modules: Vec<PathBuf>,

    /// Timed evaluations.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    pub iterations: u32,

    /// Untimed evaluations before the timed ones.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub warmup: u32,
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
        assert_eq!(run.settings.settings_path, Some(PathBuf::from("s.yml")));
        assert_eq!(run.settings.settings_json, None);
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
        assert_eq!(run.settings.settings_json, None);
        assert_eq!(run.settings.settings_path, None);
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
            "--echo-floor",
            "echo.wasm",
            "--lookup-floor",
            "lookup.wasm",
            "--result-floor",
            "result.wasm",
            "--save-reply",
            "reply.json",
            "--reuse-instance",
            "--output",
            "json",
            "policy.wasm",
        ])
        .unwrap();

        let Command::Bench(bench) = cli.command else {
            panic!("expected bench");
        };
        assert_eq!(bench.run.request_path, PathBuf::from("req.json"));
        assert_eq!(bench.run.settings.settings_json.as_deref(), Some("{}"));
        assert!(bench.run.allow_context_aware);
        assert_eq!(bench.iterations, 50);
        assert_eq!(bench.warmup, 5);
        // `--floor` is the accept floor's old name
        assert_eq!(bench.accept_floor, Some(PathBuf::from("floor.wasm")));
        assert_eq!(bench.echo_floor, Some(PathBuf::from("echo.wasm")));
        assert_eq!(bench.lookup_floor, Some(PathBuf::from("lookup.wasm")));
        assert_eq!(bench.result_floor, Some(PathBuf::from("result.wasm")));
        assert_eq!(bench.save_reply, Some(PathBuf::from("reply.json")));
        assert!(bench.run.reuse_instance);
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
        assert_eq!(bench.accept_floor, None);
        assert_eq!(bench.echo_floor, None);
        assert_eq!(bench.lookup_floor, None);
        assert_eq!(bench.result_floor, None);
        assert_eq!(bench.output, OutputFormat::Text);

        let err = parse(&["bench", "-r", "req.json", "--iterations", "0", "p.wasm"]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ValueValidation);
    }

    #[test]
    fn cli_audit_takes_several_dumps_settings_and_format() {
        let cli = parse(&[
            "audit",
            "-f",
            "a.yaml",
            "--filename",
            "b.json",
            "--settings-path",
            "s.yml",
            "-o",
            "json",
        ])
        .unwrap();

        let Command::Audit(audit) = cli.command else {
            panic!("expected audit");
        };
        assert_eq!(
            audit.dumps,
            [PathBuf::from("a.yaml"), PathBuf::from("b.json")]
        );
        assert_eq!(audit.settings.settings_path, Some(PathBuf::from("s.yml")));
        assert_eq!(audit.output, OutputFormat::Json);

        let err = parse(&["audit"]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::MissingRequiredArgument);
    }

    /// A deployed policy or a policy manifest is where `--cluster` reads its
    /// settings and rules; beside a dump it would be ignored, so it is
    /// refused (a dump takes `--settings-path`).
    #[test]
    fn cli_audit_max_objects_is_at_least_one() {
        let args = [
            "audit",
            "--cluster",
            "--policy",
            "p.yaml",
            "--fix",
            "--max-objects",
        ];
        let err = parse(&[&args[..], &["0"]].concat()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ValueValidation);
        let Command::Audit(audit) = parse(&[&args[..], &["2"]].concat()).unwrap().command else {
            panic!("expected audit");
        };
        assert_eq!(audit.live.max_objects, Some(2));
    }

    #[test]
    fn cli_audit_of_a_dump_refuses_a_policy_source() {
        for source in [["--policy", "p.yaml"], ["--policy-name", "p"]] {
            let err = parse(&["audit", "-f", "a.yaml", source[0], source[1]]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::ArgumentConflict, "{source:?}: {err}");
        }
    }

    #[test]
    fn cli_patch_takes_an_object_and_a_patch() {
        let cli = parse(&["patch", "--object", "o.json", "--patch", "-"]).unwrap();

        let Command::Patch(patch) = cli.command else {
            panic!("expected patch");
        };
        assert_eq!(patch.object, PathBuf::from("o.json"));
        assert_eq!(patch.patch, PathBuf::from("-"));

        let err = parse(&["patch", "--object", "o.json"]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::MissingRequiredArgument);
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

    #[test]
    fn cli_push_parses_kwctl_flags() {
        let cli = parse(&[
            "push",
            "--force",
            "--insecure-http",
            "-o",
            "json",
            "annotated-policy.wasm",
            "registry://127.0.0.1:5000/p/mp:v1",
        ])
        .unwrap();

        let Command::Push(push) = cli.command else {
            panic!("expected push");
        };
        assert!(push.force && push.insecure_http);
        assert_eq!(push.output, OutputFormat::Json);
        assert_eq!(push.sources_path, None);
        assert_eq!(push.policy, PathBuf::from("annotated-policy.wasm"));
        assert_eq!(push.uri, "registry://127.0.0.1:5000/p/mp:v1");
    }

    #[test]
    fn cli_pull_requires_an_output_path() {
        let cli = parse(&[
            "pull",
            "--sources-path",
            "sources.yml",
            "-o",
            "p.wasm",
            "ghcr.io/a/b:v1",
        ])
        .unwrap();
        let Command::Pull(pull) = cli.command else {
            panic!("expected pull");
        };
        assert_eq!(pull.sources_path, Some(PathBuf::from("sources.yml")));
        assert_eq!(pull.output_path, PathBuf::from("p.wasm"));
        assert!(!pull.insecure_http);

        let err = parse(&["pull", "ghcr.io/a/b:v1"]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::MissingRequiredArgument);
    }

    #[test]
    fn cli_scaffold_artifacthub_parses_kwctl_flags() {
        let cli = parse(&[
            "scaffold",
            "artifacthub",
            "--metadata-path",
            "policy-metadata.yml",
            "--output",
            "artifacthub-pkg.yml",
        ])
        .unwrap();

        let Command::Scaffold(ScaffoldCommand::Artifacthub(args)) = cli.command else {
            panic!("expected scaffold artifacthub");
        };
        assert_eq!(
            args.metadata_path,
            Some(PathBuf::from("policy-metadata.yml"))
        );
        assert_eq!(args.questions_path, None);
        assert_eq!(args.output, Some(PathBuf::from("artifacthub-pkg.yml")));
    }
}
