//! Tag profiles: the built-ins' table in docs/cloud-tags.md ("Built-in
//! profiles") and the user-defined ones (docs/settings.md, "User-defined tag
//! profiles").
//!
//! A profile is data: length ceilings and how they are measured, the count
//! cap, the key and value character classes and the reserved prefixes. The
//! built-in profiles and the ones users define in `cloudTags.profiles` are
//! values of the same type, resolved by the same `Profiles::resolve` (XRs)
//! or `Profiles::infrastructure` (the CAPI infrastructure kinds,
//! docs/infrastructure-tags.md) and applied by the same transformer,
//! which knows nothing provider-specific.

use super::char_class::{CharSet, KeyCharacters};
use super::provider_refuses::{self, ProviderRefuses};
use serde::Deserialize;
use std::borrow::Cow;

/// How a length ceiling is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Unit {
    /// Unicode scalar values ("characters" in AWS, Hetzner and generic docs).
    Runes,
    /// UTF-8 bytes (OpenStack server metadata limits).
    Bytes,
}

impl Unit {
    /// The length of `text` in this unit.
    pub(crate) fn measure(self, text: &str) -> usize {
        match self {
            Unit::Runes => text.chars().count(),
            Unit::Bytes => text.len(),
        }
    }

    /// Plural noun for messages.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            Unit::Runes => "runes",
            Unit::Bytes => "bytes",
        }
    }
}

/// A qualified-key prefix the provider reserves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReservedPrefix {
    /// The prefix.
    pub(crate) prefix: Cow<'static, str>,
    /// Whether it matches in any combination of ASCII upper and lower case,
    /// as AWS reserves `aws:`.
    pub(crate) ignore_case: bool,
}

impl ReservedPrefix {
    /// Whether `qualified_key` starts with this prefix.
    pub(crate) fn matches(&self, qualified_key: &str) -> bool {
        // ASCII case only: every reserved prefix providers document is
        // ASCII, and Unicode case tables would cost the module ~20 KiB.
        let prefix = self.prefix.as_bytes();
        qualified_key
            .as_bytes()
            .get(..prefix.len())
            .is_some_and(|head| match self.ignore_case {
                true => head.eq_ignore_ascii_case(prefix),
                false => head == prefix,
            })
    }
}

/// The constraints one provider puts on tags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TagProfile {
    /// Profile name, as reported in skip records (`aws`, `hetzner`, ...).
    pub name: Cow<'static, str>,
    /// Provider values that select this profile, matched ignoring case.
    pub providers: Cow<'static, [Cow<'static, str>]>,
    /// Maximum length of the prefixed tag key.
    pub key_max: usize,
    /// Maximum length of the value.
    pub value_max: usize,
    /// How both ceilings are measured.
    pub unit: Unit,
    /// Maximum number of tags the policy emits per object.
    pub cap: usize,
    /// Characters admitted in the prefixed tag key.
    pub key_characters: KeyCharacters,
    /// Characters admitted in the value; `None`: any.
    pub value_characters: Option<KeyCharacters>,
    /// Prefixes of the qualified key the provider reserves.
    pub reserved_prefixes: Cow<'static, [ReservedPrefix]>,
    /// The profile's own tag-key prefix (a user profile's `prefix`), which
    /// wins over `cloudTags.prefix` ([`crate::tags::keys::tag_naming::TagKeys`]).
    pub prefix: Option<Cow<'static, str>>,
    /// The prefix in force when neither the profile nor the settings set
    /// one: `plexsphere-` where the provider refuses `:` (GCP), else the
    /// seed's `plexsphere:`.
    pub default_prefix: &'static str,
    /// Characters the profile admits in a key (the seed's rule) but the
    /// provider's API refuses there: a tag whose key holds one is written,
    /// and explanations say it will fail at the provider.
    pub provider_refuses: Option<ProviderRefuses>,
}

