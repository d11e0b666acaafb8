//! `policy-runner audit --cluster`: the audit of a live cluster, and
//! `--fix`. The objects come from the API server instead of a dump: the
//! kinds each policy's rules match ([`listing`]), listed a page at a time;
//! their look-ups are answered from what was listed, and by a masked GET
//! otherwise, within the policy's `contextAwareResources`
//! ([`cluster_reads`]). The report is the dump audit's, one per policy.
//! `--fix` then writes each deviating object once through the admission
//! chain, parents before children ([`fix`]). Every request is paced
//! ([`pace`]) and counted.
//!
//! Exit code 0: nothing deviates (with `--fix`: every deviating object was
//! brought into line); 1: something deviates, is rejected, was not fixed,
//! or a kind could not be listed; 2: bad input (no cluster, a policy that
//! cannot be read, settings the policy refuses).

mod api;
mod cluster_reads;
mod deployed;
mod fix;
mod listing;
mod pace;
mod progress;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, anyhow, bail};
use cluster_audit::tree::Identity;
use cluster_audit::{Origin, Report, Status, audit_live, reevaluate, render};
use kube::config::{Config, KubeConfigOptions, Kubeconfig};
use metadata_propagation_core::lookup::{LookupError, ObjectRef};
use metadata_propagation_core::outcome::Verdict;
use serde_json::{Value, json};

use crate::cli::{AuditArgs, LiveArgs, OutputFormat};
use api::{Api, Resource};
use cluster_reads::ClusterReads;
use deployed::Deployed;
use fix::{Done, Fixer, Judgement};
use listing::{Discovery, Unlisted};
use pace::Pace;
use progress::Progress;

/// The objects read one by one, and why not, shared by every policy.
type Reads = RefCell<BTreeMap<ObjectRef, Result<Value, LookupError>>>;

/// Exit code when something deviates, is rejected or was not fixed.
const NOT_IN_LINE: u8 = 1;
/// Exit code on bad input.
const BAD_INPUT: u8 = 2;

/// Runs `audit --cluster`: prints the report (and the fix) on stdout and
/// returns the exit code.
pub fn audit(args: &AuditArgs) -> ExitCode {
    match run(args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("Error: {error:#}");
            ExitCode::from(BAD_INPUT)
        }
    }
}

/// One policy's audit.
struct Audit {
    policy: Deployed,
    report: Report,
}

