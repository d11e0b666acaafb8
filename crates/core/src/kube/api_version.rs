//! An `apiVersion`, split into its API group and version: the one place
//! that reads `group/version`.

/// The group and version of `api_version`: `cluster.x-k8s.io/v1beta2` →
/// (`cluster.x-k8s.io`, `v1beta2`); the core group's `v1` → (`""`, `v1`).
pub(crate) fn split(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

/// The API group of `api_version` (`""` for the core group).
pub(crate) fn group(api_version: &str) -> &str {
    split(api_version).0
}

/// The version of `api_version` within its group (`v1beta2`), which
/// chooses the paths a field is read at.
pub(crate) fn version(api_version: &str) -> &str {
    split(api_version).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_and_named_groups() {
        assert_eq!(split("v1"), ("", "v1"));
        assert_eq!(
            split("cluster.x-k8s.io/v1beta2"),
            ("cluster.x-k8s.io", "v1beta2")
        );
        assert_eq!(group("v1"), "");
        assert_eq!(group("cluster.x-k8s.io/v1beta2"), "cluster.x-k8s.io");
        assert_eq!(version("controlplane.cluster.x-k8s.io/v1beta1"), "v1beta1");
        assert_eq!(version(""), "");
    }
}
