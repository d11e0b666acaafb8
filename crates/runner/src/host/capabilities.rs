//! The host-capability allow-list policy-server 1.35 applies to every host
//! call but `tracing` (policy-evaluator `host_capabilities.rs`): a policy's
//! `hostCapabilities` in policies.yml, `*` for all, `oci/*` or `oci/v1/*`
//! for a subtree, `kubernetes/get_resource` for one; none at all denies
//! everything. Patterns are checked against the capabilities the host
//! knows, so a typo stops the server instead of silently denying. `run`
//! and `bench` grant everything, as kwctl does.

use std::collections::BTreeSet;
use std::fmt;

use thiserror::Error;

/// Every capability a Kubewarden host offers, as `namespace/operation`
/// (policy-evaluator's `CAPABILITY_TREE`, flattened).
pub const CAPABILITIES: [&str; 11] = [
    "crypto/v1/is_certificate_trusted",
    "kubernetes/can_i",
    "kubernetes/get_resource",
    "kubernetes/list_resources_all",
    "kubernetes/list_resources_by_namespace",
    "net/v1/dns_lookup_host",
    "oci/v1/manifest_digest",
    "oci/v1/oci_manifest",
    "oci/v1/oci_manifest_config",
    "oci/v1/verify",
    "oci/v2/verify",
];

/// A pattern policy-server refuses, with its texts.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PatternError {
    /// `*` that is not a whole last segment.
    #[error(
        "invalid pattern {0:?}: wildcard '*' must be the entire last path segment (e.g. 'oci/*'), not a partial match"
    )]
    InvalidWildcard(String),
    /// An empty (or blank) pattern.
    #[error("invalid pattern: pattern must not be empty")]
    Empty,
    /// A segment the host does not know.
    #[error(
        "invalid pattern {pattern:?}: unknown segment {segment:?}, valid options at this level are: {valid_options}"
    )]
    UnknownSegment {
        /// The pattern as written.
        pattern: String,
        /// The first unknown segment.
        segment: String,
        /// The segments known at that level, sorted, comma-separated.
        valid_options: String,
    },
    /// A path that stops short of an operation.
    #[error(
        "invalid pattern {pattern:?}: not a complete capability path; use {suggestion:?} to allow all capabilities under it"
    )]
    IncompletePath {
        /// The pattern as written.
        pattern: String,
        /// The same path with `/*`.
        suggestion: String,
    },
}

/// Which host capabilities a policy may use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum HostCapabilities {
    /// Everything (`*`; kwctl's behaviour, and the runner's outside `serve`).
    #[default]
    AllowAll,
    /// Nothing (no pattern: policy-server's default).
    DenyAll,
    /// The listed paths, and everything under the listed prefixes.
    Patterns {
        /// `oci/` for `oci/*`.
        prefixes: BTreeSet<String>,
        /// Whole paths.
        exact: BTreeSet<String>,
    },
}

impl HostCapabilities {
    /// Parses `patterns` as policy-server does: `*` anywhere allows all, an
    /// empty list denies all, and every other pattern must name known
    /// segments.
    pub fn new<'a>(
        patterns: impl IntoIterator<Item = &'a str>,
    ) -> Result<HostCapabilities, PatternError> {
        let (mut prefixes, mut exact) = (BTreeSet::new(), BTreeSet::new());
        for pattern in patterns {
            let trimmed = pattern.trim();
            if trimmed.is_empty() {
                return Err(PatternError::Empty);
            }
            if trimmed == "*" {
                return Ok(HostCapabilities::AllowAll);
            }
            if trimmed.contains('*') && !trimmed.ends_with("/*") {
                return Err(PatternError::InvalidWildcard(pattern.to_owned()));
            }
            check_known(trimmed)?;
            match trimmed.strip_suffix('*') {
                Some(prefix) => prefixes.insert(prefix.to_owned()),
                None => exact.insert(trimmed.to_owned()),
            };
        }
        Ok(if prefixes.is_empty() && exact.is_empty() {
            HostCapabilities::DenyAll
        } else {
            HostCapabilities::Patterns { prefixes, exact }
        })
    }

    /// Whether `path` (`namespace/operation`) is granted.
    pub fn is_allowed(&self, path: &str) -> bool {
        match self {
            HostCapabilities::AllowAll => true,
            HostCapabilities::DenyAll => false,
            HostCapabilities::Patterns { prefixes, exact } => {
                exact.contains(path) || prefixes.iter().any(|p| path.starts_with(p.as_str()))
            }
        }
    }
}

