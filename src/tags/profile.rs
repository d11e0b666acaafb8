//! Per-provider tag profiles (seed 003, "The per-provider constraint table").
//!
//! A profile is data: length ceilings and how they are measured, the count
//! cap, the key character class and the reserved prefixes. The transformer
//! knows nothing provider-specific beyond what is in this table.

/// How a length ceiling is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Unicode scalar values ("characters" in AWS, Hetzner and generic docs).
    Runes,
    /// UTF-8 bytes (OpenStack server metadata limits).
    Bytes,
}

impl Unit {
    /// The length of `text` in this unit.
    pub fn measure(self, text: &str) -> usize {
        match self {
            Unit::Runes => text.chars().count(),
            Unit::Bytes => text.len(),
        }
    }

    /// Plural noun for messages.
    pub fn noun(self) -> &'static str {
        match self {
            Unit::Runes => "runes",
            Unit::Bytes => "bytes",
        }
    }
}

/// Which characters a tag key may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyCharacters {
    /// Letters, digits, space and `+ - = . _ : / @` (AWS).
    Aws,
    /// Letters, digits and `- _ . : /` (Hetzner, generic).
    Strict,
    /// Any character that is not a control character (OpenStack).
    NonControl,
}

impl KeyCharacters {
    /// The first character of `key` this class does not admit.
    pub fn first_disallowed(self, key: &str) -> Option<char> {
        // Keys are nearly always ASCII: check bytes against the class's
        // ASCII table, and decode characters only from the first non-ASCII
        // byte on.
        let table = match self {
            KeyCharacters::Aws => AWS_ASCII,
            KeyCharacters::Strict => STRICT_ASCII,
            KeyCharacters::NonControl => NON_CONTROL_ASCII,
        };
        for (at, byte) in key.bytes().enumerate() {
            if !byte.is_ascii() {
                return key[at..].chars().find(|&c| !self.admits(c));
            }
            if table & (1 << byte) == 0 {
                return Some(char::from(byte));
            }
        }
        None
    }

    /// The ASCII characters this class admits, as a bit set (bit n: the
    /// character with code n).
    const fn ascii_table(self) -> u128 {
        let mut table = 0u128;
        let mut c = 0u8;
        while c < 128 {
            if self.admits_ascii(c) {
                table |= 1 << c;
            }
            c += 1;
        }
        table
    }

    const fn admits_ascii(self, c: u8) -> bool {
        match self {
            KeyCharacters::Aws => {
                c.is_ascii_alphanumeric()
                    || matches!(
                        c,
                        b' ' | b'+' | b'-' | b'=' | b'.' | b'_' | b':' | b'/' | b'@'
                    )
            }
            KeyCharacters::Strict => {
                c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b':' | b'/')
            }
            KeyCharacters::NonControl => !c.is_ascii_control(),
        }
    }

    /// Whether this class admits `c`. "Letters" and "digits" are Unicode
    /// general categories L and Nd, as Go's `unicode.IsLetter` /
    /// `unicode.IsDigit` define them; "control" is category Cc.
    pub fn admits(self, c: char) -> bool {
        match u8::try_from(c) {
            Ok(ascii) if ascii.is_ascii() => self.admits_ascii(ascii),
            _ => match self {
                KeyCharacters::Aws | KeyCharacters::Strict => is_letter_or_digit(c),
                KeyCharacters::NonControl => !c.is_control(),
            },
        }
    }

    /// The class as users read it in messages.
    pub fn describe(self) -> &'static str {
        match self {
            KeyCharacters::Aws => "letters, digits, space and + - = . _ : / @",
            KeyCharacters::Strict => "letters, digits and - _ . : /",
            KeyCharacters::NonControl => "any non-control character",
        }
    }
}

/// Letters and decimal digits beyond ASCII (ASCII is in the class tables).
const AWS_ASCII: u128 = KeyCharacters::Aws.ascii_table();
const STRICT_ASCII: u128 = KeyCharacters::Strict.ascii_table();
const NON_CONTROL_ASCII: u128 = KeyCharacters::NonControl.ascii_table();

fn is_letter_or_digit(c: char) -> bool {
    use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};
    c.general_category_group() == GeneralCategoryGroup::Letter
        || c.general_category() == unicode_properties::GeneralCategory::DecimalNumber
}

/// The constraints one provider puts on tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TagProfile {
    /// Profile name, as reported in skip records (`aws`, `hetzner`, ...).
    pub name: &'static str,
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
    /// Qualified-key prefixes the provider reserves (matched ignoring ASCII
    /// case, as AWS reserves `aws:` "in any upper or lowercase combination").
    pub reserved_prefixes: &'static [&'static str],
}

/// AWS: tagging guide limits.
pub const AWS: TagProfile = TagProfile {
    name: "aws",
    key_max: 128,
    value_max: 256,
    unit: Unit::Runes,
    cap: 50,
    key_characters: KeyCharacters::Aws,
    reserved_prefixes: &["aws:"],
};

