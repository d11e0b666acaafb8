//! Key character classes as data: a union of named character sets, plus
//! extra characters, minus excluded ones (docs/settings.md, "User-defined
//! tag profiles", `keyCharacters`).
//!
//! Every provider rule we know is of that shape: AWS, Hetzner and generic are
//! "letters, digits and a few symbols", OpenStack "anything but control
//! characters", Azure "anything printable except `< > % & \ ? /`", GCP labels
//! "lowercase or international letters, digits, `_` and `-`", IBM and
//! DigitalOcean "ASCII letters, digits and a few symbols". So a user profile
//! can state its provider's class without the policy running user code or
//! compiling a regex per request.

use crate::json::quote::quoted;
use serde::Deserialize;
use std::borrow::Cow;
use unicode_properties::{GeneralCategory, GeneralCategoryGroup, UnicodeGeneralCategory};

/// A named set of characters (closed: these are the words provider docs
/// use). Letters, digits and printable follow Go's `unicode.IsLetter`,
/// `IsDigit` and `IsPrint` (Unicode categories L; Nd; L, M, N, P, S and the
/// ASCII space); control is category Cc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum CharSet {
    /// Unicode letters (category L).
    Letters,
    /// Letters that are not upper- or titlecase (Ll, Lm, Lo): lowercase
    /// letters and "international" letters without case (GCP labels).
    LowercaseLetters,
    /// `A-Z a-z`.
    AsciiLetters,
    /// `a-z`.
    AsciiLowercaseLetters,
    /// Unicode decimal digits (category Nd).
    Digits,
    /// `0-9`.
    AsciiDigits,
    /// Every character that is not a control character (not Cc).
    NonControl,
    /// Letters, marks, numbers, punctuation, symbols (L, M, N, P, S) and the
    /// ASCII space, as Go's `unicode.IsPrint`: unlike `non-control`, no
    /// other space, no line or paragraph separator, no format, private-use
    /// or unassigned code point ("printable" in Azure's rule).
    Printable,
}

/// Every set, in declaration order (bit n of a class's `sets` is `ALL[n]`).
const ALL: [CharSet; 8] = [
    CharSet::Letters,
    CharSet::LowercaseLetters,
    CharSet::AsciiLetters,
    CharSet::AsciiLowercaseLetters,
    CharSet::Digits,
    CharSet::AsciiDigits,
    CharSet::NonControl,
    CharSet::Printable,
];

// A ninth set needs a wider bit set in `KeyCharacters`.
const _: () = assert!(ALL.len() <= u8::BITS as usize);

impl CharSet {
    /// The name users write in settings.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            CharSet::Letters => "letters",
            CharSet::LowercaseLetters => "lowercase-letters",
            CharSet::AsciiLetters => "ascii-letters",
            CharSet::AsciiLowercaseLetters => "ascii-lowercase-letters",
            CharSet::Digits => "digits",
            CharSet::AsciiDigits => "ascii-digits",
            CharSet::NonControl => "non-control",
            CharSet::Printable => "printable",
        }
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }

    const fn admits_ascii(self, c: u8) -> bool {
        match self {
            CharSet::Letters | CharSet::AsciiLetters => c.is_ascii_alphabetic(),
            CharSet::LowercaseLetters | CharSet::AsciiLowercaseLetters => c.is_ascii_lowercase(),
            CharSet::Digits | CharSet::AsciiDigits => c.is_ascii_digit(),
            CharSet::NonControl => !c.is_ascii_control(),
            // ASCII's only printable space is ' ' itself.
            CharSet::Printable => c == b' ' || c.is_ascii_graphic(),
        }
    }

    fn admits_non_ascii(self, c: char) -> bool {
        match self {
            CharSet::Letters => c.general_category_group() == GeneralCategoryGroup::Letter,
            CharSet::LowercaseLetters => {
                c.general_category_group() == GeneralCategoryGroup::Letter
                    && !matches!(
                        c.general_category(),
                        GeneralCategory::UppercaseLetter | GeneralCategory::TitlecaseLetter
                    )
            }
            CharSet::Digits => c.general_category() == GeneralCategory::DecimalNumber,
            CharSet::NonControl => !c.is_control(),
            CharSet::Printable => matches!(
                c.general_category_group(),
                GeneralCategoryGroup::Letter
                    | GeneralCategoryGroup::Mark
                    | GeneralCategoryGroup::Number
                    | GeneralCategoryGroup::Punctuation
                    | GeneralCategoryGroup::Symbol
            ),
            CharSet::AsciiLetters | CharSet::AsciiLowercaseLetters | CharSet::AsciiDigits => false,
        }
    }
}

