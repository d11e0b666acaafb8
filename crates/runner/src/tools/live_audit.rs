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
//! The run reads as its steps: connect, read the policies, list and
//! judge, fix, report; its exit code says what is left to do ([`exit`]).

mod api;
mod cluster_reads;
mod deployed;
mod exit;
mod fix;
mod listing;
mod output;
mod pace;
mod preflight;
mod progress;
mod signals;
mod webhook_scope;
mod writes;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use cluster_audit::{Origin, audit_live};
use kube::config::{Config, KubeConfigOptions, Kubeconfig};
use serde_json::{Value, json};

use crate::cli::{AuditArgs, LiveArgs, OutputFormat};
use api::{Api, Resource};
use cluster_reads::{ClusterReads, Reads};
use deployed::{Audit, Deployed};
use exit::Exit;
use fix::{FixRun, Left};
use listing::{Discovery, Unlisted};
use output::{Scope, Summary, audit_json, audit_text, fix_json, fix_text, scope_json, scope_text};
use pace::Pace;
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

fn run(args: &AuditArgs) -> Result<Exit> {
    let started = Instant::now();
    let live = &args.live;
    let api = connect(live)?;
    let stop = Stop::watch(api.runtime(), Exit::RunAgain.code())?;
    let policies = read_policies(&api, live)?;
    let discovery = RefCell::new(
        Discovery::new(&api)
            .map_err(|failure| anyhow!("cannot discover the cluster's API groups: {failure}"))?,
    );
    let read = RefCell::new(BTreeMap::new());
    let Some(judged) = list_and_judge(&api, &discovery, &read, policies, live, &stop)? else {
        return Ok(report_cut_short(args, &api, &stop, started));
    };
    let Judged {
        mut audits,
        unlisted,
        left_out,
    } = judged;
    // The audit as it was found, rendered before any write.
    let rendered = match args.output {
        OutputFormat::Text => Value::String(audit_text(&audits, &unlisted)),
        OutputFormat::Json => audit_json(&audits, &unlisted),
    };
    let fixed = match live.fix {
        true => Some(fix_all(&api, &discovery, &read, &mut audits, live, &stop)),
        false => None,
    };
    let (deviating, _) = writes::deviating(&audits);
    let exit = exit_of(&audits, fixed.as_ref(), &unlisted, stop.requested());
    let requests = api.counts();
    let summary = output::summary_json(&Summary {
        exit,
        audits: &audits,
        deviating: fixed.as_ref().map_or(deviating.len(), |run| run.deviating),
        fix: fixed.as_ref(),
        not_listed: unlisted.iter().filter(|u| u.served).count(),
        left_out: left_out.len(),
        interrupted: stop.requested(),
        requests: &requests,
        elapsed: started.elapsed(),
    });
    let scope = Scope {
        namespace: live.namespace.as_deref(),
        left_out: &left_out,
    };
    let mut out = String::new();
    match (args.output, rendered) {
        (OutputFormat::Text, Value::String(text)) => {
            out.push_str(&text);
            scope_text(&scope, &mut out);
            if let Some(fixed) = &fixed {
                fix_text(fixed, live.dry_run, &mut out);
            }
            let requests = requests
                .iter()
                .map(|(verb, n)| format!("{n} {verb}"))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(out, "requests: {requests}");
            let _ = writeln!(out, "summary: {summary}");
        }
        (_, mut document) => {
            document["requests"] = json!(requests);
            document["scope"] = scope_json(&scope);
            document["fix"] = fixed
                .as_ref()
                .map_or(Value::Null, |fixed| fix_json(fixed, live.dry_run));
            document["summary"] = summary;
            out = serde_json::to_string_pretty(&document).expect("JSON values always serialise");
            out.push('\n');
        }
    }
    print(&out)?;
    Ok(exit)
}

/// Writes the report on stdout; a reader that went away (`| head`) is not
/// an error.
fn print(out: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
            bail!("cannot write the report: {error}")
        }
        _ => Ok(()),
    }
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