/// Hetzner Cloud labels.
pub const HETZNER: TagProfile = TagProfile {
    name: "hetzner",
    key_max: 63,
    value_max: 63,
    unit: Unit::Runes,
    cap: 64,
    key_characters: KeyCharacters::Strict,
    reserved_prefixes: &[],
};

/// OpenStack server metadata (byte ceilings).
pub const OPENSTACK: TagProfile = TagProfile {
    name: "openstack",
    key_max: 255,
    value_max: 255,
    unit: Unit::Bytes,
    cap: 50,
    key_characters: KeyCharacters::NonControl,
    reserved_prefixes: &[],
};

/// The strict fallback for any other provider: an unknown provider's real
/// constraints are unknown, so it gets a small, conservatively shaped set.
pub const GENERIC: TagProfile = TagProfile {
    name: "generic",
    key_max: 63,
    value_max: 255,
    unit: Unit::Runes,
    cap: 32,
    key_characters: KeyCharacters::Strict,
    reserved_prefixes: &[],
};

/// Every named profile; anything else falls back to [`GENERIC`].
pub const PROFILES: [&TagProfile; 3] = [&AWS, &HETZNER, &OPENSTACK];

impl TagProfile {
    /// The profile for a provider name, matched ignoring case; missing or
    /// unknown providers get [`GENERIC`].
    pub fn for_provider(provider: Option<&str>) -> &'static TagProfile {
        provider
            .and_then(|p| {
                PROFILES
                    .into_iter()
                    .find(|t| t.name.eq_ignore_ascii_case(p))
            })
            .unwrap_or(&GENERIC)
    }

    /// The reserved prefix `qualified_key` starts with, if any.
    pub fn reserved_prefix_of(&self, qualified_key: &str) -> Option<&'static str> {
        self.reserved_prefixes.iter().copied().find(|prefix| {
            qualified_key
                .as_bytes()
                .get(..prefix.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::aws_lower(Some("aws"), "aws")]
    #[case::aws_upper(Some("AWS"), "aws")]
    #[case::hetzner_mixed(Some("HeTzNeR"), "hetzner")]
    #[case::openstack(Some("OpenStack"), "openstack")]
    #[case::unknown(Some("gcp"), "generic")]
    #[case::padded_is_unknown(Some(" aws"), "generic")]
    #[case::empty(Some(""), "generic")]
    #[case::missing(None, "generic")]
    fn for_provider_matches_ignoring_case(#[case] provider: Option<&str>, #[case] name: &str) {
        assert_eq!(TagProfile::for_provider(provider).name, name);
    }

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
    #[case::aws_symbols(KeyCharacters::Aws, "plexsphere:a b+c-d=e.f_g:h/i@j", None)]
    #[case::aws_unicode_letters(KeyCharacters::Aws, "plexsphere:équipe/日本", None)]
    #[case::aws_unicode_digits(KeyCharacters::Aws, "plexsphere:n/٣", None)]
    #[case::aws_comma(KeyCharacters::Aws, "plexsphere:a,b", Some(','))]
    #[case::aws_combining_mark(KeyCharacters::Aws, "plexsphere:e\u{301}", Some('\u{301}'))]
    #[case::aws_letter_number(KeyCharacters::Aws, "plexsphere:Ⅻ", Some('Ⅻ'))]
    #[case::strict_space(KeyCharacters::Strict, "plexsphere:a b", Some(' '))]
    #[case::strict_at(KeyCharacters::Strict, "plexsphere:a@b", Some('@'))]
    #[case::strict_plus(KeyCharacters::Strict, "plexsphere:a+b", Some('+'))]
    #[case::strict_equals(KeyCharacters::Strict, "plexsphere:a=b", Some('='))]
    #[case::strict_ok(KeyCharacters::Strict, "plexsphere:acme:checkout/owner_1.x-y", None)]
    #[case::open_anything(KeyCharacters::NonControl, "plexsphere:a b,c;d#€", None)]
    #[case::open_tab(KeyCharacters::NonControl, "plexsphere:a\tb", Some('\t'))]
    #[case::open_del(KeyCharacters::NonControl, "plexsphere:a\u{7f}", Some('\u{7f}'))]
    fn first_disallowed_character(
        #[case] class: KeyCharacters,
        #[case] key: &str,
        #[case] expected: Option<char>,
    ) {
        assert_eq!(class.first_disallowed(key), expected);
    }

    proptest::proptest! {
        /// The ASCII fast path finds the same character as checking every
        /// character with `admits`.
        #[test]
        fn first_disallowed_matches_admits(key in "(?s).{0,24}|[ -~]{0,24}", class in 0..3usize) {
            let class = [KeyCharacters::Aws, KeyCharacters::Strict, KeyCharacters::NonControl][class];
            proptest::prop_assert_eq!(
                class.first_disallowed(&key),
                key.chars().find(|&c| !class.admits(c))
            );
        }
    }

    #[test]
    fn unit_measures_runes_and_bytes() {
        assert_eq!(Unit::Runes.measure("日本"), 2);
        assert_eq!(Unit::Bytes.measure("日本"), 6);
    }
}
