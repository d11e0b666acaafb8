//! `policy-runner run`: evaluate one request the way `kwctl run` does.
//!
//! Flow (kwctl `command/run.rs`): load the module, decide which Kubernetes
//! resources it may read, compile it, call `validate_settings` on an
//! instance (refusal → `Provided settings are not valid: …`, exit 1), call
//! `validate`, print the AdmissionResponse as one JSON line on stdout (exit
//! 0 whether allowed or not). Diagnostics go to stderr only.
//!
//! `validate` runs on a fresh instance of the compiled module, as in
//! policy-server, which rehydrates one per request (the README's "A fresh
//! instance per request", BENCHMARKS.md). `--reuse-instance` (or
//! `POLICY_RUNNER_REUSE_INSTANCE=1`, so unchanged kwctl-style scripts can ask
//! for it) runs it on the instance that validated the settings, as
//! `kwctl run` does.

use anyhow::Result;

use crate::cli::RunArgs;
use crate::commands::input::{read_request, read_settings};
use crate::commands::load::load;

/// Runs `args`; `Ok` after printing the response, `Err` for tool errors.
pub fn run(args: &RunArgs) -> Result<()> {
    let request = read_request(&args.request_path)?;
    let settings = read_settings(&args.settings.source())?;
    let (loaded, settings_instance) = load(&args.policy, args, &settings)?;
    let policy = if args.reuse_instance {
        settings_instance
    } else {
        drop(settings_instance);
        loaded.instantiate()?
    };
    let response = policy.validate(&request, &settings);

    let unreplayed = loaded.unreplayed();
    if unreplayed > 0 {
        eprintln!(
            "WARN policy-runner: {unreplayed} of the recorded exchanges have not been replayed"
        );
    }
    println!("{}", response.to_json_line());
    Ok(())
}
