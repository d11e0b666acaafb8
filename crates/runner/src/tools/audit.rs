//! `policy-runner audit`: a whole management cluster from a `kubectl get …
//! -o yaml` dump. It reads the dumps and the settings, hands them to
//! [`cluster_audit`] (the evaluation, the ownership tree and the renderings
//! the web page shares), prints the report and exits 0 when nothing
//! deviates, 1 when an object deviates or is rejected, 2 on bad input.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Result;
use cluster_audit::{AuditSettings, Report, audit_objects, render};

use crate::cli::{AuditArgs, OutputFormat};
use crate::commands::input::read_settings;
use crate::tools::objects::read_kubernetes_objects;

/// Exit code when something deviates or is rejected.
const DEVIATES: u8 = 1;
/// Exit code on bad input (and when the report cannot be written).
const BAD_INPUT: u8 = 2;

/// Runs `args`: prints the report on stdout and returns the exit code.
pub fn audit(args: &AuditArgs) -> ExitCode {
    if args.live.cluster {
        return live(args);
    }
    let report = match audit_files(args) {
        Ok(report) => report,
        Err(error) => {
            eprintln!("Error: {error:#}");
            return ExitCode::from(BAD_INPUT);
        }
    };
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let form = args.form();
    let written = match args.output {
        OutputFormat::Text => stdout.write_all(render::text(&report, form).as_bytes()),
        OutputFormat::Json => serde_json::to_writer_pretty(
            &mut stdout,
            &render::Json {
                report: &report,
                form,
            },
        )
        .map_err(std::io::Error::from)
        .and_then(|()| stdout.write_all(b"\n")),
    };
    // A reader that stops early (`| head`) closes the pipe: the verdict
    // still stands, so the exit code is still the audit's.
    if let Err(error) = written.and_then(|()| stdout.flush())
        && error.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("Error: cannot write the report: {error}");
        return ExitCode::from(BAD_INPUT);
    }
    let code = if report.summary().failing() == 0 {
        0
    } else {
        DEVIATES
    };
    // The report is written: exit without freeing it. Dropping a dump of
    // 10,000 objects and their explanations object by object was a tenth
    // of the audit's time, for memory the process is about to return.
    std::process::exit(code.into())
}

/// Reads the dumps and the settings and audits every object.
fn audit_files(args: &AuditArgs) -> Result<Report> {
    let raw_settings = read_settings(&args.settings)?.to_string();
    let settings = AuditSettings::from_json(raw_settings.as_bytes())?;
    let mut objects = Vec::new();
    for path in &args.dumps {
        objects.extend(read_kubernetes_objects(path)?);
    }
    Ok(audit_objects(objects, &settings)?)
}

#[cfg(feature = "network")]
fn live(args: &AuditArgs) -> ExitCode {
    crate::tools::live_audit::audit(args)
}

#[cfg(not(feature = "network"))]
fn live(_: &AuditArgs) -> ExitCode {
    eprintln!(
        "Error: this policy-runner was built without its `network` feature (as `make demo` builds \
         it), so it cannot audit a live cluster: `make runner` builds the whole runner"
    );
    ExitCode::from(BAD_INPUT)
}
