//! `policy-runner`: runs a Kubewarden waPC policy module the way `kwctl run`
//! does (a compatible subset), annotates it the way `kwctl annotate` does,
//! and times it the way `kwctl bench` does. It also publishes and fetches
//! the annotated module as an OCI artifact (`push`, `pull`) and writes
//! artifacthub-pkg.yml (`scaffold artifacthub`), as kwctl does. With the
//! policy's core linked natively, it explains one decision (`explain`) and
//! audits a whole management cluster's dump (`audit`).
//!
//! stdout carries only the AdmissionResponse (or the bench report, the pushed
//! or pulled reference, the scaffolded document, the explanation or the
//! audit report); everything else goes to stderr.
//! Exit code 1 means a tool error (bad input, invalid settings), never a
//! rejected request; except for `audit`, a check whose exit code says
//! whether the dump complies (0), deviates (1) or could not be read (2).

mod annotate;
mod audit;
mod bench;
mod cli;
mod engine;
mod explain;
mod field_mask;
mod host;
mod input;
mod metadata;
mod objects;
mod policy;
mod profile;
mod pull;
mod push;
mod registry;
mod replay;
mod response;
mod run;
mod scaffold;
mod wasi;
mod wasm_sections;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let result = match &cli.command {
        cli::Command::Run(args) => run::run(args),
        cli::Command::Annotate(args) => annotate::annotate(args),
        cli::Command::Bench(args) => bench::bench(args),
        cli::Command::Profile(args) => profile::profile(args),
        cli::Command::Explain(args) => explain::explain(args),
        // Its own exit codes: 1 when something deviates, 2 on bad input.
        cli::Command::Audit(args) => return audit::audit(args),
        cli::Command::Push(args) => push::push(args),
        cli::Command::Pull(args) => pull::pull(args),
        cli::Command::Scaffold(cli::ScaffoldCommand::Artifacthub(args)) => {
            scaffold::artifacthub(args)
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
