//! `policy-runner run`: evaluate one request as `kwctl run` does (kwctl
//! `command/run.rs`). Refused settings are `Provided settings are not
//! valid: …`, exit 1; otherwise the AdmissionResponse is one JSON line on
//! stdout, exit 0 whether allowed or not. `validate` runs on a fresh
//! instance, as in policy-server, or with `--reuse-instance` on the one that
//! validated the settings, as in kwctl (docs/runner.md, "Hosted as
//! policy-server hosts"). Look-ups are answered from a replay session or from
//! `--parents` objects, and with `--record-session` written as the kwctl
//! session that replays them. The policy is a module or, as for kwctl, a
//! policy definition YAML ([`definition`]).

use std::fs;

use anyhow::{Context, Result};

use crate::cli::RunArgs;
use crate::commands::definition::{self, Definition};
use crate::commands::input::run_request;
use crate::commands::load::{load_granted, warn_leftovers};

/// Runs `args`; `Ok` after printing the response, `Err` for tool errors.
pub fn run(args: &RunArgs) -> Result<()> {
    let request = run_request(args)?;
    let Definition {
        module,
        settings,
        grants,
    } = definition::read(&args.policy, &args.settings)?;
    let (loaded, settings_instance) = load_granted(&module, args, &settings, grants.as_ref())?;
    let policy = if args.reuse_instance {
        settings_instance
    } else {
        drop(settings_instance);
        loaded.instantiate()?
    };
    let response = policy.validate(&request, &settings);

    loaded.warn_denied_lookups();
    let host = loaded.host();
    warn_leftovers(host.leftovers());
    if let (Some(path), Some(recording)) = (&args.record_session, host.recording()) {
        fs::write(path, recording.to_yaml())
            .with_context(|| format!("cannot write the session to {}", path.display()))?;
    }
    println!("{}", response.to_json_line());
    Ok(())
}
