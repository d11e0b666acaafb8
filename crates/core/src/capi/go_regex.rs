//! Where Go's RE2 (`regexp.Compile`) and regex-lite part on a node-sync
//! pattern. The patterns are the ones a team gives Cluster API's
//! `--additional-sync-machine-labels` / `-annotations` flags, which CAPI
//! compiles with Go's `regexp`: a pattern Go refuses stops CAPI's manager
//! from starting, and one Go reads otherwise selects other keys, so the
//! policy refuses both rather than call a key synced.
//!
//! Go's parser (`regexp/syntax/parse.go`) refuses what regex-lite accepts
//! where a repetition operator may not follow another (`a**`,
//! `a*+`, `a{2}{3}`; one lazy `?` is part of its operator: `a*?`), a repeat
//! count is at most 1000, and so are the copies nested repeat counts make
//! (`(a{2}){1000}`); it knows the flags `i`, `m`, `s` and `U` only (not
//! `x`, `R`, `u`), and no `\u` / `\U` escape. It reads otherwise what
//! regex-lite reads as a word boundary (`\<`, `\>`, `\b{start}`), and
//! takes as a literal a `{` that starts no repeat count and an octal
//! escape (`\101`), both of which regex-lite refuses with a reason that
//! does not say so. go_regex_cases.tsv holds the cases, with Go's verdict
//! on each.

/// Go's largest repeat count (`regexp/syntax`: `ErrInvalidRepeatSize`
/// above it).
const REPEAT_MAX: u64 = 1000;

/// Why the policy refuses `pattern`, where Go's `regexp.Compile` and
/// regex-lite part for one of the reasons above; regex-lite judges
/// everything else.
pub(crate) fn dialects_part(pattern: &str) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    if let Some(reason) = escape_or_flag(&chars) {
        return Some(reason);
    }
    let mut groups = vec![Group::default()];
    // The operator just read, while a following one would stack on it.
    let mut last_repeat: Option<String> = None;
    let mut i = 0;
    while i < chars.len() {
        let top = groups.len() - 1;
        let (repeat, next) = match chars[i] {
            // `\x{41}`, `\p{Greek}`: the braces belong to the escape.
            '\\' if matches!(chars.get(i + 1), Some('x' | 'p' | 'P'))
                && chars.get(i + 2) == Some(&'{') =>
            {
                groups[top].atom(1);
                let close = chars[i..].iter().position(|&c| c == '}');
                (None, close.map_or(chars.len(), |at| i + at + 1))
            }
            '\\' => {
                groups[top].atom(1);
                (None, i + 2)
            }
            '[' => {
                groups[top].atom(1);
                (None, class_end(&chars, i))
            }
            '(' => {
                groups.push(Group::default());
                // `(?i)`, `(?:`, `(?P<x>`: a `?` here is no repetition.
                let flags = chars.get(i + 1) == Some(&'?');
                (None, i + if flags { 2 } else { 1 })
            }
            ')' if groups.len() > 1 => {
                let inner = groups.pop().expect("an open group").widest();
                groups
                    .last_mut()
                    .expect("the pattern's own group")
                    .atom(inner);
                (None, i + 1)
            }
            '|' => {
                groups[top].alternative();
                (None, i + 1)
            }
            '*' | '+' | '?' => (Some(i + 1), i + 1),
            '{' => match repeat_end(&chars, i) {
                Some((end, counts, open)) => {
                    let too_many = |n: &&String| n.parse::<u64>().map_or(true, |n| n > REPEAT_MAX);
                    if let Some(count) = counts.iter().find(too_many) {
                        return Some(format!(
                            "Go allows a repeat count of at most {REPEAT_MAX}, not {count}"
                        ));
                    }
                    let copies = groups[top].repeat(&counts, open);
                    if copies > REPEAT_MAX {
                        return Some(format!(
                            "Go allows at most {REPEAT_MAX} copies through nested repeat counts, \
                             not {copies}"
                        ));
                    }
                    (Some(end), end)
                }
                // Not a repeat: Go reads `{` as a literal, regex-lite as
                // a broken repeat count (or, now and then, a literal).
                None => {
                    return Some(
                        "Go reads this { as the character {, regex-lite as the start of a \
                         repeat count: write \\{"
                            .to_owned(),
                    );
                }
            },
            _ => {
                groups[top].atom(1);
                (None, i + 1)
            }
        };
        match repeat {
            Some(end) => {
                // One lazy `?` belongs to the operator.
                let end = if chars.get(end) == Some(&'?') {
                    end + 1
                } else {
                    end
                };
                let operator: String = chars[i..end].iter().collect();
                if let Some(previous) = &last_repeat {
                    return Some(format!(
                        "Go refuses a repetition operator after another ({previous}{operator}); \
                         write one, or group the first: (x{previous}){operator}"
                    ));
                }
                last_repeat = Some(operator);
                i = end;
            }
            None => {
                last_repeat = None;
                i = next;
            }
        }
    }
    None
}