impl TagProfile {
    /// Why a tag key under this profile will fail at the provider, if it
    /// holds a character the provider refuses (`ProviderRefuses`).
    pub(crate) fn provider_caution(&self, tag_key: &str, prefix_len: usize) -> Option<String> {
        (self.provider_refuses?).caution(&self.name, tag_key, prefix_len)
    }
}

/// The seed's prefix: the built-in default of every profile whose keys
/// admit `:`, so `{}` settings keep every tag key as it was.
pub(crate) const DEFAULT_PREFIX: &str = "plexsphere:";

/// The default prefix of the profiles whose keys refuse `:` (GCP labels).
pub(crate) const DASH_PREFIX: &str = "plexsphere-";

const LETTERS_DIGITS: &[CharSet] = &[CharSet::Letters, CharSet::Digits];

/// AWS: tagging guide limits.
pub(crate) static AWS: TagProfile = TagProfile {
    name: Cow::Borrowed("aws"),
    providers: Cow::Borrowed(&[Cow::Borrowed("aws")]),
    key_max: 128,
    value_max: 256,
    unit: Unit::Runes,
    cap: 50,
    key_characters: KeyCharacters::new(LETTERS_DIGITS, " +-=._:/@", ""),
    value_characters: None,
    reserved_prefixes: Cow::Borrowed(&[ReservedPrefix {
        prefix: Cow::Borrowed("aws:"),
        ignore_case: true,
    }]),
    prefix: None,
    default_prefix: DEFAULT_PREFIX,
    provider_refuses: None,
};

/// Hetzner Cloud labels.
pub(crate) static HETZNER: TagProfile = TagProfile {
    name: Cow::Borrowed("hetzner"),
    providers: Cow::Borrowed(&[Cow::Borrowed("hetzner")]),
    key_max: 63,
    value_max: 63,
    unit: Unit::Runes,
    cap: 64,
    key_characters: KeyCharacters::new(LETTERS_DIGITS, "-_.:/", ""),
    value_characters: None,
    reserved_prefixes: Cow::Borrowed(&[]),
    prefix: None,
    default_prefix: DEFAULT_PREFIX,
    provider_refuses: Some(provider_refuses::HETZNER),
};

/// OpenStack server metadata (byte ceilings).
pub(crate) static OPENSTACK: TagProfile = TagProfile {
    name: Cow::Borrowed("openstack"),
    providers: Cow::Borrowed(&[Cow::Borrowed("openstack")]),
    key_max: 255,
    value_max: 255,
    unit: Unit::Bytes,
    cap: 50,
    key_characters: KeyCharacters::new(&[CharSet::NonControl], "", ""),
    value_characters: None,
    reserved_prefixes: Cow::Borrowed(&[]),
    prefix: None,
    default_prefix: DEFAULT_PREFIX,
    provider_refuses: Some(provider_refuses::NOVA),
};

/// The strict fallback for any other provider: an unknown provider's real
/// constraints are unknown, so it gets a small, conservatively shaped set.
pub(crate) static GENERIC: TagProfile = TagProfile {
    name: Cow::Borrowed("generic"),
    providers: Cow::Borrowed(&[]),
    key_max: 63,
    value_max: 255,
    unit: Unit::Runes,
    cap: 32,
    key_characters: KeyCharacters::new(LETTERS_DIGITS, "-_.:/", ""),
    value_characters: None,
    reserved_prefixes: Cow::Borrowed(&[]),
    prefix: None,
    default_prefix: DEFAULT_PREFIX,
    provider_refuses: None,
};

