//! `get_resource` answered by a real API server (`serve`), as
//! policy-evaluator 1.35 answers it (`callback_handler/kubernetes/client.rs`
//! and `callback_handler.rs`): the kind is resolved to its resource by the
//! group version's discovery document (cached for the server's life), then
//! the named object is read with a GET, namespaced or not as discovery
//! says, and pruned by the look-up's field masks. The errors are
//! policy-evaluator's texts, with the API server's own errors (403 from
//! RBAC, 503) passed on as kube-rs prints them, so a policy sees a failed
//! look-up exactly as under policy-server.
//!
//! policy-server also keeps get_resource answers for 5 s (unless the
//! policy sets `disable_cache`); this host does not: every look-up is a
//! GET, which is what the cache would answer anyway, only slower.
//!
//! The waPC host call is synchronous and runs on a blocking thread, so a
//! look-up waits for the async client with [`Handle::block_on`], as
//! policy-evaluator's callback waits on its handler's channel.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::fmt::{self, Write as _};
use std::sync::{Arc, Mutex, PoisonError};

use kube::api::{Api, ApiResource, DynamicObject};
use tokio::runtime::Handle;

use crate::host::field_mask;
use crate::host::replay::GetResourceRequest;

/// policy-evaluator's answer when policy-server started without a client
/// (`--ignore-kubernetes-connection-failure`).
pub const NO_CLIENT: &str = "kube::Client was not initialized properly";

/// A resource found by discovery.
#[derive(Debug, Clone)]
struct KubeResource {
    resource: ApiResource,
    namespaced: bool,
}

/// The API server behind the look-ups; cheap to clone (one per request).
#[derive(Clone)]
pub struct Cluster {
    client: Option<kube::Client>,
    runtime: Handle,
    resources: Arc<Mutex<HashMap<(String, String), KubeResource>>>,
}

impl fmt::Debug for Cluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cluster")
            .field("connected", &self.client.is_some())
            .finish_non_exhaustive()
    }
}

impl Cluster {
    /// Look-ups answered by `client` (none: every look-up fails with
    /// [`NO_CLIENT`]), its futures driven on `runtime`.
    pub fn new(client: Option<kube::Client>, runtime: Handle) -> Cluster {
        Cluster {
            client,
            runtime,
            resources: Arc::default(),
        }
    }

    /// The object `request` names, pruned by its masks and serialised as
    /// policy-server hands it to the guest; or the error text the guest
    /// gets (after the callback prefix). Must not be called from inside
    /// the runtime's async context.
    pub fn answer(&self, request: &GetResourceRequest) -> Result<Vec<u8>, String> {
        let object = self.runtime.block_on(self.get(request))?;
        let object = serde_json::to_value(&object).map_err(|e| format!("{e}"))?;
        let pruned = field_mask::prune(&object, request.field_masks.as_ref());
        Ok(serde_json::to_vec(&pruned).expect("JSON values always serialise"))
    }

    async fn get(&self, request: &GetResourceRequest) -> Result<DynamicObject, String> {
        let client = self.client.as_ref().ok_or(NO_CLIENT)?;
        let (api_version, kind) = (&request.api_version, &request.kind);
        let resource = self.resource(client, api_version, kind).await?;
        let api: Api<DynamicObject> = if resource.namespaced {
            let namespace = request.namespace.as_deref().ok_or_else(|| {
                format!(
                    "Resource {api_version}/{kind} is namespaced, but no namespace was provided"
                )
            })?;
            Api::namespaced_with(client.clone(), namespace, &resource.resource)
        } else {
            Api::all_with(client.clone(), &resource.resource)
        };
        let name = &request.name;
        api.get_opt(name)
            .await
            .map_err(|e| error_chain(&e))?
            .ok_or_else(|| {
                format!(
                    "Cannot find {api_version}/{kind} named '{name}' inside of namespace '{:?}'",
                    request.namespace
                )
            })
    }

    /// The resource serving `kind` in `api_version`, from the discovery
    /// document of the group version (`/api/v1` or `/apis/GROUP/VERSION`),
    /// remembered once found (policy-evaluator's `build_kube_resource`).
    async fn resource(
        &self,
        client: &kube::Client,
        api_version: &str,
        kind: &str,
    ) -> Result<KubeResource, String> {
        let key = (api_version.to_owned(), kind.to_owned());
        if let Some(known) = self.known().get(&key) {
            return Ok(known.clone());
        }
        let list = match api_version {
            "v1" => client
                .list_core_api_resources(api_version)
                .await
                .map_err(|e| error_chain(&e))?,
            _ => client
                .list_api_group_resources(api_version)
                .await
                .map_err(|e| format!("error finding resource {api_version} / {kind}: {e}"))?,
        };
        let found = list
            .resources
            .into_iter()
            .find(|r| r.kind == kind)
            .ok_or_else(|| format!("Cannot find resource {api_version}/{kind}"))?;
        let (group, version) = match api_version {
            "v1" => ("", "v1"),
            _ => api_version
                .split_once('/')
                .ok_or_else(|| format!("cannot determine group and version for {api_version}"))?,
        };
        let resource = KubeResource {
            resource: ApiResource {
                group: group.to_owned(),
                version: version.to_owned(),
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
                plural: found.name,
            },
            namespaced: found.namespaced,
        };
        self.known().insert(key, resource.clone());
        Ok(resource)
    }

    fn known(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), KubeResource>> {
        self.resources
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// An error and its causes as policy-evaluator hands them to the guest
/// (`{:?}` of an `anyhow::Error`): the error, then `Caused by:` and each
/// cause indented, numbered when there are several. anyhow appends a
/// backtrace when RUST_BACKTRACE asks for one; a policy's message has no
/// use for it, so it is left out.
pub fn error_chain(error: &dyn StdError) -> String {
    let mut out = error.to_string();
    let Some(first) = error.source() else {
        return out;
    };
    out.push_str("\n\nCaused by:");
    let numbered = first.source().is_some();
    let (mut next, mut n) = (Some(first), 0);
    while let Some(cause) = next {
        out.push('\n');
        let (head, rest) = match numbered {
            true => (format!("{n: >5}: "), "       "),
            false => ("    ".to_owned(), "    "),
        };
        for (at, line) in cause.to_string().split('\n').enumerate() {
            match at {
                0 => out.push_str(&head),
                _ => write!(out, "\n{rest}").expect("writing to a String cannot fail"),
            }
            out.push_str(line);
        }
        (next, n) = (cause.source(), n + 1);
    }
    out
}

#[cfg(test)]
mod cluster_lookup_tests;
