//! `policy-runner serve`: the policies of a policies.yml served as an
//! admission webhook, the way Kubewarden's policy-server 1.35 serves them
//! (same flags, same file, same routes and answers), so a test bed with a
//! real kube-apiserver can run either binary. What differs: modules are
//! `file:///` only, there are no policy groups, no sigstore verification,
//! no `/validate_raw` or `/audit`, no metrics, look-ups are not cached, and
//! the certificate is not reloaded when it changes.
//!
//! Start-up is policy-server's: infer the Kubernetes configuration (a
//! failure stops the server unless `--ignore-kubernetes-connection-failure`),
//! load and check every policy (`bootstrap`), then listen; readiness
//! answers 200 only once the webhook listens. SIGTERM or SIGINT ends it
//! with exit code 0.

mod bootstrap;
mod evaluate;
mod http;
mod policies;
mod review;
mod tls;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};
use tokio::time::MissedTickBehavior;
use tokio_rustls::TlsAcceptor;

use crate::cli::ServeArgs;
use crate::host::cluster::Cluster;
use evaluate::State;

/// Runs `serve` until SIGTERM or SIGINT; `Err` when it cannot start.
pub fn serve(args: &ServeArgs) -> Result<()> {
    // kube's client config uses the process default provider
    let _ = rustls::crypto::ring::default_provider().install_default();
    let tls = tls::files(args.cert_file.as_deref(), args.key_file.as_deref())?
        .map(|(cert, key)| tls::acceptor(&cert, &key))
        .transpose()?;
    let entries = policies::read(&args.policies)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let client = runtime.block_on(kube_client(args.ignore_kubernetes_connection_failure))?;
    let cluster = Cluster::new(client, runtime.handle().clone());

    let mut policies = BTreeMap::new();
    for (id, entry) in entries {
        let served = bootstrap::bootstrap(&id, entry, args.timeout(), &cluster)?;
        eprintln!(
            "INFO policy-runner: policy {id} loaded from {}",
            served.entry.module.display()
        );
        policies.insert(id, served);
    }
    let state = Arc::new(State { policies, cluster });
    let result = runtime.block_on(run(args, state, tls));
    // a guest still running on a blocking thread must not hold the exit
    runtime.shutdown_background();
    result
}

/// The client policy-server builds (`kube::Client::try_default`: KUBECONFIG,
/// ~/.kube/config, in-cluster), with its messages when there is none.
async fn kube_client(ignore_failure: bool) -> Result<Option<kube::Client>> {
    match kube::Client::try_default().await {
        Ok(client) => Ok(Some(client)),
        Err(e) => {
            eprintln!("Cannot connect to Kubernetes cluster: {e}");
            if !ignore_failure {
                bail!(
                    "Cannot connect to Kubernetes, context aware policies would not work properly"
                );
            }
            eprintln!(
                "Cannot connect to Kubernetes, context aware policies will not work properly"
            );
            Ok(None)
        }
    }
}

/// Listens, serves and ticks the policies' deadlines until a signal.
async fn run(args: &ServeArgs, state: Arc<State>, tls: Option<TlsAcceptor>) -> Result<()> {
    let webhook_addr = SocketAddr::new(args.addr, args.port);
    let readiness_addr = SocketAddr::new(args.addr, args.readiness_probe_port);
    let webhook = TcpListener::bind(webhook_addr)
        .await
        .with_context(|| format!("cannot listen on {webhook_addr}"))?;
    let readiness = TcpListener::bind(readiness_addr)
        .await
        .with_context(|| format!("cannot listen on {readiness_addr}"))?;
    // Port 0 asks the system for a free port; the line below names the one
    // it gave, which is how a caller learns it without a race.
    let (webhook_addr, readiness_addr) = (webhook.local_addr()?, readiness.local_addr()?);
    let scheme = if tls.is_some() { "https" } else { "http" };
    eprintln!(
        "INFO policy-runner: serving {} policies on {scheme}://{webhook_addr}/validate/<id>, \
         readiness on http://{readiness_addr}/readiness",
        state.policies.len()
    );
    tokio::spawn(tick_epochs(Arc::clone(&state)));
    tokio::spawn(http::webhook(webhook, tls, state));
    tokio::spawn(http::readiness(readiness));
    let received = shutdown_signal().await?;
    eprintln!("INFO policy-runner: {received} received, exiting");
    Ok(())
}

/// The clock of the policy timeout: one epoch a second for every module,
/// ticks skipped rather than bunched when the machine is busy, as in
/// policy-server (which ticks only when the global timeout is on; here a
/// policy's own `timeoutEvalSeconds` counts without it too).
async fn tick_epochs(state: Arc<State>) {
    let mut interval = tokio::time::interval(Duration::from_secs(1));
    interval.set_missed_tick_behavior(MissedTickBehavior::Skip);
    loop {
        interval.tick().await;
        for served in state.policies.values() {
            served.module.increment_epoch();
        }
    }
}

/// Waits for SIGTERM or SIGINT and names it.
async fn shutdown_signal() -> Result<&'static str> {
    let mut terminate = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
    tokio::select! {
        _ = terminate.recv() => Ok("SIGTERM"),
        _ = interrupt.recv() => Ok("SIGINT"),
    }
}