impl fmt::Display for HostCapabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostCapabilities::AllowAll => write!(f, "[*]"),
            HostCapabilities::DenyAll => write!(f, "[]"),
            HostCapabilities::Patterns { prefixes, exact } => {
                let prefixes = prefixes.iter().map(|p| format!("{p}*"));
                let items: Vec<String> = prefixes.chain(exact.iter().cloned()).collect();
                write!(f, "[{}]", items.join(", "))
            }
        }
    }
}

/// policy-evaluator's `validate_against_tree`, on the flattened list: each
/// segment before a `*` must lead somewhere, and a path without `*` must
/// end at an operation.
fn check_known(pattern: &str) -> Result<(), PatternError> {
    let parts: Vec<&str> = pattern.split('/').collect();
    for (at, part) in parts.iter().enumerate() {
        if *part == "*" {
            return Ok(());
        }
        let options = segments_after(&parts[..at]);
        if !options.contains(part) {
            return Err(PatternError::UnknownSegment {
                pattern: pattern.to_owned(),
                segment: (*part).to_owned(),
                valid_options: options.into_iter().collect::<Vec<_>>().join(", "),
            });
        }
    }
    if CAPABILITIES.contains(&pattern) {
        Ok(())
    } else {
        Err(PatternError::IncompletePath {
            pattern: pattern.to_owned(),
            suggestion: format!("{pattern}/*"),
        })
    }
}

/// The segments that follow `prefix` in some known capability.
fn segments_after(prefix: &[&str]) -> BTreeSet<&'static str> {
    CAPABILITIES
        .iter()
        .filter_map(|capability| {
            let mut parts = capability.split('/');
            prefix
                .iter()
                .all(|wanted| parts.next() == Some(wanted))
                .then(|| parts.next())
                .flatten()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(patterns: &[&str], path: &str) -> bool {
        HostCapabilities::new(patterns.iter().copied())
            .unwrap()
            .is_allowed(path)
    }

    #[test]
    fn patterns_grant_as_policy_server_grants() {
        assert!(!allowed(&[], "kubernetes/get_resource"));
        assert!(allowed(&["*"], "kubernetes/can_i"));
        assert!(allowed(
            &["kubernetes/get_resource"],
            "kubernetes/get_resource"
        ));
        assert!(!allowed(&["kubernetes/get_resource"], "kubernetes/can_i"));
        assert!(allowed(&["oci/*"], "oci/v2/verify"));
        assert!(allowed(&["oci/v2/*"], "oci/v2/verify"));
        assert!(!allowed(&["oci/v2/*"], "oci/v1/verify"));
        assert!(!allowed(&["oci/*"], "net/v1/dns_lookup_host"));
        assert!(allowed(
            &["net/v1/dns_lookup_host", "*"],
            "kubernetes/can_i"
        ));
    }

    #[test]
    fn bad_patterns_are_refused_with_policy_servers_texts() {
        let error = |pattern: &str| HostCapabilities::new([pattern]).unwrap_err().to_string();
        assert_eq!(error(" "), "invalid pattern: pattern must not be empty");
        assert_eq!(
            error("oci*"),
            "invalid pattern \"oci*\": wildcard '*' must be the entire last path segment \
             (e.g. 'oci/*'), not a partial match"
        );
        assert_eq!(
            error("kubernetes/get"),
            "invalid pattern \"kubernetes/get\": unknown segment \"get\", valid options at this \
             level are: can_i, get_resource, list_resources_all, list_resources_by_namespace"
        );
        assert_eq!(
            error("k8s/*"),
            "invalid pattern \"k8s/*\": unknown segment \"k8s\", valid options at this level \
             are: crypto, kubernetes, net, oci"
        );
        assert_eq!(
            error("oci/v1"),
            "invalid pattern \"oci/v1\": not a complete capability path; use \"oci/v1/*\" to \
             allow all capabilities under it"
        );
    }

    #[test]
    fn display_lists_prefixes_then_paths() {
        let capabilities =
            HostCapabilities::new(["kubernetes/get_resource", "oci/*", "kubernetes/can_i"])
                .unwrap();
        assert_eq!(
            capabilities.to_string(),
            "[oci/*, kubernetes/can_i, kubernetes/get_resource]"
        );
        assert_eq!(HostCapabilities::new([]).unwrap().to_string(), "[]");
    }
}