/// The client kubectl would use, paced ([`connect_client`]).
fn connect(live: &LiveArgs) -> Result<Api> {
    // kube's client config uses the process default provider
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let (client, server) = runtime.block_on(connect_client(live))?;
    Ok(Api::new(
        client,
        server,
        runtime,
        Pace::new(live.qps, live.burst),
    ))
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

/// Every policy's audit of what it is called for, the kinds not listed,
/// and those the scope left out. `None` when a signal stopped the listing.
struct Judged {
    audits: Vec<Audit>,
    unlisted: BTreeSet<Unlisted>,
    left_out: BTreeSet<String>,
}

/// Lists the kinds each policy's rules match, within the scope (`-n`
/// leaves out cluster-scoped kinds, unless `--cluster-scoped`), each kind
/// once for all policies, and judges the objects each policy's webhook is
/// called for.
fn list_and_judge(
    api: &Api,
    discovery: &RefCell<Discovery>,
    read: &Reads,
    policies: Vec<Deployed>,
    live: &LiveArgs,
    stop: &Stop,
) -> Result<Option<Judged>> {
    let mut listed: BTreeMap<Resource, Result<Vec<(Origin, Value)>, Unlisted>> = BTreeMap::new();
    let mut unlisted: BTreeSet<Unlisted> = BTreeSet::new();
    let mut left_out: BTreeSet<String> = BTreeSet::new();
    let mut audits = Vec::new();
    let mut namespaces = BTreeMap::new();
    for policy in policies {
        let (resources, missing) = discovery.borrow_mut().matched(api, &policy.rules);
        unlisted.extend(missing);
        let (resources, outside): (Vec<Resource>, Vec<Resource>) =
            resources.into_iter().partition(|resource| {
                resource.namespaced || live.namespace.is_none() || live.cluster_scoped
            });
        left_out.extend(outside.iter().map(Resource::name));
        let mut objects = Vec::new();
        for resource in resources {
            if stop.requested().is_some() {
                return Ok(None);
            }
            let list = listed.entry(resource.clone()).or_insert_with(|| {
                listing::list(
                    api,
                    &resource,
                    live.namespace.as_deref(),
                    live.selector.as_deref(),
                    live.page_size,
                )
            });
            match list {
                Ok(found) => objects.extend(found.iter().cloned()),
                Err(missing) if missing.bad_request && live.selector.is_some() => bail!(
                    "-l {:?}: the API server refuses the label selector: {}",
                    live.selector.as_deref().unwrap_or_default(),
                    missing.message
                ),
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
        if stop.requested().is_some() {
            return Ok(None);
        }
        let listed_count = objects.len();
        let objects = selected(api, &policy, objects, &mut namespaces)?;
        let unselected = listed_count - objects.len();
        let reads = ClusterReads {
            api,
            discovery,
            granted: &policy.context_aware,
            read,
        };
        let report = audit_live(objects, &policy.settings, &reads)
            .with_context(|| format!("ClusterAdmissionPolicy {}", policy.name))?;
        audits.push(Audit {
            policy,
            report,
            unselected,
        });
    }
    Ok(Some(Judged {
        audits,
        unlisted,
        left_out,
    }))
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

/// The labels of each namespace read so far (`None`: it is gone).
type NamespaceLabels = BTreeMap<String, Option<serde_json::Map<String, Value>>>;

/// The `objects` `policy`'s webhook is called for ([`webhook_scope`]); a
/// namespace is read (once for the run) only when the selector asks for
/// more than its name.
fn selected(
    api: &Api,
    policy: &Deployed,
    objects: Vec<(Origin, Value)>,
    namespaces: &mut NamespaceLabels,
) -> Result<Vec<(Origin, Value)>> {
    let scope = &policy.scope;
    let resource = Resource {
        group: String::new(),
        version: "v1".to_owned(),
        plural: "namespaces".to_owned(),
        kind: "Namespace".to_owned(),
        namespaced: false,
    };
    let mut kept = Vec::with_capacity(objects.len());
    for (origin, object) in objects {
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or_default();
        if scope.reads_namespaces() && !namespace.is_empty() && !namespaces.contains_key(namespace)
        {
            let labels = match api.get(&resource, None, namespace) {
                Ok(found) => Some(
                    found["metadata"]["labels"]
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                ),
                Err(failure) if failure.code == Some(404) => None,
                Err(failure) => bail!(
                    "cannot read namespace {namespace}, whose labels the namespaceSelector of {} \
                     selects on: {}{failure}",
                    scope.from,
                    if failure.code == Some(403) {
                        "forbidden: needs verb get on namespaces; "
                    } else {
                        ""
                    }
                ),
            };
            namespaces.insert(namespace.to_owned(), labels);
        }
        let labels = namespaces.get(namespace).and_then(Option::as_ref);
        if scope.selects(&object, labels) {
            kept.push((origin, object));
        }
    }
    Ok(kept)
}

/// Refuses a `--context` the kubeconfig (read from `source`) does not
/// have, naming those it has, as `kubectl config get-contexts` would.
fn has_context(kubeconfig: &Kubeconfig, context: Option<&str>, source: &str) -> Result<()> {
    match context {
        Some(context) if !kubeconfig.contexts.iter().any(|c| c.name == context) => {
            let names: Vec<&str> = kubeconfig
                .contexts
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            bail!(
                "the kubeconfig {source} has no context {context:?}; its contexts: {}",
                names.join(", ")
            )
        }
        _ => Ok(()),
    }
}

/// The client kubectl would use: `--kubeconfig` or KUBECONFIG or
/// ~/.kube/config, at `--context` or the current one; in a pod, the
/// in-cluster configuration.
async fn connect_client(live: &LiveArgs) -> Result<(kube::Client, String)> {
    let options = KubeConfigOptions {
        context: live.context.clone(),
        ..KubeConfigOptions::default()
    };
    let config = match (&live.kubeconfig, &live.context) {
        (Some(path), _) => {
            let kubeconfig = Kubeconfig::read_from(path).with_context(|| {
                format!(
                    "cannot read the kubeconfig {} (a `kind: Config` file, as `kubectl config view \
                     --raw` prints one)",
                    path.display()
                )
            })?;
            has_context(
                &kubeconfig,
                live.context.as_deref(),
                &path.display().to_string(),
            )?;
            Config::from_custom_kubeconfig(kubeconfig, &options).await?
        }
        (None, Some(context)) => {
            let kubeconfig = Kubeconfig::read()
                .with_context(|| format!("cannot read the kubeconfig for the context {context}"))?;
            has_context(&kubeconfig, Some(context), "(KUBECONFIG or ~/.kube/config)")?;
            Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .with_context(|| format!("cannot use the kubeconfig context {context}"))?
        }
        (None, None) => Config::infer()
            .await
            .context("no cluster to audit: set KUBECONFIG, --kubeconfig, or run in a pod")?,
    };
    let server = config.cluster_url.to_string();
    let client = kube::Client::try_from(config).context("cannot build a client for the cluster")?;
    Ok((client, server))
}