/// GCP labels (Crossplane's GCP provider): 64 per resource less the
/// `goog-terraform-provisioned` label its Terraform provider adds; keys and
/// values lowercase letters, digits, `_` and `-`, at most 63 bytes.
pub(crate) static GCP: TagProfile = TagProfile {
    name: Cow::Borrowed("gcp"),
    providers: Cow::Borrowed(&[Cow::Borrowed("gcp"), Cow::Borrowed("google")]),
    key_max: 63,
    value_max: 63,
    unit: Unit::Bytes,
    cap: 63,
    key_characters: GCP_CHARACTERS,
    value_characters: Some(GCP_CHARACTERS),
    reserved_prefixes: Cow::Borrowed(&[]),
    prefix: None,
    default_prefix: DASH_PREFIX,
    provider_refuses: None,
};

/// Azure tags (Crossplane's Azure provider adds none): 50 per resource;
/// names printable but for `< > % & \ ? /`, values anything; names
/// starting `microsoft`, `azure` or `windows` are Azure's own.
pub(crate) static AZURE: TagProfile = TagProfile {
    name: Cow::Borrowed("azure"),
    providers: Cow::Borrowed(&[Cow::Borrowed("azure")]),
    key_max: 512,
    value_max: 256,
    unit: Unit::Runes,
    cap: 50,
    key_characters: AZURE_KEY_CHARACTERS,
    value_characters: None,
    reserved_prefixes: Cow::Borrowed(&[
        ReservedPrefix {
            prefix: Cow::Borrowed("microsoft"),
            ignore_case: true,
        },
        ReservedPrefix {
            prefix: Cow::Borrowed("azure"),
            ignore_case: true,
        },
        ReservedPrefix {
            prefix: Cow::Borrowed("windows"),
            ignore_case: true,
        },
    ]),
    prefix: None,
    default_prefix: DEFAULT_PREFIX,
    provider_refuses: None,
};

/// The built-in profiles selected by a provider value; anything else falls
/// back to [`GENERIC`].
pub(crate) static BUILT_IN: [&TagProfile; 5] = [&AWS, &HETZNER, &OPENSTACK, &GCP, &AZURE];

/// GCP label characters, for keys and values alike: lowercase letters,
/// digits, `_` and `-` (CAPG's too, which lowercases instance labels).
const GCP_CHARACTERS: KeyCharacters =
    KeyCharacters::new(&[CharSet::LowercaseLetters, CharSet::Digits], "_-", "");

/// Azure tag-name characters: printable but for `< > % & \ ? /` (CAPZ's too).
const AZURE_KEY_CHARACTERS: KeyCharacters =
    KeyCharacters::new(&[CharSet::Printable], "", "<>%&\\?/");

// The CAPI infrastructure providers' tag fields
// (docs/infrastructure-tags.md). Each cap is the cloud's per-resource limit less the tags
// the provider adds itself; each class is what the provider's webhook or
// the cloud accepts, whichever is stricter.

/// CAPA characters: the webhook's `^[a-zA-Z0-9\s\_\.\:\=\+\-\@\/]*$`
/// for keys and values alike, ASCII only though AWS allows Unicode
/// (cluster-api-provider-aws api/v1beta2/tags.go `Tags.Validate`).
const CAPA_CHARACTERS: KeyCharacters = KeyCharacters::new(
    &[CharSet::AsciiLetters, CharSet::AsciiDigits],
    " _.:=+-@/",
    "",
);

/// CAPA `spec.additionalTags`: AWS's 50 tags less the 5 CAPA puts on every
/// instance (`Name`, `MachineName`, two cluster tags, the role).
pub(crate) static CAPA: TagProfile = TagProfile {
    name: Cow::Borrowed("capa"),
    providers: Cow::Borrowed(&[Cow::Borrowed("capa")]),
    key_max: 128,
    value_max: 256,
    unit: Unit::Runes,
    cap: 45,
    key_characters: CAPA_CHARACTERS,
    value_characters: Some(CAPA_CHARACTERS),
    reserved_prefixes: Cow::Borrowed(&[ReservedPrefix {
        prefix: Cow::Borrowed("aws:"),
        ignore_case: true,
    }]),
    prefix: None,
    default_prefix: DEFAULT_PREFIX,
    provider_refuses: None,
};