fn run(args: &AuditArgs) -> Result<ExitCode> {
    let live = &args.live;
    // kube's client config uses the process default provider
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let client = runtime.block_on(connect(live))?;
    let api = Api::new(client, runtime, Pace::new(live.qps, live.burst));
    // Ctrl-C stops the run between two requests, never inside a write.
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let interrupted = Arc::clone(&interrupted);
        api.runtime().spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\ninterrupted: stopping after the request in flight");
                interrupted.store(true, Ordering::SeqCst);
            }
        });
    }

    let policies: Vec<Deployed> = if live.policy_names.is_empty() {
        let files: Vec<Vec<Deployed>> = live
            .policy_files
            .iter()
            .map(|path| deployed::from_file(path))
            .collect::<Result<_>>()?;
        files.into_iter().flatten().collect()
    } else {
        live.policy_names
            .iter()
            .map(|name| deployed::from_cluster(&api, name))
            .collect::<Result<_>>()?
    };
    let discovery = RefCell::new(
        Discovery::new(&api)
            .map_err(|failure| anyhow!("cannot discover the cluster's API groups: {failure}"))?,
    );
    let read = RefCell::new(BTreeMap::new());
    let mut listed: BTreeMap<Resource, Result<Vec<(Origin, Value)>, Unlisted>> = BTreeMap::new();
    let mut unlisted: BTreeSet<Unlisted> = BTreeSet::new();
    let mut audits = Vec::new();
    for policy in policies {
        let (resources, missing) = discovery.borrow_mut().matched(&api, &policy.rules);
        unlisted.extend(missing);
        let mut objects = Vec::new();
        for resource in resources {
            if interrupted.load(Ordering::SeqCst) {
                bail!("interrupted while listing; nothing was written");
            }
            let list = listed.entry(resource.clone()).or_insert_with(|| {
                listing::list(
                    &api,
                    &resource,
                    live.namespace.as_deref(),
                    live.selector.as_deref(),
                    live.page_size,
                )
            });
            match list {
                Ok(found) => objects.extend(found.iter().cloned()),
                Err(missing) => {
                    if unlisted.insert(missing.clone()) {
                        eprintln!(
                            "warning: not listed: {}: {}",
                            missing.resource, missing.message
                        );
                    }
                }
            }
        }
        let reads = ClusterReads {
            api: &api,
            discovery: &discovery,
            granted: &policy.context_aware,
            read: &read,
        };
        let report = audit_live(objects, &policy.settings, &reads)
            .with_context(|| format!("ClusterAdmissionPolicy {}", policy.name))?;
        audits.push(Audit { policy, report });
    }
    drop(listed);

    // The audit as it was found, rendered before any write.
    let rendered = match args.output {
        OutputFormat::Text => Value::String(audit_text(&audits, &unlisted)),
        OutputFormat::Json => audit_json(&audits, &unlisted),
    };
    let fixed = match live.fix {
        true => Some(fix_all(
            &api,
            &discovery,
            &read,
            &mut audits,
            live,
            &interrupted,
        )),
        false => None,
    };
    let counts = api.counts();
    let requests = counts
        .iter()
        .map(|(verb, n)| format!("{n} {verb}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut out = String::new();
    match (args.output, rendered) {
        (OutputFormat::Text, Value::String(text)) => {
            out.push_str(&text);
            if let Some(fixed) = &fixed {
                fix_text(fixed, live.dry_run, &mut out);
            }
            let _ = writeln!(out, "requests: {requests}");
        }
        (_, mut document) => {
            document["requests"] = json!(counts);
            document["fix"] = fixed
                .as_ref()
                .map_or(Value::Null, |fixed| fix_json(fixed, live.dry_run));
            out = serde_json::to_string_pretty(&document).expect("JSON values always serialise");
            out.push('\n');
        }
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
        && error.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("Error: cannot write the report: {error}");
        return Ok(ExitCode::from(BAD_INPUT));
    }
    let in_line = match &fixed {
        Some(fixed) => fixed.iter().all(|done| done.outcome.succeeded()),
        None => audits.iter().all(|a| a.report.summary().deviating == 0),
    };
    let rejected = audits.iter().any(|a| a.report.summary().rejected > 0);
    let all_listed = unlisted.iter().all(|missing| !missing.served);
    Ok(match in_line && !rejected && all_listed {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(NOT_IN_LINE),
    })
}

/// The client kubectl would use: `--kubeconfig` or KUBECONFIG or
/// ~/.kube/config, at `--context` or the current one; in a pod, the
/// in-cluster configuration.
async fn connect(live: &LiveArgs) -> Result<kube::Client> {
    let options = KubeConfigOptions {
        context: live.context.clone(),
        ..KubeConfigOptions::default()
    };
    let config = match (&live.kubeconfig, &live.context) {
        (Some(path), _) => {
            let kubeconfig = Kubeconfig::read_from(path)
                .with_context(|| format!("cannot read the kubeconfig {}", path.display()))?;
            Config::from_custom_kubeconfig(kubeconfig, &options).await?
        }
        (None, Some(context)) => Config::from_kubeconfig(&options)
            .await
            .with_context(|| format!("cannot use the kubeconfig context {context}"))?,
        (None, None) => Config::infer()
            .await
            .context("no cluster to audit: set KUBECONFIG, --kubeconfig, or run in a pod")?,
    };
    kube::Client::try_from(config).context("cannot build a client for the cluster")
}

/// Brings each deviating object into line, in tree order, one write each.
fn fix_all(
    api: &Api,
    discovery: &RefCell<Discovery>,
    read: &Reads,
    audits: &mut [Audit],
    live: &LiveArgs,
    interrupted: &AtomicBool,
) -> Vec<Done> {
    // Each deviating object once, in the first policy's tree order that
    // names it, with every policy that found it deviating.
    let mut targets: Vec<(Identity, Vec<usize>)> = Vec::new();
    let mut at: BTreeMap<Identity, usize> = BTreeMap::new();
    for (p, audit) in audits.iter().enumerate() {
        for (index, _) in audit.report.tree.walk() {
            let object = &audit.report.objects[index];
            if object.status() != Status::Deviates {
                continue;
            }
            match at.get(&object.identity) {
                Some(&t) => targets[t].1.push(p),
                None => {
                    at.insert(object.identity.clone(), targets.len());
                    targets.push((object.identity.clone(), vec![p]));
                }
            }
        }
    }
    match targets.len() {
        0 => eprintln!("fix: nothing deviates; nothing to write"),
        n => eprintln!(
            "fix: writing {n} {}{}",
            if n == 1 { "object" } else { "objects" },
            if live.dry_run {
                " (server-side dry run: nothing is stored)"
            } else {
                ""
            }
        ),
    }
    let mut progress = Progress::new(targets.len());
    let mut results = Vec::with_capacity(targets.len());
    let mut next = 0;
    while let Some((identity, flagged)) = targets.get(next).cloned() {
        next += 1;
        let (identity, flagged) = (&identity, &flagged);
        let (object, id) = {
            let audit = &audits[flagged[0]];
            let found = audit
                .report
                .objects
                .iter()
                .find(|o| &o.identity == identity);
            let found = found.expect("a target is an object of the report that flagged it");
            (found.object.clone(), found.reference.to_string())
        };
        let stop = match () {
            _ if interrupted.load(Ordering::SeqCst) => {
                Some("interrupted (Ctrl-C) before its write")
            }
            _ if live.max_objects.is_some_and(|max| results.len() >= max) => {
                Some("--max-objects reached before its write")
            }
            _ => None,
        };
        let done = match stop {
            Some(why) => Done::not_attempted(id, why),
            None => {
                let api_version = object["apiVersion"].as_str().unwrap_or_default();
                let kind = object["kind"].as_str().unwrap_or_default();
                let resource = discovery.borrow_mut().kind(api, api_version, kind);
                match resource {
                    Err(message) => Done {
                        id,
                        outcome: fix::Outcome::Error,
                        message,
                        attempts: 0,
                        changes: json!([]),
                        after: None,
                    },
                    Ok(resource) => {
                        let shared: &[Audit] = audits;
                        let judge = |now: &Value| judge(shared, flagged, now, api, discovery, read);
                        let hint = |resource: &Resource| hint(shared, flagged, resource);
                        let fixer = Fixer {
                            api,
                            dry_run: live.dry_run,
                            judge: &judge,
                            hint: &hint,
                        };
                        fixer.fix(id, &resource, &object)
                    }
                }
            }
        };
        // A child is judged against its parent as it is now; one that
        // deviates only now (from what admission wrote on its parent) is
        // written in this run too, after its parent.
        let wrote = done.changes.as_array().is_some_and(|c| !c.is_empty());
        if let Some(after) = done.after.as_ref().filter(|_| !live.dry_run && wrote) {
            let mut children: Vec<(Identity, usize)> = Vec::new();
            for (p, audit) in audits.iter_mut().enumerate() {
                let objects = &mut audit.report.objects;
                if let Some(i) = objects.iter().position(|o| &o.identity == identity) {
                    objects[i].object = after.clone();
                    let tree = &audit.report.tree;
                    children.extend(
                        tree.children[i]
                            .iter()
                            .map(|&c| (objects[c].identity.clone(), p)),
                    );
                }
            }
            for (child, p) in children {
                if at.contains_key(&child) {
                    continue;
                }
                let audit = &audits[p];
                let now = audit.report.objects.iter().find(|o| o.identity == child);
                let now = &now.expect("a child is an object of its report").object;
                if let Judgement::Deviates(_) = judge(audits, &[p], now, api, discovery, read) {
                    at.insert(child.clone(), targets.len());
                    targets.push((child, vec![p]));
                    progress.grow();
                }
            }
        }
        progress.record(&done);
        results.push(done);
    }
    progress.finish();
    results
}

/// The verdict of every policy that found the object deviating on it as it
/// is now.
fn judge(
    audits: &[Audit],
    flagged: &[usize],
    now: &Value,
    api: &Api,
    discovery: &RefCell<Discovery>,
    read: &Reads,
) -> Judgement {
    let mut deviations = Vec::new();
    for &p in flagged {
        let audit = &audits[p];
        let reads = ClusterReads {
            api,
            discovery,
            granted: &audit.policy.context_aware,
            read,
        };
        let evaluation = reevaluate(
            &audit.report,
            now.clone(),
            &audit.policy.settings,
            Some(&reads),
        );
        match Status::of(evaluation.as_ref()) {
            Status::Compliant | Status::NotEvaluated => {}
            Status::Deviates => {
                deviations.extend(evaluation.into_iter().flat_map(|e| e.deviations));
            }
            Status::Rejected => {
                let message = match evaluation.map(|e| e.outcome.verdict) {
                    Some(Verdict::Reject { message, .. }) => message,
                    _ => String::new(),
                };
                return Judgement::Rejected(format!("policy {}: {message}", audit.policy.name));
            }
        }
    }
    match deviations.is_empty() {
        true => Judgement::Compliant,
        false => Judgement::Deviates(deviations),
    }
}

/// What to check when admission left an object of `resource` deviating.
fn hint(audits: &[Audit], flagged: &[usize], resource: &Resource) -> String {
    let checks: Vec<String> = flagged
        .iter()
        .map(|&p| {
            let policy = &audits[p].policy;
            let name = &policy.name;
            if policy.mode != "protect" {
                format!("ClusterAdmissionPolicy {name} is in {} mode, where its patches are not applied", policy.mode)
            } else if !policy.mutating {
                format!("ClusterAdmissionPolicy {name} has spec.mutating false: its patches are refused")
            } else if !policy.rules.iter().any(|rule| rule.sends_updates_of(resource)) {
                format!("the rules of ClusterAdmissionPolicy {name} send no UPDATE of {}", resource.name())
            } else {
                format!(
                    "check that the webhook of ClusterAdmissionPolicy {name} (clusterwide-{name}) is registered and \
                     its policy server serves it, with the settings audited here; policy-server answers a look-up \
                     from what it read in the last 5 s, so a parent changed just before is seen as it was: run again"
                )
            }
        })
        .collect();
    checks.join("; ")
}

fn audit_text(audits: &[Audit], unlisted: &BTreeSet<Unlisted>) -> String {
    let mut out = String::new();
    for (i, audit) in audits.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let policy = &audit.policy;
        let _ = writeln!(
            out,
            "policy {} (mode {}, from {})",
            policy.name, policy.mode, policy.source
        );
        out.push_str(&render::text(&audit.report));
    }
    let (served, not_served): (Vec<&Unlisted>, Vec<&Unlisted>) =
        unlisted.iter().partition(|missing| missing.served);
    if !served.is_empty() {
        out.push_str("\nnot listed:\n");
        for missing in served {
            let _ = writeln!(out, "  {}: {}", missing.resource, missing.message);
        }
    }
    if !not_served.is_empty() {
        let names: Vec<&str> = not_served.iter().map(|m| m.resource.as_str()).collect();
        let _ = writeln!(
            out,
            "\nnot served by this cluster (the rules name them; this fails nothing): {}",
            names.join(", ")
        );
    }
    out
}

