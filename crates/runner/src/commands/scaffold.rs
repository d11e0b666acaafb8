//! `policy-runner scaffold artifacthub`: the `artifacthub-pkg.yml` that
//! `kwctl scaffold artifacthub` writes (kwctl `scaffold/artifacthub.rs`,
//! policy-evaluator `policy_artifacthub.rs`) from metadata.yml alone: kwctl's
//! fields, order, header comment and checks, and its `install` text word for
//! word (Kubewarden's release workflows regenerate the file with kwctl, so
//! any other text would flip on every release; the README's install section
//! covers what a context-aware policy needs beyond it). `createdAt` comes
//! from `SOURCE_DATE_EPOCH` when set, so the file regenerates byte for byte.

mod annotations;
mod package;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow};

use crate::cli::ArtifacthubArgs;
use crate::commands::metadata::Metadata;
use crate::commands::scaffold::package::ArtifactHubPkg;

/// kwctl's defaults when `--metadata-path` / `--questions-path` are absent.
const METADATA_FILES: [&str; 2] = ["metadata.yml", "metadata.yaml"];
const QUESTIONS_FILES: [&str; 2] = ["questions-ui.yml", "questions-ui.yaml"];

/// Runs `args`: writes the document to `--output`, or prints it.
pub fn artifacthub(args: &ArtifacthubArgs) -> Result<()> {
    let metadata_path = find(args.metadata_path.as_deref(), &METADATA_FILES)
        .ok_or_else(|| anyhow!("no metadata file: pass --metadata-path"))?;
    let text = fs::read_to_string(&metadata_path)
        .with_context(|| format!("cannot read metadata {}", metadata_path.display()))?;
    let metadata = Metadata::from_yaml(&text)
        .with_context(|| format!("invalid metadata {}", metadata_path.display()))?;
    let questions = find(args.questions_path.as_deref(), &QUESTIONS_FILES)
        .map(|path| {
            fs::read_to_string(&path)
                .with_context(|| format!("cannot read questions file {}", path.display()))
        })
        .transpose()?;

    let created_at = rfc3339(created_at_epoch()?)?;
    let pkg = ArtifactHubPkg::from_metadata(&metadata, created_at, questions.as_deref())?;
    let document = pkg.to_document()?;
    match &args.output {
        Some(path) => {
            fs::write(path, document).with_context(|| format!("cannot write {}", path.display()))?
        }
        None => print!("{document}"),
    }
    Ok(())
}

/// `explicit`, or the first of `defaults` that exists (kwctl's lookup).
fn find(explicit: Option<&Path>, defaults: &[&str]) -> Option<PathBuf> {
    match explicit {
        Some(path) => Some(path.to_owned()),
        None => defaults
            .iter()
            .map(PathBuf::from)
            .find(|path| path.is_file()),
    }
}

/// Seconds since the epoch for `createdAt` (and their nanoseconds):
/// `SOURCE_DATE_EPOCH` when set, else the clock.
fn created_at_epoch() -> Result<(i64, u32)> {
    match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(value) => {
            let seconds = value.trim().parse::<i64>().with_context(|| {
                format!("SOURCE_DATE_EPOCH is not a number of seconds: {value:?}")
            })?;
            Ok((seconds, 0))
        }
        Err(_) => {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .context("the clock is before 1970")?;
            let seconds = i64::try_from(now.as_secs()).context("the clock is out of range")?;
            Ok((seconds, now.subsec_nanos()))
        }
    }
}

/// RFC 3339 in UTC as kwctl writes `createdAt` (the `time` crate's
/// `Rfc3339`): no fraction when the nanoseconds are zero, otherwise without
/// trailing zeros; jiff's `Timestamp` prints it that way.
pub fn rfc3339((seconds, nanos): (i64, u32)) -> Result<String> {
    let nanos = i32::try_from(nanos).context("more than a second of nanoseconds")?;
    let instant = jiff::Timestamp::new(seconds, nanos)
        .map_err(|error| anyhow!("createdAt {seconds} s: {error}"))?;
    Ok(instant.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::format_description::well_known::Rfc3339;

    /// What kwctl writes for the same instant.
    fn kwctl((seconds, nanos): (i64, u32)) -> String {
        let instant = time::OffsetDateTime::from_unix_timestamp(seconds).unwrap()
            + time::Duration::nanoseconds(nanos.into());
        instant.format(&Rfc3339).unwrap()
    }

    #[test]
    fn rfc3339_matches_the_time_crate() {
        for instant in [
            (0, 0),
            (1_763_792_587, 0),
            (951_782_400, 500_000_000),
            (-1, 865_687_748),
            (-62_135_596_800, 1),
            (4_107_542_400, 120_000),
            (253_402_128_000, 999_999_999),
        ] {
            assert_eq!(rfc3339(instant).unwrap(), kwctl(instant), "{instant:?}");
        }
        assert_eq!(
            rfc3339((951_782_400, 500_000_000)).unwrap(),
            "2000-02-29T00:00:00.5Z"
        );
    }

    #[test]
    fn rfc3339_refuses_instants_outside_four_digit_years() {
        // 10000-01-01: kwctl's `time` cannot write it either
        assert!(rfc3339((253_402_300_800, 0)).is_err());
    }
}