/// The first escape or flag group of `chars` that Go refuses or reads
/// otherwise than regex-lite, and why. `\Q…\E`, which regex-lite refuses
/// (docs/settings.md says why), ends the scan.
fn escape_or_flag(chars: &[char]) -> Option<String> {
    let mut class_end_at = 0;
    let mut i = 0;
    while i < chars.len() {
        let in_class = i < class_end_at;
        match chars[i] {
            '[' if !in_class => {
                class_end_at = class_end(chars, i);
                i += 1;
            }
            '\\' => match chars.get(i + 1) {
                Some('Q') | None => return None,
                Some(&c) => {
                    if let Some(reason) = escape(chars, i, c, in_class) {
                        return Some(reason);
                    }
                    i += 2;
                }
            },
            '(' if !in_class && chars.get(i + 1) == Some(&'?') => {
                if let Some(reason) = flags(&chars[i + 2..]) {
                    return Some(reason);
                }
                i += 2;
            }
            _ => i += 1,
        }
    }
    None
}

/// What Go makes of the escape `\c` at `at` where regex-lite differs.
fn escape(chars: &[char], at: usize, c: char, in_class: bool) -> Option<String> {
    match c {
        'u' | 'U' => Some(format!(
            "Go has no \\{c} escape: write \\x{{…}} with the code point (\\x{{74}} for t)"
        )),
        '<' | '>' if !in_class => Some(format!(
            "Go reads \\{c} as the character {c}, regex-lite as a word boundary: write {c} for \
             the character, \\b for a boundary"
        )),
        'b' if !in_class && chars.get(at + 2) == Some(&'{') => Some(
            "Go reads \\b{…} as a word boundary followed by the text {…}, regex-lite as one \
             kind of boundary: write \\b, or \\b\\{…} for the text"
                .to_owned(),
        ),
        // Go reads `\0` and `\1`…`\7` before another octal digit as a
        // character code of up to three octal digits; a lone `\1`…`\7` is
        // a backreference, which both refuse.
        '0'..='7' => {
            let octal = |c: &&char| ('0'..='7').contains(*c);
            let digits: String = chars[at + 1..].iter().take(3).take_while(octal).collect();
            if c != '0' && digits.len() < 2 {
                return None;
            }
            let code = u32::from_str_radix(&digits, 8).unwrap_or_default();
            Some(format!(
                "Go reads \\{digits} as the character code {digits} in octal, regex-lite takes \
                 no octal escape: write \\x{{{code:x}}}"
            ))
        }
        _ => None,
    }
}

/// The flags Go knows (`regexp/syntax`: `i`, `m`, `s`, `U`, and `-` to
/// clear), in the group `(?…)` or `(?…:…)` whose text after `(?` is
/// `rest`; a named group (`(?P<n>`, `(?<n>`) has none.
fn flags(rest: &[char]) -> Option<String> {
    if matches!(rest.first(), Some('P' | '<')) {
        return None;
    }
    let flags = rest.iter().take_while(|&&c| c != ')' && c != ':');
    let unknown = flags.copied().find(|c| !"imsU-".contains(*c))?;
    Some(format!(
        "Go knows the flags i, m, s and U only, not {unknown}: remove it"
    ))
}

/// The items of one group, each weighed by the copies its nested repeat
/// counts make (`(a{2}){3}`: 6): Go refuses a repeat count whose copies
/// exceed [`REPEAT_MAX`] (`regexp/syntax` `repeatIsValid`). `*`, `+`, `?`
/// make no copies.
#[derive(Default)]
struct Group {
    /// The widest item before the last.
    done: u64,
    /// The last item, which a repeat after it applies to.
    last: Option<u64>,
}

impl Group {
    fn atom(&mut self, copies: u64) {
        self.alternative();
        self.last = Some(copies);
    }

    fn alternative(&mut self) {
        self.done = self.done.max(self.last.take().unwrap_or(0));
    }

    /// The copies the last item makes under a repeat of `counts`: `{n}`
    /// and `{n,m}` make `n` and `m` (none for 0: Go looks no deeper), `{n,}`
    /// (`open`) makes `n`, and `{0,}` none of its own.
    fn repeat(&mut self, counts: &[String], open: bool) -> u64 {
        let most = counts
            .last()
            .map_or(1, |n| n.parse::<u64>().unwrap_or(u64::MAX));
        let inner = self.last.unwrap_or(1);
        let total = match (open, most) {
            (true, 0) => inner,
            (_, 0) => 0,
            _ => most.saturating_mul(inner),
        };
        self.last = Some(total);
        total
    }