/// Which characters a tag key may carry: `sets` ∪ `extra` ∖ `except`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyCharacters {
    /// Bit set over [`CharSet`] (bit n: the set with discriminant n).
    sets: u8,
    /// Characters admitted besides the sets.
    extra: Cow<'static, str>,
    /// Characters refused even when a set or `extra` admits them.
    except: Cow<'static, str>,
    /// Whether each ASCII character is admitted (index: its code),
    /// precomputed because keys are nearly always ASCII: one load per byte,
    /// where a bit table costs a shift and a mask per byte in wasm. Indexed
    /// by any byte: those of 0x80 and above are never admitted here, so a
    /// scan stops at the first character beyond ASCII and decides it from
    /// the sets.
    ascii: [bool; 256],
}

impl KeyCharacters {
    /// A class for a built-in profile (evaluated at compile time).
    pub(crate) const fn new(sets: &[CharSet], extra: &'static str, except: &'static str) -> Self {
        let mut bits = 0u8;
        let mut i = 0;
        while i < sets.len() {
            bits |= sets[i].bit();
            i += 1;
        }
        Self {
            sets: bits,
            ascii: ascii_table(bits, extra, except),
            extra: Cow::Borrowed(extra),
            except: Cow::Borrowed(except),
        }
    }

    /// A class from user settings (already checked).
    pub(crate) fn from_parts(sets: &[CharSet], extra: String, except: String) -> Self {
        let bits = sets.iter().fold(0, |bits, set| bits | set.bit());
        Self {
            sets: bits,
            ascii: ascii_table(bits, &extra, &except),
            extra: Cow::Owned(extra),
            except: Cow::Owned(except),
        }
    }

    /// Whether this class admits `c`.
    pub(crate) fn admits(&self, c: char) -> bool {
        if c.is_ascii() {
            return self.ascii[usize::from(c as u8)];
        }
        !self.except.contains(c)
            && (self.extra.contains(c) || self.sets().any(|set| set.admits_non_ascii(c)))
    }

    /// The first character of `key` this class does not admit.
    pub(crate) fn first_disallowed(&self, key: &str) -> Option<char> {
        // Check bytes against the table, one load each, and decode
        // characters only from the first byte it stops at: a refused ASCII
        // character, or the first byte beyond ASCII (a character's first).
        let at = self.first_not_in_table(key.as_bytes())?;
        let byte = key.as_bytes()[at];
        if byte.is_ascii() {
            return Some(char::from(byte));
        }
        key[at..].chars().find(|&c| !self.admits(c))
    }

    /// Where the first byte the table refuses is. Four bytes are looked up
    /// per step and tested together: one branch per four bytes, which in
    /// wasm costs less than the loads.
    fn first_not_in_table(&self, bytes: &[u8]) -> Option<usize> {
        let admits = |byte: u8| self.ascii[usize::from(byte)];
        let mut quads = bytes.chunks_exact(4);
        let mut at = 0;
        for quad in &mut quads {
            if !(admits(quad[0]) & admits(quad[1]) & admits(quad[2]) & admits(quad[3])) {
                return quad.iter().position(|&byte| !admits(byte)).map(|i| at + i);
            }
            at += 4;
        }
        let rest = quads.remainder().iter().position(|&byte| !admits(byte));
        rest.map(|i| at + i)
    }

    fn sets(&self) -> impl Iterator<Item = CharSet> + '_ {
        ALL.into_iter().filter(|set| self.sets & set.bit() != 0)
    }

    /// The class as users read it, e.g. `letters, digits and "-_.:/"`.
    pub(crate) fn describe(&self) -> String {
        let mut parts: Vec<String> = self.sets().map(|set| set.name().to_owned()).collect();
        if !self.extra.is_empty() {
            parts.push(quoted(&self.extra).to_string());
        }
        let mut text = match parts.split_last() {
            None => "nothing".to_owned(),
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        };
        if !self.except.is_empty() {
            text.push_str(&format!(" except {}", quoted(&self.except)));
        }
        text
    }
}

/// The ASCII table of `sets` ∪ `extra` ∖ `except`.
const fn ascii_table(sets: u8, extra: &str, except: &str) -> [bool; 256] {
    let mut table = [false; 256];
    let mut c = 0u8;
    while c < 128 {
        let mut admitted = contains_byte(extra, c);
        let mut i = 0;
        while i < ALL.len() {
            admitted |= sets & ALL[i].bit() != 0 && ALL[i].admits_ascii(c);
            i += 1;
        }
        table[c as usize] = admitted && !contains_byte(except, c);
        c += 1;
    }
    table
}