/// CAPZ `spec.additionalTags`: Azure's 50 tags less the 4 CAPZ puts on a
/// VM; names are printable but for `< > % & \ ? /`, values anything. CAPZ
/// checks nothing at admission, so ARM would refuse them at reconcile time.
pub(crate) static CAPZ: TagProfile = TagProfile {
    name: Cow::Borrowed("capz"),
    providers: Cow::Borrowed(&[Cow::Borrowed("capz")]),
    key_max: 512,
    value_max: 256,
    unit: Unit::Runes,
    cap: 46,
    key_characters: AZURE_KEY_CHARACTERS,
    value_characters: None,
    reserved_prefixes: Cow::Borrowed(&[]),
    prefix: None,
    default_prefix: DEFAULT_PREFIX,
    provider_refuses: None,
};

/// CAPG `spec.additionalLabels`: GCP's 64 labels less CAPG's 2. GCP label
/// keys refuse the `:` of `plexsphere:`, so CAPG's default prefix is
/// `plexsphere-`.
pub(crate) static CAPG: TagProfile = TagProfile {
    name: Cow::Borrowed("capg"),
    providers: Cow::Borrowed(&[Cow::Borrowed("capg")]),
    key_max: 63,
    value_max: 63,
    unit: Unit::Bytes,
    cap: 62,
    key_characters: GCP_CHARACTERS,
    value_characters: Some(GCP_CHARACTERS),
    reserved_prefixes: Cow::Borrowed(&[]),
    prefix: None,
    default_prefix: DASH_PREFIX,
    provider_refuses: None,
};

/// CAPO `spec.serverMetadata`: Nova metadata keys (no `/`), Nova's default
/// metadata quota of 128 (CAPO adds none of its own).
pub(crate) static CAPO: TagProfile = TagProfile {
    name: Cow::Borrowed("capo"),
    providers: Cow::Borrowed(&[Cow::Borrowed("capo")]),
    key_max: 255,
    value_max: 255,
    unit: Unit::Bytes,
    cap: 128,
    key_characters: KeyCharacters::new(&[CharSet::AsciiLetters, CharSet::AsciiDigits], "-_:. ", ""),
    value_characters: None,
    reserved_prefixes: Cow::Borrowed(&[]),
    prefix: None,
    default_prefix: DEFAULT_PREFIX,
    provider_refuses: None,
};

/// The built-in infrastructure profiles, named by the target table's rows
/// ([`crate::tags::targets`]), never selected by an XR's provider value.
pub(crate) static INFRASTRUCTURE: [&TagProfile; 4] = [&CAPA, &CAPZ, &CAPG, &CAPO];

/// Why a profile applied to an XR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A built-in profile lists the provider.
    BuiltIn,
    /// `cloudTags.profiles[index]` lists the provider.
    UserDefined {
        /// Position in `cloudTags.profiles`.
        index: usize,
    },
    /// No profile lists the provider (or there is none): [`GENERIC`].
    Fallback,
}

impl Origin {
    /// `built-in`, `user-defined` or `fallback`.
    pub(crate) fn code(self) -> &'static str {
        match self {
            Origin::BuiltIn => "built-in",
            Origin::UserDefined { .. } => "user-defined",
            Origin::Fallback => "fallback",
        }
    }
}

impl TagProfile {
    /// Whether `provider` selects this profile (ignoring ASCII case).
    pub(crate) fn selected_by(&self, provider: &str) -> bool {
        self.providers
            .iter()
            .any(|p| p.eq_ignore_ascii_case(provider))
    }

