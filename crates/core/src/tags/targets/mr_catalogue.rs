//! The managed-resource catalogue: the Crossplane managed-resource (MR) kinds of the upjet providers
//! that carry a cloud tag field, and the field (docs/managed-resources.md). Looked up by the MR's
//! group with `.m.` removed (the namespaced twin shares its cluster-scoped kind's row) and its kind.
//!
//! The rows are data, `mr_catalogue.tsv` beside this file, which `scripts/gen_mr_catalogue.py`
//! writes from the CRDs of the pinned provider releases and `make check-mr-catalogue` checks
//! against them; its header names the releases and the counts.

/// The rows: `#` comment lines, then one line per kind, `group\tkind\tfamily\tfield`, sorted by
/// (group, kind).
const ROWS: &str = include_str!("mr_catalogue.tsv");

/// The provider family of an upjet MR, by its group's suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Family {
    /// provider-upjet-aws: `aws.upbound.io`, `aws.m.upbound.io`.
    Aws,
    /// provider-upjet-azure: `azure.upbound.io`, `azure.m.upbound.io`.
    Azure,
    /// provider-upjet-gcp: `gcp.upbound.io`, `gcp.m.upbound.io`.
    Gcp,
}

impl Family {
    /// Every family, in the order settings errors list them.
    pub(crate) const ALL: [Family; 3] = [Family::Aws, Family::Azure, Family::Gcp];

    /// The name settings use, and the provider value that selects the
    /// family's profile (as an XR's `aws` does).
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Family::Aws => "aws",
            Family::Azure => "azure",
            Family::Gcp => "gcp",
        }
    }

    /// The cluster-scoped group suffix.
    pub(crate) const fn suffix(self) -> &'static str {
        match self {
            Family::Aws => "aws.upbound.io",
            Family::Azure => "azure.upbound.io",
            Family::Gcp => "gcp.upbound.io",
        }
    }

    /// The namespaced (`.m.`) group suffix.
    pub(crate) const fn namespaced_suffix(self) -> &'static str {
        match self {
            Family::Aws => "aws.m.upbound.io",
            Family::Azure => "azure.m.upbound.io",
            Family::Gcp => "gcp.m.upbound.io",
        }
    }

    /// The tags the family's provider writes into the tag field itself:
    /// upjet AWS's Tagger writes these three on every MR it initialises
    /// (unless started with `--skip-default-tags`). They take room under
    /// the cap from CREATE on, present or not, so that the provider adding
    /// them never pushes one of the policy's tags out.
    pub(crate) const fn provider_keys(self) -> &'static [&'static str] {
        match self {
            Family::Aws => &[
                "crossplane-kind",
                "crossplane-name",
                "crossplane-providerconfig",
            ],
            Family::Azure | Family::Gcp => &[],
        }
    }

    pub(crate) fn named(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|family| family.name() == name)
    }
}

/// One kind that carries a tag field: a map of strings under `spec.forProvider` in every served version.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Row {
    /// The cluster-scoped group (without `.m.`).
    pub(crate) group: &'static str,
    /// The kind.
    pub(crate) kind: &'static str,
    /// The family the group belongs to.
    pub(crate) family: Family,
    /// The tag field's path in the object.
    pub(crate) field: &'static str,
}

impl Row {
    fn parse(line: &'static str) -> Option<Row> {
        let mut columns = line.split('\t');
        let (group, kind) = (columns.next()?, columns.next()?);
        let family = Family::named(columns.next()?)?;
        let field = columns.next()?;
        columns.next().is_none().then_some(Row {
            group,
            kind,
            family,
            field,
        })
    }
}

/// How many rows the table has.
const ROW_COUNT: usize = row_starts::<0>().1;

/// Where each row starts in [`ROWS`], found when the policy is compiled, so
/// that a request finds its kind's row by binary search (the rows are
/// sorted by (group, kind)) rather than by reading the table.
const ROW_STARTS: [usize; ROW_COUNT] = row_starts::<ROW_COUNT>().0;

/// The start of each of the first `N` rows of [`ROWS`] (a line that is not a
/// comment), and how many rows there are.
const fn row_starts<const N: usize>() -> ([usize; N], usize) {
    let bytes = ROWS.as_bytes();
    let mut starts = [0; N];
    let (mut at, mut count, mut line_start) = (0, 0, true);
    while at < bytes.len() {
        if line_start && bytes[at] != b'#' {
            if count < N {
                starts[count] = at;
            }
            count += 1;
        }
        line_start = bytes[at] == b'\n';
        at += 1;
    }
    (starts, count)
}

/// The line of the row starting at `start`, without its newline.
fn line(start: usize) -> &'static str {
    let rest = &ROWS[start..];
    rest.split_once('\n').map_or(rest, |(line, _)| line)
}

