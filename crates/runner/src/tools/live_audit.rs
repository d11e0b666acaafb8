//! `policy-runner audit --cluster`: the audit of a live cluster, and
//! `--fix`. The objects come from the API server instead of a dump: the
//! kinds each policy's rules match ([`listing`]), listed a page at a time;
//! their look-ups are answered from what was listed, and by a masked GET
//! otherwise, within the policy's `contextAwareResources`
//! ([`cluster_reads`]). The report is the dump audit's, one per policy.
//! `--fix` then writes each deviating object once through the admission
//! chain, parents before children ([`writes`]), after a pre-flight
//! ([`preflight`]). Every request is paced ([`pace`]) and counted; SIGINT
//! and SIGTERM stop the run between two requests ([`signals`]).
//!
//! The run reads as its steps: connect ([`connect`]), read the policies,
//! list and judge ([`judging`]), fix, report; its exit code says what is
//! left to do ([`exit`]).

mod api;
mod cluster_reads;
mod connect;
mod deployed;
mod exit;
mod fix;
mod judging;
mod listing;
mod output;
mod pace;
mod preflight;
mod progress;
mod signals;
mod verdicts;
mod webhook_scope;
mod window;
mod writes;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Result, anyhow, bail};
use serde_json::{Value, json};

use crate::cli::{AuditArgs, LiveArgs, OutputFormat};
use api::Api;
use cluster_reads::Cluster;
use connect::connect;
use deployed::{Audit, Deployed};
use exit::Exit;
use fix::{FixRun, Left};
use judging::{Judged, list_and_judge};
use listing::{Discovery, Unlisted};
use output::{Scope, Summary, audit_json, audit_text, fix_json, fix_text, scope_json, scope_text};
use signals::Stop;
use writes::fix_all;

/// Runs `audit --cluster`: prints the report (and the fix) on stdout and
/// returns the exit code.
pub fn audit(args: &AuditArgs) -> ExitCode {
    match run(args) {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(error) => {
            eprintln!("Error: {error:#}");
            ExitCode::from(Exit::BadInput.code())
        }
    }
}

/// The run, step by step: connect, read the policies, discover, list and
/// judge, fix, report.
fn run(args: &AuditArgs) -> Result<Exit> {
    let started = Instant::now();
    let live = &args.live;
    let api = connect(live)?;
    let stop = Stop::watch(api.runtime(), Exit::RunAgain.code())?;
    let policies = read_policies(&api, live)?;
    let discovery = discover(&api)?;
    let read = RefCell::default();
    let cluster = Cluster {
        api: &api,
        discovery: &discovery,
        read: &read,
    };
    let judged = list_and_judge(cluster, policies, live, args.full, &stop)?;
    let Some(mut judged) = judged else {
        return Ok(report_cut_short(args, &api, &stop, started));
    };
    // The audit as it was found, rendered before any write.
    let found = found(args, &judged);
    let fixed = live.fix.then(|| {
        let Judged {
            audits, parents, ..
        } = &mut judged;
        fix_all(cluster, audits, parents, live, &stop)
    });
    let exit = exit_of(
        &judged.audits,
        fixed.as_ref(),
        &judged.unlisted,
        stop.requested(),
    );
    let ran = Ran {
        exit,
        requests: api.counts(),
        interrupted: stop.requested(),
        elapsed: started.elapsed(),
    };
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let written = report(args, &judged, found, fixed.as_ref(), &ran, &mut stdout);
    printed(written.and_then(|()| stdout.flush()))?;
    Ok(exit)
}

/// What the cluster serves, found once for the run.
fn discover(api: &Api) -> Result<RefCell<Discovery>> {
    let discovery = Discovery::new(api)
        .map_err(|failure| anyhow!("cannot discover the cluster's API groups: {failure}"))?;
    Ok(RefCell::new(discovery))
}

/// The audit as it was found, as text; JSON is written at the end, as it
/// is serialised (`--fix` changes no field the report prints: it replaces
/// the objects it wrote, and leaves their verdicts as found).
fn found(args: &AuditArgs, judged: &Judged) -> Option<String> {
    let form = args.form();
    (args.output == OutputFormat::Text).then(|| audit_text(&judged.audits, &judged.unlisted, form))
}

/// How the run ended and what it cost.
struct Ran<'a> {
    exit: Exit,
    requests: BTreeMap<&'static str, usize>,
    interrupted: Option<&'a str>,
    elapsed: std::time::Duration,
}