    fn widest(mut self) -> u64 {
        self.alternative();
        self.done.max(1)
    }
}

/// The index after the character class opening at `start`: a `]` right
/// after `[` or `[^` is a member, `[:alpha:]` nests, `\` escapes.
fn class_end(chars: &[char], start: usize) -> usize {
    let mut i = start + 1;
    if chars.get(i) == Some(&'^') {
        i += 1;
    }
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '[' if chars.get(i + 1) == Some(&':') => {
                let close = (i + 2..chars.len().saturating_sub(1))
                    .find(|&j| chars[j] == ':' && chars[j + 1] == ']');
                i = close.map_or(i + 1, |j| j + 2);
            }
            ']' => return i + 1,
            _ => i += 1,
        }
    }
    chars.len()
}

/// `{n}`, `{n,}` or `{n,m}` at `start`: the index after it, its counts as
/// written, and whether it is `{n,}`; `None` when it is not one (Go then
/// reads `{` as a literal).
fn repeat_end(chars: &[char], start: usize) -> Option<(usize, Vec<String>, bool)> {
    let close = start + chars[start..].iter().position(|&c| c == '}')?;
    let inside: String = chars[start + 1..close].iter().collect();
    let (min, max) = match inside.split_once(',') {
        Some((min, max)) => (min, Some(max)),
        None => (inside.as_str(), None),
    };
    let digits = |text: &str| !text.is_empty() && text.chars().all(|c| c.is_ascii_digit());
    let open = max == Some("");
    if !digits(min) || max.is_some_and(|max| !open && !digits(max)) {
        return None;
    }
    let max = max.filter(|_| !open);
    let counts = std::iter::once(min).chain(max).map(str::to_owned).collect();
    Some((close + 1, counts, open))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// go_regex_cases.tsv, whose verdicts `make unit-tests` checks against
    /// Go's `regexp.Compile` (scripts/go_regex_agree): a pattern Go refuses
    /// is refused here or by regex-lite; one Go reads otherwise than
    /// regex-lite (`differs`, which Go accepts) is refused here; one Go
    /// accepts and reads alike passes here.
    #[test]
    fn the_policy_refuses_where_go_and_regex_lite_part() {
        let rows = include_str!("go_regex_cases.tsv")
            .lines()
            .filter(|line| !line.is_empty() && !line.starts_with('#'));
        for row in rows {
            let (pattern, verdict) = row.split_once('\t').expect("pattern\tverdict");
            let lite_refuses = regex_lite::Regex::new(pattern).is_err();
            match verdict {
                "ok" => assert_eq!(dialects_part(pattern), None, "{pattern}"),
                "refused" => assert!(
                    dialects_part(pattern).is_some() || lite_refuses,
                    "{pattern}: Go refuses it, the policy accepts it"
                ),
                "differs" => assert!(
                    dialects_part(pattern).is_some(),
                    "{pattern}: Go reads it otherwise, the policy does not say so"
                ),
                other => panic!("{pattern}: verdict {other}"),
            }
        }
    }

    #[test]
    fn why_the_policy_refuses_is_named() {
        for (pattern, reason) in [
            (
                "a**",
                "Go refuses a repetition operator after another (**); write one, or group the \
                 first: (x*)*",
            ),
            (
                "x*+",
                "Go refuses a repetition operator after another (*+); write one, or group the \
                 first: (x*)+",
            ),
            (
                "a*??",
                "Go refuses a repetition operator after another (*??); write one, or group the \
                 first: (x*?)?",
            ),
            (
                "a{2}{3}",
                "Go refuses a repetition operator after another ({2}{3}); write one, or group \
                 the first: (x{2}){3}",
            ),
            (
                "a{1001}",
                "Go allows a repeat count of at most 1000, not 1001",
            ),
            (
                "a{1,99999999999}",
                "Go allows a repeat count of at most 1000, not 99999999999",
            ),
            (
                "(?x)^team$",
                "Go knows the flags i, m, s and U only, not x: remove it",
            ),
            (
                r"^\u0074eam$",
                r"Go has no \u escape: write \x{…} with the code point (\x{74} for t)",
            ),
            (
                r"\<team",
                r"Go reads \< as the character <, regex-lite as a word boundary: write < for the character, \b for a boundary",
            ),
            (
                r"\b{start}team",
                r"Go reads \b{…} as a word boundary followed by the text {…}, regex-lite as one kind of boundary: write \b, or \b\{…} for the text",
            ),
            (
                r"^\101",
                r"Go reads \101 as the character code 101 in octal, regex-lite takes no octal escape: write \x{41}",
            ),
            (
                "a{,3}",
                r"Go reads this { as the character {, regex-lite as the start of a repeat count: write \{",
            ),
        ] {
            assert_eq!(dialects_part(pattern).as_deref(), Some(reason), "{pattern}");
        }
    }
}
