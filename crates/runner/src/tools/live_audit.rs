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
mod output;
mod pace;
mod progress;
mod webhook_scope;
mod writes;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, anyhow, bail};
use cluster_audit::{Origin, audit_live};
use kube::config::{Config, KubeConfigOptions, Kubeconfig};
use serde_json::{Value, json};

use crate::cli::{AuditArgs, LiveArgs, OutputFormat};
use api::{Api, Resource};
use cluster_reads::ClusterReads;
use deployed::{Audit, Deployed};
use listing::{Discovery, Unlisted};
use output::{audit_json, audit_text, fix_json, fix_text};
use pace::Pace;
use writes::fix_all;

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

fn run(args: &AuditArgs) -> Result<ExitCode> {
    let live = &args.live;
    // kube's client config uses the process default provider
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let (client, server) = runtime.block_on(connect(live))?;
    let api = Api::new(client, server, runtime, Pace::new(live.qps, live.burst));
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
        // A name given twice is one policy, audited once.
        let mut names = BTreeSet::new();
        live.policy_names
            .iter()
            .filter(|name| names.insert(name.as_str()))
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
    let mut namespaces = BTreeMap::new();
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
        let listed_count = objects.len();
        let objects = selected(&api, &policy, objects, &mut namespaces)?;
        let unselected = listed_count - objects.len();
        let reads = ClusterReads {
            api: &api,
            discovery: &discovery,
            granted: &policy.context_aware,
            read: &read,
        };
        let report = audit_live(objects, &policy.settings, &reads)
            .with_context(|| format!("ClusterAdmissionPolicy {}", policy.name))?;
        audits.push(Audit {
            policy,
            report,
            unselected,
        });
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
async fn connect(live: &LiveArgs) -> Result<(kube::Client, String)> {
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
