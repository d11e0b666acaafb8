//! `policy-runner run`: evaluate one request as `kwctl run` does (kwctl
//! `command/run.rs`). Refused settings are `Provided settings are not
//! valid: …`, exit 1; otherwise the AdmissionResponse is one JSON line on
//! stdout, exit 0 whether allowed or not. `validate` runs on a fresh
//! instance, as in policy-server, or with `--reuse-instance` on the one that
//! validated the settings, as in kwctl (README, "A fresh instance per
//! request").

use anyhow::Result;

use crate::cli::RunArgs;
use crate::commands::input::{read_request, read_settings};
use crate::commands::load::{load, warn_unreplayed};

/// Runs `args`; `Ok` after printing the response, `Err` for tool errors.
pub fn run(args: &RunArgs) -> Result<()> {
    let request = read_request(&args.request_path)?;
    let settings = read_settings(&args.settings)?;
    let (loaded, settings_instance) = load(&args.policy, args, &settings)?;
    let policy = if args.reuse_instance {
        settings_instance
    } else {
        drop(settings_instance);
        loaded.instantiate()?
    };
    let response = policy.validate(&request, &settings);

    warn_unreplayed(loaded.host().unreplayed());
    println!("{}", response.to_json_line());
    Ok(())
}