/// The report: the audit as found, the scope, the fix, the requests and
/// the summary.
fn report(
    args: &AuditArgs,
    judged: &Judged,
    found: Option<String>,
    fixed: Option<&FixRun>,
    ran: &Ran,
    stdout: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let live = &args.live;
    let (deviating, _) = writes::deviating(&judged.audits);
    let summary = output::summary_json(&Summary {
        exit: ran.exit,
        audits: &judged.audits,
        deviating: fixed.map_or(deviating.len(), |run| run.deviating),
        fix: fixed,
        not_listed: judged.unlisted.iter().filter(|u| u.served).count(),
        left_out: judged.left_out.len(),
        interrupted: ran.interrupted,
        requests: &ran.requests,
        elapsed: ran.elapsed,
    });
    let scope = Scope {
        namespace: live.namespace.as_deref(),
        left_out: &judged.left_out,
        relisted: &judged.relisted,
    };
    match found {
        Some(mut out) => {
            scope_text(&scope, &mut out);
            if let Some(fixed) = fixed {
                fix_text(fixed, live.dry_run, &mut out);
            }
            let requests = (ran.requests.iter())
                .map(|(verb, n)| format!("{n} {verb}"))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(out, "requests: {requests}");
            let _ = writeln!(out, "summary: {summary}");
            stdout.write_all(out.as_bytes())
        }
        None => {
            let mut fields = serde_json::Map::new();
            fields.insert("requests".to_owned(), json!(ran.requests));
            fields.insert("scope".to_owned(), scope_json(&scope));
            let fix = fixed.map_or(Value::Null, |fixed| fix_json(fixed, live.dry_run));
            fields.insert("fix".to_owned(), fix);
            fields.insert("summary".to_owned(), summary);
            let form = args.form();
            let document = audit_json(&judged.audits, &judged.unlisted, form, fields);
            serde_json::to_writer_pretty(&mut *stdout, &document)?;
            stdout.write_all(b"\n")
        }
    }
}

/// Whether the report was written on stdout; a reader that went away
/// (`| head`) is not an error.
fn printed(written: std::io::Result<()>) -> Result<()> {
    match written {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
            bail!("cannot write the report: {error}")
        }
        _ => Ok(()),
    }
}

/// Writes `out` on stdout ([`printed`]).
fn print(out: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    printed(
        stdout
            .write_all(out.as_bytes())
            .and_then(|()| stdout.flush()),
    )
}

/// What is left to do after the run ([`Exit`]).
fn exit_of(
    audits: &[Audit],
    fixed: Option<&FixRun>,
    unlisted: &BTreeSet<Unlisted>,
    interrupted: Option<&str>,
) -> Exit {
    let rejected = audits.iter().any(|a| a.report.summary().rejected > 0);
    let not_listed = unlisted.iter().any(|missing| missing.served);
    let (person, again) = match fixed {
        Some(run) => (
            !run.refused.is_empty() || run.done.iter().any(|d| d.outcome.left() == Left::Person),
            run.done.iter().any(|d| d.outcome.left() == Left::RunAgain),
        ),
        None => (
            audits.iter().any(|a| a.report.summary().deviating > 0),
            false,
        ),
    };
    Exit::of(
        person || rejected || not_listed,
        again || interrupted.is_some(),
    )
}

/// The policies to judge by: the deployed ones `--policy-name` names, or
/// the manifests `--policy` names; each must run this module (or a mirror
/// `--module` names).
fn read_policies(api: &Api, live: &LiveArgs) -> Result<Vec<Deployed>> {
    if live.policy_names.is_empty() {
        let files: Vec<Vec<Deployed>> = live
            .policy_files
            .iter()
            .map(|path| deployed::from_file(path, &live.modules))
            .collect::<Result<_>>()?;
        return Ok(files.into_iter().flatten().collect());
    }
    // A name given twice is one policy, audited once.
    let mut names = BTreeSet::new();
    live.policy_names
        .iter()
        .filter(|name| names.insert(name.as_str()))
        .map(|name| deployed::from_cluster(api, name, &live.modules))
        .collect()
}

/// The report of a run a signal stopped while it was listing: nothing was
/// judged or written; the summary says so, and to run again.
fn report_cut_short(args: &AuditArgs, api: &Api, stop: &Stop, started: Instant) -> Exit {
    let signal = stop.requested().unwrap_or("a signal");
    eprintln!("interrupted ({signal}) while listing: nothing was audited or written; run again");
    let requests = api.counts();
    let summary = output::summary_json(&Summary {
        exit: Exit::RunAgain,
        audits: &[],
        deviating: 0,
        fix: None,
        not_listed: 0,
        left_out: 0,
        interrupted: stop.requested(),
        requests: &requests,
        elapsed: started.elapsed(),
    });
    let out = match args.output {
        OutputFormat::Text => format!("summary: {summary}\n"),
        OutputFormat::Json => {
            let document =
                json!({"policies": [], "requests": requests, "fix": null, "summary": summary});
            serde_json::to_string_pretty(&document).expect("JSON values always serialise") + "\n"
        }
    };
    match print(&out) {
        Ok(()) => Exit::RunAgain,
        Err(error) => {
            eprintln!("Error: {error:#}");
            Exit::BadInput
        }
    }
}
