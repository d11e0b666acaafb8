//! The tag profiles in force ([`Profiles`]): which profile a composite
//! resource's provider value selects, and which one a CAPI infrastructure
//! row names, user profiles first (docs/cloud-tags.md, "Built-in profiles").

pub(crate) mod char_class;
pub(crate) mod provider_limits;
pub(crate) mod provider_refuses;
pub(crate) mod user_defined;

use crate::tags::profiles::provider_limits::{
    BUILT_IN, GENERIC, INFRASTRUCTURE, Origin, TagProfile,
};

/// The profiles in force: the user's first, then the built-ins whose
/// providers no user profile took over, then the fallback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Profiles {
    user: Vec<TagProfile>,
    built_in: Vec<&'static TagProfile>,
}

/// Whether no user profile lists a provider of `built_in`: a user profile
/// that does replaces it, and the built-in must not answer then.
fn still_applies(built_in: &TagProfile, user: &[TagProfile]) -> bool {
    !built_in
        .providers
        .iter()
        .any(|p| user.iter().any(|u| u.selected_by(p)))
}

impl Default for Profiles {
    fn default() -> Self {
        Self::new(Vec::new())
    }
}

impl Profiles {
    /// The profiles in force given the user's (already validated) ones.
    pub(crate) fn new(user: Vec<TagProfile>) -> Self {
        let built_in = BUILT_IN
            .into_iter()
            .filter(|b| still_applies(b, &user))
            .collect();
        Self { user, built_in }
    }

    /// The profile for a provider value, matched ignoring case, and why.
    pub(crate) fn resolve(&self, provider: Option<&str>) -> (&TagProfile, Origin) {
        let Some(provider) = provider else {
            return (&GENERIC, Origin::Fallback);
        };
        if let Some(index) = self.user.iter().position(|p| p.selected_by(provider)) {
            return (&self.user[index], Origin::UserDefined { index });
        }
        self.built_in
            .iter()
            .find(|p| p.selected_by(provider))
            .map_or((&GENERIC, Origin::Fallback), |p| (*p, Origin::BuiltIn))
    }

    /// The profile for a CAPI infrastructure kind whose target row names the
    /// built-in `name` (`capa`, ...), and why: the first user profile listing
    /// `name` among its providers replaces the built-in. `None` for a name
    /// no built-in infrastructure profile has.
    pub(crate) fn infrastructure(&self, name: &str) -> Option<(&TagProfile, Origin)> {
        if let Some(index) = self.user.iter().position(|p| p.selected_by(name)) {
            return Some((&self.user[index], Origin::UserDefined { index }));
        }
        INFRASTRUCTURE
            .into_iter()
            .find(|p| p.name == name)
            .map(|p| (p, Origin::BuiltIn))
    }

    /// Every profile a composite resource's provider value can select, and
    /// the fallback.
    pub(crate) fn selectable(&self) -> impl Iterator<Item = &TagProfile> {
        (self.user.iter())
            .chain(self.built_in.iter().copied())
            .chain([&GENERIC])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tags::profiles::provider_limits::AWS;
    use rstest::rstest;
    use std::borrow::Cow;

    // What the tests ask: here, where the field is in reach.
    impl Profiles {
        /// The user-defined profiles, in settings order.
        pub(crate) fn user(&self) -> &[TagProfile] {
            &self.user
        }
    }

    #[rstest]
    #[case::aws_lower(Some("aws"), "aws")]
    #[case::aws_upper(Some("AWS"), "aws")]
    #[case::hetzner_mixed(Some("HeTzNeR"), "hetzner")]
    #[case::openstack(Some("OpenStack"), "openstack")]
    #[case::gcp(Some("gcp"), "gcp")]
    #[case::google(Some("Google"), "gcp")]
    #[case::azure(Some("AZURE"), "azure")]
    #[case::unknown(Some("ibm"), "generic")]
    #[case::padded_is_unknown(Some(" aws"), "generic")]
    #[case::empty(Some(""), "generic")]
    #[case::missing(None, "generic")]
    fn resolve_matches_ignoring_case(#[case] provider: Option<&str>, #[case] name: &str) {
        assert_eq!(Profiles::default().resolve(provider).0.name, name);
    }

    fn user(name: &'static str, providers: &'static [Cow<'static, str>]) -> TagProfile {
        TagProfile {
            name: Cow::Borrowed(name),
            providers: Cow::Borrowed(providers),
            cap: 47,
            ..AWS.clone()
        }
    }

    #[test]
    fn user_profile_listing_a_built_in_provider_replaces_it() {
        let profiles = Profiles::new(vec![user("aws-upjet", &[Cow::Borrowed("AWS")])]);
        let (profile, origin) = profiles.resolve(Some("aws"));
        assert_eq!((&*profile.name, profile.cap), ("aws-upjet", 47));
        assert_eq!(origin, Origin::UserDefined { index: 0 });
        assert_eq!(profiles.resolve(Some("hetzner")).1, Origin::BuiltIn);
        assert_eq!(profiles.resolve(Some("ibm")).1, Origin::Fallback);
    }

    #[test]
    fn infrastructure_profiles_are_named_by_rows_and_replaced_by_user_profiles() {
        let profiles = Profiles::default();
        for name in ["capa", "capz", "capg", "capo"] {
            let (profile, origin) = profiles.infrastructure(name).unwrap();
            assert_eq!((&*profile.name, origin), (name, Origin::BuiltIn));
        }
        assert_eq!(profiles.infrastructure("aws"), None);
        // XRs never select them by provider value.
        assert_eq!(profiles.resolve(Some("capa")).0.name, "generic");
        let replaced = Profiles::new(vec![user("aws-strict", &[Cow::Borrowed("CAPA")])]);
        let (profile, origin) = replaced.infrastructure("capa").unwrap();
        assert_eq!(
            (&*profile.name, origin),
            ("aws-strict", Origin::UserDefined { index: 0 })
        );
    }
}
