//! The test bed's policies (cluster/policies, examples): those
//! `make bench-live-audit` audits with, and whose look-ups a live audit
//! keeps its parents for.

use cluster_audit::AuditSettings;

/// The test bed's policies' settings.
const SETTINGS: [&str; 3] = [
    r#"{"capi": {"inPlaceFields": true}, "cloudTags": {"capiInfrastructure": true,
        "propagatingLabels": ["environment", "cost-center", "acme.io/team"]}}"#,
    r#"{"cloudTags": {"propagatingLabels": ["platform/env", "platform/cost-center"],
        "providerPath": "spec.parameters.provider"}}"#,
    r#"{"cloudTags": {"managedResources": {"families": ["aws", "azure", "gcp"]},
        "propagatingLabels": ["environment", "cost-center", "acme.io/team"],
        "tagKeys": {"acme.io/team": "team"}}}"#,
];

/// The test bed's policies' settings, read.
pub fn policies() -> Vec<AuditSettings> {
    (SETTINGS.iter())
        .map(|s| AuditSettings::from_json(s.as_bytes()).unwrap())
        .collect()
}