fn audit_json(audits: &[Audit], unlisted: &BTreeSet<Unlisted>) -> Value {
    json!({
        "policies": audits.iter().map(|audit| json!({
            "name": audit.policy.name,
            "mode": audit.policy.mode,
            "source": audit.policy.source,
            "report": render::json(&audit.report),
        })).collect::<Vec<_>>(),
        "unlisted": unlisted.iter().map(|missing| json!({
            "resource": missing.resource, "verb": missing.verb, "message": missing.message,
            "served": missing.served,
        })).collect::<Vec<_>>(),
    })
}

fn fix_summary(fixed: &[Done]) -> (usize, usize) {
    let ok = fixed.iter().filter(|done| done.outcome.succeeded()).count();
    (ok, fixed.len() - ok)
}

fn fix_text(fixed: &[Done], dry_run: bool, out: &mut String) {
    let _ = writeln!(
        out,
        "\nfix{}:",
        if dry_run {
            " (dry run: nothing was stored)"
        } else {
            ""
        }
    );
    for done in fixed {
        let _ = writeln!(
            out,
            "  {:<13} {}: {}",
            done.outcome.as_str(),
            done.id,
            done.message
        );
        if dry_run {
            for change in done.changes.as_array().into_iter().flatten() {
                let _ = writeln!(out, "      {change}");
            }
        }
    }
    let (ok, not) = fix_summary(fixed);
    let verb = if dry_run { "would be fixed" } else { "fixed" };
    let _ = writeln!(
        out,
        "fix: {} deviating, {ok} {verb}, {not} not fixed",
        fixed.len()
    );
}

fn fix_json(fixed: &[Done], dry_run: bool) -> Value {
    let (ok, not) = fix_summary(fixed);
    json!({
        "dryRun": dry_run,
        "objects": fixed.iter().map(|done| json!({
            "id": done.id,
            "outcome": done.outcome.as_str(),
            "message": done.message,
            "attempts": done.attempts,
            "changes": done.changes,
        })).collect::<Vec<_>>(),
        "summary": {"deviating": fixed.len(), "fixed": ok, "notFixed": not},
    })
}
