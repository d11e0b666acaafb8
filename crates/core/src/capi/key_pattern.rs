//! The node-sync key patterns (`capi.additionalSyncMachineLabels` /
//! `…Annotations`), matched the cheapest way that gives regex-lite's answer.
//!
//! policy-server evaluates every request on a fresh instance, so a compiled
//! regex never outlives one request: compiling three patterns cost a
//! Machine request about 25 µs in the benchmark. The patterns users give
//! CAPI's `--additional-sync-machine-labels` flag are nearly always a
//! literal domain, anchored at the start (`^example\.com/`). Such a pattern
//! is matched as a plain string test; anything else is compiled with
//! regex-lite, as before.

use regex_lite::Regex;

/// Longest pattern matched without regex-lite: longer than any label or
/// annotation key a literal could match, and far below regex-lite's size
/// limit, so a literal pattern is always one regex-lite accepts.
const LITERAL_MAX: usize = 512;

/// One compiled key pattern.
#[derive(Debug, Clone)]
pub(crate) enum KeyPattern {
    /// A literal, anchored at the start and/or the end or neither.
    Literal {
        /// The pattern as the user wrote it.
        pattern: String,
        /// The text it stands for, escapes removed.
        text: String,
        /// `^…`: the key starts with `text`.
        start: bool,
        /// `…$`: the key ends with `text`.
        end: bool,
    },
    /// Anything else.
    Regex(Regex),
}

impl KeyPattern {
    /// The pattern as a literal matcher when it is one, else compiled by
    /// `compile` (regex-lite, whose error names what is wrong).
    pub(crate) fn new<E>(
        pattern: &str,
        compile: impl FnOnce(&str) -> Result<Regex, E>,
    ) -> Result<KeyPattern, E> {
        match literal(pattern) {
            Some((text, start, end)) => Ok(KeyPattern::Literal {
                pattern: pattern.to_owned(),
                text,
                start,
                end,
            }),
            None => compile(pattern).map(KeyPattern::Regex),
        }
    }

    /// Whether the pattern matches somewhere in `key` (unanchored, as
    /// Go's `regexp.MatchString`).
    pub(crate) fn is_match(&self, key: &str) -> bool {
        match self {
            KeyPattern::Literal {
                text, start, end, ..
            } => match (start, end) {
                (true, true) => key == text,
                (true, false) => key.starts_with(text.as_str()),
                (false, true) => key.ends_with(text.as_str()),
                (false, false) => key.contains(text.as_str()),
            },
            KeyPattern::Regex(regex) => regex.is_match(key),
        }
    }

    /// The pattern as the user wrote it.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            KeyPattern::Literal { pattern, .. } => pattern,
            KeyPattern::Regex(regex) => regex.as_str(),
        }
    }
}

/// `(text, anchored at the start, anchored at the end)` when `pattern` is
/// an optional `^`, then literal characters (letters, digits, and
/// punctuation that is not a regex operator, or escaped punctuation), then
/// an optional `$` or a trailing `.*` (which matches the empty string, so it
/// changes nothing unanchored).
fn literal(pattern: &str) -> Option<(String, bool, bool)> {
    if pattern.len() > LITERAL_MAX {
        return None;
    }
    let (start, rest) = match pattern.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, pattern),
    };
    let mut text = String::with_capacity(rest.len());
    let mut end = false;
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                // `\<` and `\>` are word boundaries; every other escaped
                // ASCII punctuation character is itself.
                Some(escaped)
                    if escaped.is_ascii_punctuation() && !matches!(escaped, '<' | '>') =>
                {
                    text.push(escaped)
                }
                _ => return None,
            },
            '$' if chars.as_str().is_empty() => end = true,
            '.' if chars.as_str() == "*" => break,
            c if c.is_ascii_alphanumeric() => text.push(c),
            '-' | '_' | '/' | ':' | '=' | '@' | ',' | '%' | '!' | '~' | '&' | '\'' | '"' | '<'
            | '>' | ';' | '#' | '`' | ' ' => text.push(c),
            _ => return None,
        }
    }
    Some((text, start, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn compile(pattern: &str) -> KeyPattern {
        KeyPattern::new(pattern, Regex::new).unwrap()
    }

    #[rstest]
    #[case::anchored_domain(r"^example\.com/", Some(("example.com/", true, false)))]
    #[case::trailing_any(r"^node\.acme\.io/.*", Some(("node.acme.io/", true, false)))]
    #[case::exact(r"^team$", Some(("team", true, true)))]
    #[case::suffix(r"-zone$", Some(("-zone", false, true)))]
    #[case::unanchored("team", Some(("team", false, false)))]
    #[case::empty("", Some(("", false, false)))]
    #[case::unescaped_dot(r"^example.com/", None)]
    #[case::class(r"^[a-z]+/", None)]
    #[case::alternation("a|b", None)]
    #[case::flags("(?i)team", None)]
    #[case::escaped_letter(r"\d", None)]
    #[case::word_boundary(r"\<team", None)]
    #[case::dollar_inside(r"a$b", None)]
    fn literal_patterns(#[case] pattern: &str, #[case] expected: Option<(&str, bool, bool)>) {
        assert_eq!(
            literal(pattern),
            expected.map(|(text, start, end)| (text.to_owned(), start, end))
        );
    }

    #[test]
    fn literal_and_regex_patterns_keep_what_the_user_wrote() {
        assert!(matches!(
            compile(r"^example\.com/"),
            KeyPattern::Literal { .. }
        ));
        assert_eq!(compile(r"^example\.com/").as_str(), r"^example\.com/");
        assert!(matches!(compile("^[a-z]+/"), KeyPattern::Regex(_)));
        assert_eq!(compile("^[a-z]+/").as_str(), "^[a-z]+/");
    }

    proptest::proptest! {
        /// A pattern matched as a literal matches exactly the keys
        /// regex-lite would match.
        #[test]
        fn literal_matching_is_regex_matching(
            pattern in r"\^?([a-c.\-/<>:@ ]|\\[.\-/$^*<>|+?]){0,6}(\$|\.\*)?",
            key in r"[a-c.\-/$^*<>|+?:@ ]{0,8}",
        ) {
            let regex = Regex::new(&pattern).unwrap();
            let compiled = compile(&pattern);
            proptest::prop_assert_eq!(compiled.is_match(&key), regex.is_match(&key), "{:?}", compiled);
        }
    }
}
