//! The metadata annotations `artifacthub-pkg.yml` is made from, and kwctl's
//! checks of their values (policy-evaluator `policy_artifacthub.rs`).

use anyhow::{Result, anyhow, bail};
use serde::Serialize;
use url::Url;

/// The policy's name.
pub const TITLE: &str = "io.kubewarden.policy.title";
/// Its version (semver).
pub const VERSION: &str = "io.kubewarden.policy.version";
/// One line about it.
pub const DESCRIPTION: &str = "io.kubewarden.policy.description";
/// `Name <email>` entries, comma-separated.
pub const AUTHOR: &str = "io.kubewarden.policy.author";
/// Its home page.
pub const URL: &str = "io.kubewarden.policy.url";
/// Its source repository.
pub const SOURCE: &str = "io.kubewarden.policy.source";
/// Its SPDX license.
pub const LICENSE: &str = "io.kubewarden.policy.license";
/// Where it is published, without the tag.
pub const OCI_URL: &str = "io.kubewarden.policy.ociUrl";
/// Its name on Artifact Hub.
pub const DISPLAY_NAME: &str = "io.artifacthub.displayName";
/// The Kubernetes kinds it acts on, for Artifact Hub.
pub const RESOURCES: &str = "io.artifacthub.resources";
/// Comma-separated keywords.
pub const KEYWORDS: &str = "io.artifacthub.keywords";
/// Whether the Rancher UI hides it.
pub const HIDDEN_UI: &str = "io.kubewarden.hidden-ui";
/// A release tag other than `vVERSION` (monorepos).
pub const RELEASE_TAG: &str = "com.github.release.tag";

/// A link Artifact Hub shows (`links[]`).
#[derive(Debug, Serialize, PartialEq)]
pub struct Link {
    name: &'static str,
    url: String,
}

/// One `Name <email>` of the author annotation (`maintainers[]`).
#[derive(Debug, Serialize, PartialEq)]
pub struct Maintainer {
    name: String,
    email: String,
}

/// `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]`, checked by the `semver` crate
/// as kwctl checks it.
pub fn check_semver(version: &str) -> Result<()> {
    semver::Version::parse(version)
        .map(drop)
        .map_err(|error| anyhow!("{VERSION}: {version:?} is not a semver version: {error}"))
}

/// `value` of `annotation` as a URL.
pub fn parse_url(annotation: &str, value: &str) -> Result<Url> {
    Url::parse(value).map_err(|error| anyhow!("{annotation}: malformed URL {value:?}: {error}"))
}

/// `OCI_URL:vVERSION`, normalised as an OCI reference like kwctl does.
pub fn oci_image(oci_url: &str, version: &str) -> Result<String> {
    let reference = oci_client::Reference::try_from(format!("{oci_url}:v{version}"))
        .map_err(|error| anyhow!("{OCI_URL}: malformed reference {oci_url:?}: {error}"))?;
    Ok(reference.to_string())
}

/// Comma-separated keywords, trimmed; an empty entry is an error.
pub fn parse_keywords(keywords: &str) -> Result<Vec<String>> {
    let list: Vec<String> = keywords
        .split(',')
        .map(|word| word.trim_matches(' ').to_owned())
        .collect();
    if list.iter().any(String::is_empty) {
        bail!("{KEYWORDS}: malformed comma-separated list {keywords:?}");
    }
    Ok(list)
}

/// The source link, and for GitHub sources the release asset `policy.wasm`
/// of tag `vVERSION` (or of `com.github.release.tag`, URL-encoded, for
/// monorepo tags such as `policy/v1.0.0`).
pub fn parse_links(source: &str, version: &str, release_tag: Option<&str>) -> Result<Vec<Link>> {
    let source_url = parse_url(SOURCE, source)?;
    let source_link = Link {
        name: "source",
        url: source_url.to_string(),
    };
    if source_url.host_str() != Some("github.com") {
        return Ok(vec![source_link]);
    }
    let tag = match release_tag {
        Some(tag) => tag.replace('/', "%2F"),
        None => format!("v{version}"),
    };
    let policy = parse_url(
        SOURCE,
        &format!(
            "{}/releases/download/{tag}/policy.wasm",
            source_url.as_str()
        ),
    )?;
    Ok(vec![
        Link {
            name: "policy",
            url: policy.to_string(),
        },
        source_link,
    ])
}

