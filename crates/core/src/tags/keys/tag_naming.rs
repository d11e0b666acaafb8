//! Tag keys: the one rule that names a label's tag and says which entries of
//! a tag field are the policy's, for composite resources and CAPI
//! infrastructure alike (docs, "Tag keys").
//!
//! A tag key is the prefix in force, then a body: `cloudTags.tagKeys[key]`
//! when the settings choose one, else the qualified label key itself. The
//! prefix in force is, in this order, the applied user profile's own
//! `prefix`; `cloudTags.prefix` when the settings set it (for every
//! profile); the profile's built-in default (`plexsphere-` for `capg` and
//! `gcp`, whose keys refuse `:`, else `plexsphere:`). Entries whose key
//! starts with it are the policy's; every other entry is the user's.

pub(crate) use crate::tags::profiles::provider_limits::DEFAULT_PREFIX;
use crate::tags::profiles::provider_limits::TagProfile;
use std::collections::BTreeMap;

/// `cloudTags.tagKeys`: qualified label key → the body of its tag key.
pub(crate) type Bodies = BTreeMap<String, String>;

/// Which rule gave the prefix in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PrefixFrom {
    /// The applied user profile's own `prefix`.
    Profile,
    /// `cloudTags.prefix`, set in the settings.
    Settings,
    /// The profile's built-in default.
    Default,
}

/// The tag keys of one object under one profile.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TagKeys<'s> {
    /// The prefix in force.
    pub prefix: &'s str,
    /// Where it comes from.
    pub(crate) from: PrefixFrom,
    bodies: &'s Bodies,
}

impl<'s> TagKeys<'s> {
    /// The tag keys under `profile`: its own prefix if it has one, else
    /// `settings_prefix` (`cloudTags.prefix`, when set), else the
    /// profile's default.
    pub(crate) fn new(
        profile: &'s TagProfile,
        settings_prefix: Option<&'s str>,
        bodies: &'s Bodies,
    ) -> Self {
        let (prefix, from) = match (profile.prefix.as_deref(), settings_prefix) {
            (Some(own), _) => (own, PrefixFrom::Profile),
            (None, Some(set)) => (set, PrefixFrom::Settings),
            (None, None) => (profile.default_prefix, PrefixFrom::Default),
        };
        Self {
            prefix,
            from,
            bodies,
        }
    }

    /// Where the prefix comes from, in words (explanations).
    pub(crate) fn prefix_from(&self, profile: &TagProfile) -> String {
        match self.from {
            PrefixFrom::Profile => format!("the own prefix of profile {}", profile.name),
            PrefixFrom::Settings => "cloudTags.prefix".to_owned(),
            PrefixFrom::Default => format!(
                "the default of profile {} (cloudTags.prefix is not set)",
                profile.name
            ),
        }
    }

    /// The body of `qualified_key`'s tag key.
    pub(crate) fn body<'k>(&self, qualified_key: &'k str) -> &'k str
    where
        's: 'k,
    {
        self.bodies
            .get(qualified_key)
            .map_or(qualified_key, String::as_str)
    }

    /// Whether `cloudTags.tagKeys` chooses a body for some label: only then
    /// can two labels' tag keys sort unlike their qualified keys.
    pub(crate) fn chooses_bodies(&self) -> bool {
        !self.bodies.is_empty()
    }

    /// Writes `qualified_key`'s tag key into `key`, replacing what it held.
    /// Inlined: the transform calls it once a label, in its hot loop.
    #[inline(always)]
    pub(crate) fn write(&self, qualified_key: &str, key: &mut String) {
        key.clear();
        key.push_str(self.prefix);
        key.push_str(self.body(qualified_key));
    }

    /// `qualified_key`'s tag key.
    pub(crate) fn tag_key(&self, qualified_key: &str) -> String {
        let mut key = String::new();
        self.write(qualified_key, &mut key);
        key
    }

    /// Whether an entry with this key is the policy's.
    pub(crate) fn owns(&self, key: &str) -> bool {
        key.starts_with(self.prefix)
    }

    /// The qualified label key a policy entry's key is written for: the
    /// label whose chosen body it carries, else the body itself. `None`
    /// for a key the policy does not own.
    pub(crate) fn qualified_key_of<'k>(&self, tag_key: &'k str) -> Option<&'k str>
    where
        's: 'k,
    {
        let body = tag_key.strip_prefix(self.prefix)?;
        let chosen = self
            .bodies
            .iter()
            .find(|(_, chosen)| chosen.as_str() == body)
            .map(|(key, _)| key.as_str());
        Some(chosen.unwrap_or(body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::profiles::provider_limits::{AWS, CAPG, GCP};

    fn bodies() -> Bodies {
        Bodies::from([(
            "team.example.com/cost-center".to_owned(),
            "cost-center".to_owned(),
        )])
    }

    #[test]
    fn a_tag_key_is_the_prefix_in_force_and_the_body() {
        let bodies = bodies();
        let aws = TagKeys::new(&AWS, None, &bodies);
        assert_eq!(aws.tag_key("team"), "plexsphere:team");
        assert_eq!(
            aws.tag_key("team.example.com/cost-center"),
            "plexsphere:cost-center"
        );
        let gcp = TagKeys::new(&CAPG, None, &bodies);
        assert_eq!(gcp.tag_key("team"), "plexsphere-team");
        let chosen = TagKeys::new(&AWS, Some("acme/"), &bodies);
        assert_eq!(chosen.tag_key("team"), "acme/team");
    }

    /// A user profile's own prefix, then `cloudTags.prefix` when set (for
    /// `capg` and `gcp` too, even when it spells a default), then the
    /// profile's built-in default.
    #[test]
    fn the_prefix_in_force_follows_the_order() {
        let bodies = bodies();
        let own = TagProfile {
            prefix: Some("corp_".into()),
            ..AWS.clone()
        };
        for (profile, set, prefix, from) in [
            (&own, Some("acme-"), "corp_", PrefixFrom::Profile),
            (&own, None, "corp_", PrefixFrom::Profile),
            (&CAPG, Some("acme-"), "acme-", PrefixFrom::Settings),
            (
                &GCP,
                Some("plexsphere:"),
                "plexsphere:",
                PrefixFrom::Settings,
            ),
            (&CAPG, None, "plexsphere-", PrefixFrom::Default),
            (&GCP, None, "plexsphere-", PrefixFrom::Default),
            (&AWS, None, "plexsphere:", PrefixFrom::Default),
        ] {
            let keys = TagKeys::new(profile, set, &bodies);
            assert_eq!((keys.prefix, keys.from), (prefix, from), "{}", profile.name);
        }
    }

    #[test]
    fn ownership_and_the_label_behind_a_key_follow_the_prefix_in_force() {
        let bodies = bodies();
        let gcp = TagKeys::new(&CAPG, None, &bodies);
        assert!(gcp.owns("plexsphere-team"));
        assert!(!gcp.owns("plexsphere:team"));
        assert_eq!(
            gcp.qualified_key_of("plexsphere-cost-center"),
            Some("team.example.com/cost-center")
        );
        assert_eq!(gcp.qualified_key_of("plexsphere-team"), Some("team"));
        assert_eq!(gcp.qualified_key_of("team"), None);
    }
}
