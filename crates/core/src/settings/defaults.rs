//! The settings' fixed values: the defaults a document may leave out and
//! the limits it is checked against.

/// Labels seeded by the platform that can never be opted into cloud-tag
/// propagation: the platform's three seeded Definitions are immutable and
/// cannot be opted in (README, "Settings", `cloudTags.propagatingLabels`).
pub(crate) const SEEDED_LABELS: [&str; 3] =
    ["platform/origin", "platform/mesh-ip", "platform/domain"];

/// Default dotted path of the provider name inside an XR.
pub const DEFAULT_PROVIDER_PATH: &str = "spec.parameters.provider";

/// [`DEFAULT_PROVIDER_PATH`]'s segments.
pub(crate) const DEFAULT_PROVIDER_SEGMENTS: &[&str] = &["spec", "parameters", "provider"];

/// Upper bound on the compiled size of one user regex. CAPI's flags take any
/// Go regex; a policy-server evaluates every request with these, so a
/// pathological pattern is refused up front instead of costing memory later.
pub(crate) const REGEX_SIZE_LIMIT: usize = 1 << 20;
