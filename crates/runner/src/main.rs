//! `policy-runner`: a kwctl-compatible host for Kubewarden waPC policies
//! (`run`, `bench`, `annotate`, `push`, `pull`, `scaffold artifacthub`), a
//! policy-server-compatible webhook server (`serve`), and the runner's own
//! tools (`profile`, `explain`, `audit`, `patch`), as the
//! docs/runner.md describes them. [`host`] is the engine,
//! WASI, the host calls, replay and the response; [`commands`] the kwctl
//! commands; [`tools`] the runner's own.
//!
//! stdout carries only a command's result; everything else goes to stderr.
//! Exit code 1 is a tool error (bad input, invalid settings), never a
//! rejected request; `audit` exits 0 (complies), 1 (deviates) or 2 (bad
//! input).

// Without `network` (the runner `make demo` builds) the host's pieces only
// `serve` uses (capabilities, epochs, timeouts) stay compiled but unused.
#![cfg_attr(not(feature = "network"), allow(dead_code))]

mod cli;
mod commands;
mod host;
mod tools;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    quiet_on_closed_pipe();
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
        #[cfg(feature = "network")]
        cli::Command::Push(args) => commands::push::push(args),
        #[cfg(feature = "network")]
        cli::Command::Pull(args) => commands::pull::pull(args),
        #[cfg(feature = "network")]
        cli::Command::Scaffold(cli::ScaffoldCommand::Artifacthub(args)) => {
            commands::scaffold::artifacthub(args)
        }
        #[cfg(feature = "network")]
        cli::Command::Serve(args) => commands::serve::serve(args),
        #[cfg(not(feature = "network"))]
        cli::Command::Push(_)
        | cli::Command::Pull(_)
        | cli::Command::Scaffold(_)
        | cli::Command::Serve(_) => Err(anyhow::anyhow!(
            "this policy-runner was built without its `network` feature (as `make demo` builds \
             it), so it has no push, pull, scaffold or serve: `make runner` builds the whole runner"
        )),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("Error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// `print!` and `eprint!` panic when their reader has gone (`… | head`): that
/// panic ends the process quietly with SIGPIPE's status (128 + 13), as coreutils.
fn quiet_on_closed_pipe() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info.payload_as_str().unwrap_or_default();
        if message.starts_with("failed printing to std") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        report(info);
    }));
}