/// The row of the MR kind `kind` of `group` (given without `.m.`), if it
/// carries a tag field.
pub(crate) fn find(group: &str, kind: &str) -> Option<Row> {
    let key = |start: usize| {
        let mut columns = line(start).splitn(3, '\t');
        (
            columns.next().unwrap_or_default(),
            columns.next().unwrap_or_default(),
        )
    };
    let at = ROW_STARTS.partition_point(|&start| key(start) < (group, kind));
    let start = *ROW_STARTS.get(at)?;
    (key(start) == (group, kind))
        .then(|| Row::parse(line(start)))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    // The tests' way in: here, where the table is in reach.
    impl Row {
        /// Every row, in the table's order.
        pub(crate) fn every() -> impl Iterator<Item = Row> {
            (ROWS.lines())
                .filter(|line| !line.starts_with('#'))
                .filter_map(Row::parse)
        }
    }

    const TAGS: &str = "spec.forProvider.tags";
    const LABELS: &str = "spec.forProvider.labels";
    const RESOURCE_LABELS: &str = "spec.forProvider.resourceLabels";

    #[test]
    fn every_line_is_a_row_sorted_and_unique() {
        let lines = ROWS.lines().filter(|line| !line.starts_with('#')).count();
        let rows: Vec<Row> = Row::every().collect();
        assert_eq!(rows.len(), lines, "a line that is not a row");
        for pair in rows.windows(2) {
            assert!(
                (pair[0].group, pair[0].kind) < (pair[1].group, pair[1].kind),
                "{pair:?}"
            );
        }
    }

    #[test]
    fn counts_per_family_are_the_header_s() {
        for (family, name) in [
            (Family::Aws, "aws"),
            (Family::Azure, "azure"),
            (Family::Gcp, "gcp"),
        ] {
            let header = (ROWS.lines())
                .find_map(|line| line.strip_prefix(&format!("#   {name}\t")))
                .unwrap();
            let count: usize = header.rsplit('\t').next().unwrap().parse().unwrap();
            assert_eq!(
                Row::every().filter(|row| row.family == family).count(),
                count
            );
        }
    }

    #[test]
    fn each_row_is_of_its_family() {
        for row in Row::every() {
            let suffix = match row.family {
                Family::Aws => "aws.upbound.io",
                Family::Azure => "azure.upbound.io",
                Family::Gcp => "gcp.upbound.io",
            };
            let service = row.group.strip_suffix(suffix);
            let of_family = service.is_some_and(|s| s.is_empty() || s.ends_with('.'));
            assert!(of_family, "{row:?}");
            assert!(!row.group.contains(".m."), "{row:?}");
            let fields: &[&str] = match row.family {
                Family::Gcp => &[LABELS, RESOURCE_LABELS],
                _ => &[TAGS],
            };
            assert!(fields.contains(&row.field), "{row:?}");
        }
    }

    #[test]
    fn the_row_starts_are_the_rows() {
        assert_eq!(ROW_COUNT, Row::every().count());
        for (start, row) in ROW_STARTS.into_iter().zip(Row::every()) {
            assert_eq!(Row::parse(line(start)), Some(row));
        }
    }

    #[test]
    fn find_looks_up_by_group_and_kind() {
        for row in Row::every() {
            assert_eq!(find(row.group, row.kind), Some(row));
        }
        assert!(find("ec2.aws.upbound.io", "NoSuchKind").is_none());
        assert!(find("ec2.aws.m.upbound.io", "VPC").is_none());
    }

    #[test]
    fn the_kinds_docs_name() {
        // Rows (docs/managed-resources.md): one per family and GKE's Cluster.
        assert_eq!(find("ec2.aws.upbound.io", "VPC").unwrap().field, TAGS);
        let group = find("azure.upbound.io", "ResourceGroup").unwrap();
        assert_eq!(group.field, TAGS);
        let bucket = find("storage.gcp.upbound.io", "Bucket").unwrap();
        assert_eq!(bucket.field, LABELS);
        let gke = find("container.gcp.upbound.io", "Cluster").unwrap();
        assert_eq!(gke.field, RESOURCE_LABELS);
        // Kinds whose tag-like field has another shape or meaning: never written.
        for (group, kind) in [
            ("autoscaling.aws.upbound.io", "AutoscalingGroup"),
            ("autoscaling.aws.upbound.io", "GroupTag"),
            ("apimanagement.azure.upbound.io", "NamedValue"),
            ("eventgrid.azure.upbound.io", "EventSubscription"),
            ("monitoring.gcp.upbound.io", "NotificationChannel"),
            ("monitoring.gcp.upbound.io", "MetricDescriptor"),
        ] {
            assert!(find(group, kind).is_none(), "{group} {kind}");
        }
    }
}