/// Whether `text` contains the ASCII character `c` (a UTF-8 continuation
/// byte is never ASCII, so a byte scan is exact).
const fn contains_byte(text: &str, c: u8) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == c {
            return true;
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    const LETTERS_DIGITS: &[CharSet] = &[CharSet::Letters, CharSet::Digits];
    const ASCII_ALNUM: &[CharSet] = &[CharSet::AsciiLetters, CharSet::AsciiDigits];
    static AWS: KeyCharacters = KeyCharacters::new(LETTERS_DIGITS, " +-=._:/@", "");
    static STRICT: KeyCharacters = KeyCharacters::new(LETTERS_DIGITS, "-_.:/", "");
    static OPEN: KeyCharacters = KeyCharacters::new(&[CharSet::NonControl], "", "");
    static PRINTABLE: KeyCharacters = KeyCharacters::new(&[CharSet::Printable], "", "");
    static AZURE: KeyCharacters = KeyCharacters::new(&[CharSet::Printable], "", "<>%&\\?/");
    static GCP: KeyCharacters =
        KeyCharacters::new(&[CharSet::LowercaseLetters, CharSet::Digits], "_-", "");
    // The classes docs/cloud-tags.md ("Ready-made profiles") gives for IBM Cloud ("A-Z,
    // 0-9, spaces, underscores, hyphens, periods and colons") and
    // DigitalOcean ("letters, numbers, colons, dashes, and underscores",
    // pattern `^[a-zA-Z0-9_-:]+$`).
    static IBM: KeyCharacters = KeyCharacters::new(ASCII_ALNUM, " _-.:", "");
    static DIGITALOCEAN: KeyCharacters = KeyCharacters::new(ASCII_ALNUM, ":-_", "");

    #[rstest]
    #[case::aws_symbols(&AWS, "plexsphere:a b+c-d=e.f_g:h/i@j", None)]
    #[case::aws_unicode_letters(&AWS, "plexsphere:équipe/日本", None)]
    #[case::aws_unicode_digits(&AWS, "plexsphere:n/٣", None)]
    #[case::aws_comma(&AWS, "plexsphere:a,b", Some(','))]
    #[case::aws_combining_mark(&AWS, "plexsphere:e\u{301}", Some('\u{301}'))]
    #[case::aws_letter_number(&AWS, "plexsphere:Ⅻ", Some('Ⅻ'))]
    #[case::strict_space(&STRICT, "plexsphere:a b", Some(' '))]
    #[case::strict_at(&STRICT, "plexsphere:a@b", Some('@'))]
    #[case::strict_ok(&STRICT, "plexsphere:acme:checkout/owner_1.x-y", None)]
    #[case::open_anything(&OPEN, "plexsphere:a b,c;d#€", None)]
    #[case::open_tab(&OPEN, "plexsphere:a\tb", Some('\t'))]
    #[case::open_del(&OPEN, "plexsphere:a\u{7f}", Some('\u{7f}'))]
    #[case::azure_slash(&AZURE, "plexsphere:team/x", Some('/'))]
    #[case::azure_colon_space(&AZURE, "plexsphere:acme:cost center", None)]
    #[case::azure_each_refused_symbol(&AZURE, "plexsphere:a\\b", Some('\\'))]
    #[case::azure_question_mark(&AZURE, "plexsphere:a?b", Some('?'))]
    #[case::azure_printable_unicode(&AZURE, "plexsphere:équipe—日本·€😀e\u{301}Ⅻ", None)]
    #[case::azure_line_separator(&AZURE, "plexsphere:a\u{2028}b", Some('\u{2028}'))]
    #[case::azure_soft_hyphen(&AZURE, "plexsphere:co\u{ad}op", Some('\u{ad}'))]
    #[case::gcp_colon(&GCP, "plexsphere:x", Some(':'))]
    #[case::gcp_upper(&GCP, "team_Env", Some('E'))]
    #[case::gcp_international(&GCP, "équipe-日本_٣", None)]
    #[case::gcp_upper_international(&GCP, "équipe-É", Some('É'))]
    #[case::ibm_symbols(&IBM, "plexsphere:acme:Cost Center_1.x-y", None)]
    #[case::ibm_slash(&IBM, "plexsphere:team/x", Some('/'))]
    #[case::ibm_at(&IBM, "plexsphere:a@b", Some('@'))]
    #[case::ibm_ascii_only(&IBM, "plexsphere:équipe", Some('é'))]
    #[case::ibm_ascii_digits_only(&IBM, "plexsphere:n٣", Some('٣'))]
    #[case::digitalocean_symbols(&DIGITALOCEAN, "plexsphere:acme:Cost-center_1", None)]
    #[case::digitalocean_space(&DIGITALOCEAN, "plexsphere:a b", Some(' '))]
    #[case::digitalocean_period(&DIGITALOCEAN, "plexsphere:a.b", Some('.'))]
    #[case::digitalocean_slash(&DIGITALOCEAN, "plexsphere:team/x", Some('/'))]
    #[case::digitalocean_ascii_only(&DIGITALOCEAN, "plexsphere:здорово", Some('з'))]
    fn first_disallowed_character(
        #[case] class: &KeyCharacters,
        #[case] key: &str,
        #[case] expected: Option<char>,
    ) {
        assert_eq!(class.first_disallowed(key), expected);
    }

    /// Go's `unicode.IsPrint`, character by character: categories L, M, N,
    /// P, S and U+0020 are printable, nothing else is.
    #[rstest]
    #[case::ascii_space(' ', true)]
    #[case::ascii_letter('a', true)]
    #[case::ascii_punctuation('!', true)]
    #[case::ascii_symbol('~', true)]
    #[case::tab('\t', false)]
    #[case::delete('\u{7f}', false)]
    #[case::nonspacing_mark('\u{301}', true)]
    #[case::spacing_mark('\u{93e}', true)]
    #[case::letter_number('Ⅻ', true)]
    #[case::other_number('½', true)]
    #[case::dash_punctuation('—', true)]
    #[case::currency_symbol('€', true)]
    #[case::other_symbol('😀', true)]
    #[case::no_break_space('\u{a0}', false)]
    #[case::ideographic_space('\u{3000}', false)]
    #[case::line_separator('\u{2028}', false)]
    #[case::paragraph_separator('\u{2029}', false)]
    #[case::soft_hyphen('\u{ad}', false)]
    #[case::zero_width_space('\u{200b}', false)]
    #[case::byte_order_mark('\u{feff}', false)]
    #[case::c1_control('\u{85}', false)]
    #[case::private_use('\u{e000}', false)]
    #[case::supplementary_private_use('\u{f0000}', false)]
    #[case::unassigned('\u{378}', false)]
    #[case::noncharacter('\u{fffe}', false)]
    fn printable_is_gos_is_print(#[case] c: char, #[case] printable: bool) {
        assert_eq!(PRINTABLE.admits(c), printable, "U+{:04X}", u32::from(c));
    }

    #[test]
    fn non_control_admits_what_printable_refuses() {
        // Why Azure's class is `printable`, not `non-control`.
        for c in ['\u{a0}', '\u{2028}', '\u{ad}', '\u{e000}', '\u{378}'] {
            assert!(
                OPEN.admits(c) && !PRINTABLE.admits(c),
                "U+{:04X}",
                u32::from(c)
            );
        }
    }

    #[test]
    fn except_beats_extra_and_sets_beyond_ascii() {
        let class = KeyCharacters::from_parts(&[CharSet::Letters], "€".into(), "é€".into());
        assert!(!class.admits('é'));
        assert!(!class.admits('€'));
        assert!(class.admits('ü'));
    }

    #[test]
    fn describe_names_sets_extra_and_except() {
        assert_eq!(AWS.describe(), r#"letters, digits and " +-=._:/@""#);
        assert_eq!(AZURE.describe(), r#"printable except "<>%&\\?/""#);
    }

    proptest::proptest! {
        /// The ASCII fast path finds the same character as checking every
        /// character with `admits`, in keys admitted for a while and then
        /// not, and in keys leaving ASCII anywhere.
        #[test]
        fn first_disallowed_matches_admits(
            key in "(?s).{0,24}|[ -~]{0,24}|[a-z0-9.:/-]{0,30}[ -~\u{80}-\u{10ffff}]?[a-z0-9]{0,12}",
            class in 0..8usize,
        ) {
            let class = [&AWS, &STRICT, &OPEN, &PRINTABLE, &AZURE, &GCP, &IBM, &DIGITALOCEAN][class];
            proptest::prop_assert_eq!(
                class.first_disallowed(&key),
                key.chars().find(|&c| !class.admits(c))
            );
        }
    }
}
