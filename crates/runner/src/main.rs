//! `policy-runner`: runs a Kubewarden waPC policy module the way `kwctl run`
//! does (a compatible subset), annotates it the way `kwctl annotate` does,
//! and times it the way `kwctl bench` does. It also publishes and fetches
//! the annotated module as an OCI artifact (`push`, `pull`) and writes
//! artifacthub-pkg.yml (`scaffold artifacthub`), as kwctl does. With the
//! policy's core linked natively, it explains one decision (`explain`) and
//! audits a whole management cluster's dump (`audit`). `patch` applies an
//! RFC 6902 patch to an object, as the API server applies a response's.
//!
//! The code lives in three rooms: [`host`] (the engine, WASI, the host
//! calls, replay, the response), [`commands`] (the kwctl-compatible
//! commands and their helpers) and [`tools`] (the runner's own).
//!
//! stdout carries only the AdmissionResponse (or the bench report, the pushed
//! or pulled reference, the scaffolded document, the explanation, the
//! audit report or the patched object); everything else goes to stderr.
//! Exit code 1 means a tool error (bad input, invalid settings), never a
//! rejected request; except for `audit`, a check whose exit code says
//! whether the dump complies (0), deviates (1) or could not be read (2).

mod cli;
mod commands;
mod host;
mod tools;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let result = match &cli.command {
        cli::Command::Run(args) => commands::run::run(args),
        cli::Command::Annotate(args) => commands::annotate::annotate(args),
        cli::Command::Bench(args) => commands::bench::bench(args),
        cli::Command::Profile(args) => tools::profile::profile(args),
        cli::Command::Explain(args) => tools::explain::explain(args),
        // Its own exit codes: 1 when something deviates, 2 on bad input.
        cli::Command::Audit(args) => return tools::audit::audit(args),
        cli::Command::Patch(args) => tools::patch::patch(args),
        cli::Command::Push(args) => commands::push::push(args),
        cli::Command::Pull(args) => commands::pull::pull(args),
        cli::Command::Scaffold(cli::ScaffoldCommand::Artifacthub(args)) => {
            commands::scaffold::artifacthub(args)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("Error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