/// `Name <email>` entries separated by commas (RFC 5322 name-addr, as kwctl
/// parses them); a bare address is allowed, a name without one is not.
pub fn parse_maintainers(author: &str) -> Result<Vec<Maintainer>> {
    let mut maintainers = Vec::new();
    for entry in author.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (name, email) = match entry.split_once('<') {
            Some((name, rest)) => {
                let email = rest
                    .strip_suffix('>')
                    .ok_or_else(|| anyhow!("{AUTHOR}: {entry:?} is not `Name <email>`"))?;
                (name.trim().trim_matches('"').to_owned(), email.trim())
            }
            None => (String::new(), entry),
        };
        if !is_email(email) {
            bail!("{AUTHOR}: {entry:?} is not `Name <email>`: {email:?} is not an email address");
        }
        maintainers.push(Maintainer {
            name,
            email: email.to_owned(),
        });
    }
    if maintainers.is_empty() {
        bail!("{AUTHOR}: malformed list of `Name <email>` entries: {author:?}");
    }
    Ok(maintainers)
}

fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.rsplit_once('@') else {
        return false;
    };
    let local_ok = !local.is_empty()
        && local
            .bytes()
            .all(|b| b.is_ascii_graphic() && !b"()<>[]:;@\\,\"".contains(&b));
    let domain_ok = domain.split('.').all(|label| {
        !label.is_empty()
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    });
    local_ok && domain_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_must_be_semver() {
        for good in ["0.1.0", "1.2.3-rc.1", "1.2.3+build.5", "10.20.30-alpha-1+x"] {
            assert!(check_semver(good).is_ok(), "{good}");
        }
        for bad in ["v0.1.0", "0.1", "01.1.1", "1.2.3-", "1.2.3-a..b", "latest"] {
            assert!(check_semver(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn maintainers_need_an_email_address() {
        assert_eq!(
            parse_maintainers("Foo <foo@example.com>,,Bar <bar@example.com>").unwrap(),
            vec![
                Maintainer {
                    name: "Foo".to_owned(),
                    email: "foo@example.com".to_owned()
                },
                Maintainer {
                    name: "Bar".to_owned(),
                    email: "bar@example.com".to_owned()
                },
            ]
        );
        for bad in [
            "",
            "plexsphere maintainers",
            "Foo missing@chevrons.com, Bar <bar@example.com>",
            "Bar <#$%#$%>",
            "Bar <bar@example.com",
        ] {
            assert!(parse_maintainers(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn keywords_refuse_empty_entries() {
        assert_eq!(
            parse_keywords(" foo,bar, faz fiz, baz").unwrap(),
            vec!["foo", "bar", "faz fiz", "baz"]
        );
        assert!(parse_keywords("").is_err());
        assert!(parse_keywords("foo,,bar").is_err());
    }

    #[test]
    fn links_use_the_release_tag_and_skip_non_github_sources() {
        assert_eq!(
            parse_links("https://notgithub.com/repo", "0.2.1", None).unwrap(),
            vec![Link {
                name: "source",
                url: "https://notgithub.com/repo".to_owned()
            }]
        );
        assert_eq!(
            parse_links("https://github.com/o/policies", "0.1.7", Some("p/v0.1.7")).unwrap()[0].url,
            "https://github.com/o/policies/releases/download/p%2Fv0.1.7/policy.wasm"
        );
        assert!(parse_links("@&*foo", "0.1.0", None).is_err());
    }
}
