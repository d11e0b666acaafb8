//! The client a live audit talks through: the one kubectl would use
//! (`--kubeconfig` or KUBECONFIG or ~/.kube/config, at `--context`), or in
//! a pod the in-cluster configuration; its requests paced, and retried
//! only by [`Api`].

use anyhow::{Context, Result, bail};
use kube::config::{Config, KubeConfigOptions, Kubeconfig};

use super::api::Api;
use super::pace::Pace;
use crate::cli::LiveArgs;

/// The client kubectl would use, paced ([`connect_client`]).
pub(super) fn connect(live: &LiveArgs) -> Result<Api> {
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
    let mut config = match (&live.kubeconfig, &live.context) {
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
    // kube's own retry layer would resend a 429 or 503 up to 15 times,
    // outside the pace and the counts; [`Api`] retries instead, paced,
    // counted and bounded.
    config.default_retry = false;
    let server = config.cluster_url.to_string();
    let client = kube::Client::try_from(config).context("cannot build a client for the cluster")?;
    Ok((client, server))
}
