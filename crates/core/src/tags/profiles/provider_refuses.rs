//! What the seed's Hetzner and OpenStack profiles admit in a tag key but
//! their providers' APIs refuse (docs, "Cloud tags", the built-in profiles'
//! limits). The profiles keep the seed's rule, so such a tag is written;
//! explanations say it will fail at the provider and name the fix.

use crate::json::quote::quoted;

/// A provider's own rule on tag keys, stricter than its profile's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProviderRefuses {
    /// The byte offset and character of the first refused character of a
    /// tag key, if any.
    pub(crate) finds: fn(&str) -> Option<(usize, char)>,
    /// What the provider's API refuses, in words.
    pub(crate) says: &'static str,
}

/// Rules are told apart by what they say: each provider has one, and
/// function addresses are no identity.
impl PartialEq for ProviderRefuses {
    fn eq(&self, other: &Self) -> bool {
        self.says == other.says
    }
}

impl Eq for ProviderRefuses {}

/// Hetzner Cloud label keys: no `:`, and a `/` only once, after a DNS
/// subdomain prefix (`example.com/team`).
pub(crate) const HETZNER: ProviderRefuses = ProviderRefuses {
    finds: hetzner,
    says: "Hetzner's API refuses ':' in label keys, and '/' but once after a DNS-name prefix",
};

/// Nova server metadata keys: no `/`.
pub(crate) const NOVA: ProviderRefuses = ProviderRefuses {
    finds: |key| key.char_indices().find(|(_, c)| *c == '/'),
    says: "Nova refuses '/' in server metadata keys",
};

fn hetzner(key: &str) -> Option<(usize, char)> {
    if let Some(colon) = key.find(':') {
        return Some((colon, ':'));
    }
    let slash = key.find('/')?;
    let again = key[slash + 1..].find('/').map(|at| slash + 1 + at);
    match again {
        Some(second) => Some((second, '/')),
        None if !is_dns_subdomain(&key[..slash]) => Some((slash, '/')),
        None => None,
    }
}

/// RFC 1123 subdomain, as Kubernetes checks a label key's prefix.
fn is_dns_subdomain(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 253
        && text.split('.').all(|label| {
            let bytes = label.as_bytes();
            (1..=63).contains(&bytes.len())
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
                && bytes[0] != b'-'
                && bytes[bytes.len() - 1] != b'-'
        })
}

impl ProviderRefuses {
    /// Why `tag_key` (whose first `prefix_len` bytes are the prefix in
    /// force) will fail at the provider of profile `profile`, and the fix:
    /// another prefix when the refused character is in the prefix, a
    /// `cloudTags.tagKeys` body when it is in the body.
    pub(crate) fn caution(
        &self,
        profile: &str,
        tag_key: &str,
        prefix_len: usize,
    ) -> Option<String> {
        let (at, character) = (self.finds)(tag_key)?;
        let fix = if at < prefix_len {
            format!(
                "set a prefix without it (cloudTags.prefix, or a profile of your own listing {profile})"
            )
        } else {
            "name its key with cloudTags.tagKeys".to_owned()
        };
        Some(format!(
            "{} holds {character:?}: {}; {fix}",
            quoted(tag_key),
            self.says
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::colon_in_the_prefix("plexsphere:team", Some((10, ':')))]
    #[case::dns_prefix("acme-platform/env", None)]
    #[case::dotted_dns_prefix("acme.example.com/team", None)]
    #[case::two_slashes("acme-a/b/c", Some((8, '/')))]
    #[case::not_a_dns_prefix("Acme_x/team", Some((6, '/')))]
    #[case::plain("acme-team", None)]
    fn hetzner_label_keys(#[case] key: &str, #[case] expected: Option<(usize, char)>) {
        assert_eq!(hetzner(key), expected);
    }

    #[test]
    fn the_fix_depends_on_where_the_refused_character_is() {
        let in_prefix = HETZNER.caution("hetzner", "plexsphere:team", 11).unwrap();
        assert_eq!(
            in_prefix,
            "\"plexsphere:team\" holds ':': Hetzner's API refuses ':' in label keys, and '/' but \
             once after a DNS-name prefix; set a prefix without it (cloudTags.prefix, or a profile \
             of your own listing hetzner)"
        );
        let in_body = NOVA
            .caution("openstack", "plexsphere:platform/env", 11)
            .unwrap();
        assert!(
            in_body.ends_with("; name its key with cloudTags.tagKeys"),
            "{in_body}"
        );
        assert_eq!(NOVA.caution("openstack", "plexsphere:team", 11), None);
    }
}