    /// The reserved prefix `key` (a qualified key, a tag key or a prefix)
    /// starts with, if any.
    pub(crate) fn reserved_prefix_of(&self, key: &str) -> Option<&str> {
        self.reserved_prefixes
            .iter()
            .find(|r| r.matches(key))
            .map(|r| &*r.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::aws_lower("aws:cost", Some("aws:"))]
    #[case::aws_upper("AWS:cost", Some("aws:"))]
    #[case::aws_mixed("aWs:cost", Some("aws:"))]
    #[case::not_at_start("team/aws:cost", None)]
    #[case::shorter_than_prefix("aw", None)]
    #[case::multibyte_start("äws:x", None)]
    fn reserved_prefix_on_aws(#[case] key: &str, #[case] expected: Option<&str>) {
        assert_eq!(AWS.reserved_prefix_of(key), expected);
    }

    #[rstest]
    #[case::exact_case(false, "Microsoft.x", "microsoft", None)]
    #[case::exact_case_hit(false, "microsoftx", "microsoft", Some("microsoft"))]
    #[case::any_case(true, "MicroSoft.x", "microsoft", Some("microsoft"))]
    #[case::ascii_case_only(true, "ÄRGER/x", "ärger", None)]
    #[case::non_ascii_exact(false, "ärger/x", "ärger", Some("ärger"))]
    fn reserved_prefix_case(
        #[case] ignore_case: bool,
        #[case] key: &str,
        #[case] prefix: &'static str,
        #[case] expected: Option<&str>,
    ) {
        let profile = TagProfile {
            reserved_prefixes: Cow::Owned(vec![ReservedPrefix {
                prefix: Cow::Borrowed(prefix),
                ignore_case,
            }]),
            ..AWS.clone()
        };
        assert_eq!(profile.reserved_prefix_of(key), expected);
    }

    #[test]
    fn every_built_in_admits_its_default_prefix() {
        let all = BUILT_IN.into_iter().chain([&GENERIC]).chain(INFRASTRUCTURE);
        for profile in all {
            assert_eq!(profile.prefix, None, "{}", profile.name);
            let prefix = profile.default_prefix;
            assert_eq!(profile.blocks_every_tag(prefix), None, "{}", profile.name);
        }
    }

    /// GCP label keys refuse the `:` of the seed's prefix, which is why
    /// `capg` and `gcp` default to `plexsphere-`; every other built-in
    /// admits `plexsphere:`.
    #[test]
    fn only_the_gcp_profiles_default_to_a_dash_and_they_need_it() {
        for profile in INFRASTRUCTURE.into_iter().chain(BUILT_IN).chain([&GENERIC]) {
            let gcp = matches!(&*profile.name, "capg" | "gcp");
            let expected = if gcp { DASH_PREFIX } else { DEFAULT_PREFIX };
            assert_eq!(profile.default_prefix, expected, "{}", profile.name);
            let blocked = profile.blocks_every_tag(DEFAULT_PREFIX).is_some();
            assert_eq!(blocked, gcp, "{}", profile.name);
        }
    }

    /// The seed's Hetzner and OpenStack profiles admit characters their
    /// providers' APIs refuse; a tag with one is written, with a caution.
    #[test]
    fn provider_caution_names_what_the_provider_refuses_and_the_fix() {
        let caution = HETZNER.provider_caution("plexsphere:team", 11).unwrap();
        assert!(
            caution.starts_with("\"plexsphere:team\" holds ':': Hetzner's API"),
            "{caution}"
        );
        assert!(OPENSTACK.provider_caution("plexsphere:team", 11).is_none());
        assert!(
            OPENSTACK
                .provider_caution("plexsphere:platform/env", 11)
                .is_some()
        );
        for profile in [&AWS, &GCP, &AZURE, &GENERIC, &CAPA, &CAPZ, &CAPG, &CAPO] {
            assert!(profile.provider_refuses.is_none(), "{}", profile.name);
        }
    }

    #[test]
    fn unit_measures_runes_and_bytes() {
        assert_eq!(Unit::Runes.measure("日本"), 2);
        assert_eq!(Unit::Bytes.measure("日本"), 6);
    }
}
