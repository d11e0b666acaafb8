//! Tag keys: the one rule that names a label's tag and says which entries of
//! a tag field are the policy's, for composite resources and CAPI
//! infrastructure alike (docs, "Tag keys").
//!
//! A tag key is the prefix in force, then a body: `cloudTags.tagKeys[key]`
//! when the settings choose one, else the qualified label key itself. The
//! prefix in force is the applied profile's own (a user profile's `prefix`,
//! the built-in `capg`'s `plexsphere-`), else `cloudTags.prefix`. Entries
//! whose key starts with it are the policy's; every other entry is the
//! user's.

use super::profile::TagProfile;
use std::collections::BTreeMap;

/// The default of `cloudTags.prefix`: the seed's constant, so `{}` settings
/// keep every tag key as it was.
pub const DEFAULT_PREFIX: &str = "plexsphere:";

/// `cloudTags.tagKeys`: qualified label key → the body of its tag key.
pub type Bodies = BTreeMap<String, String>;

/// The tag keys of one object under one profile.
#[derive(Debug, Clone, Copy)]
pub struct TagKeys<'s> {
    /// The prefix in force.
    pub prefix: &'s str,
    /// Whether it is the profile's own (else `cloudTags.prefix`).
    pub profile_prefix: bool,
    bodies: &'s Bodies,
}

impl<'s> TagKeys<'s> {
    /// The tag keys under `profile`: its own prefix if it has one, else
    /// `default_prefix` (`cloudTags.prefix`).
    pub fn new(profile: &'s TagProfile, default_prefix: &'s str, bodies: &'s Bodies) -> Self {
        Self {
            prefix: profile.prefix.as_deref().unwrap_or(default_prefix),
            profile_prefix: profile.prefix.is_some(),
            bodies,
        }
    }

    /// Where the prefix comes from, in words (explanations).
    pub fn prefix_from(&self, profile: &TagProfile) -> String {
        match self.profile_prefix {
            true => format!("the own prefix of profile {}", profile.name),
            false => "cloudTags.prefix".to_owned(),
        }
    }

    /// The body of `qualified_key`'s tag key.
    pub fn body<'k>(&self, qualified_key: &'k str) -> &'k str
    where
        's: 'k,
    {
        self.bodies
            .get(qualified_key)
            .map_or(qualified_key, String::as_str)
    }

    /// Writes `qualified_key`'s tag key into `key`, replacing what it held.
    pub fn write(&self, qualified_key: &str, key: &mut String) {
        key.clear();
        key.push_str(self.prefix);
        key.push_str(self.body(qualified_key));
    }

    /// `qualified_key`'s tag key.
    pub fn tag_key(&self, qualified_key: &str) -> String {
        let mut key = String::new();
        self.write(qualified_key, &mut key);
        key
    }

    /// Whether an entry with this key is the policy's.
    pub fn owns(&self, key: &str) -> bool {
        key.starts_with(self.prefix)
    }

    /// The qualified label key a policy entry's key is written for: the
    /// label whose chosen body it carries, else the body itself. `None`
    /// for a key the policy does not own.
    pub fn qualified_key_of<'k>(&self, tag_key: &'k str) -> Option<&'k str>
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
    use crate::tags::profile::{AWS, CAPG};

    fn bodies() -> Bodies {
        Bodies::from([(
            "team.example.com/cost-center".to_owned(),
            "cost-center".to_owned(),
        )])
    }

    #[test]
    fn a_tag_key_is_the_prefix_in_force_and_the_body() {
        let bodies = bodies();
        let aws = TagKeys::new(&AWS, DEFAULT_PREFIX, &bodies);
        assert_eq!(aws.tag_key("team"), "plexsphere:team");
        assert_eq!(
            aws.tag_key("team.example.com/cost-center"),
            "plexsphere:cost-center"
        );
        let gcp = TagKeys::new(&CAPG, DEFAULT_PREFIX, &bodies);
        assert_eq!(gcp.tag_key("team"), "plexsphere-team");
        let chosen = TagKeys::new(&AWS, "acme/", &bodies);
        assert_eq!(chosen.tag_key("team"), "acme/team");
    }

    #[test]
    fn ownership_and_the_label_behind_a_key_follow_the_prefix_in_force() {
        let bodies = bodies();
        let gcp = TagKeys::new(&CAPG, DEFAULT_PREFIX, &bodies);
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
