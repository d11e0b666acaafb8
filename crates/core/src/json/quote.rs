//! Quoting text the one way the policy quotes it: JSON's. For people
//! (every message, warning and report names keys, values and patterns as
//! JSON strings) and for the wire (every string of the answer). A leaf
//! module, so every other module (fields, durations, settings, reports,
//! the writer) can use it without importing each other.

use std::fmt::{self, Write as _};

/// Text quoted for people: a JSON string (`"team/x"`, `"a\"b"`,
/// `"\u0000"`). Every message, warning, report and explanation quotes the
/// keys, values and patterns it names through this, so the quoting is one
/// (JSON's, which users can paste into a manifest) and never Rust's debug
/// text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Quoted<'a>(pub(crate) &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('"')?;
        let mut written = Ok(());
        escaped(self.0, |piece| {
            if written.is_ok() {
                written = f.write_str(piece);
            }
        });
        written?;
        f.write_char('"')
    }
}

/// `text` quoted for people ([`Quoted`]).
pub(crate) fn quoted(text: &str) -> Quoted<'_> {
    Quoted(text)
}

/// Appends `text` quoted ([`Quoted`]) to `out`, for a message built piece
/// by piece rather than through `format!`.
pub(crate) fn push_quoted(out: &mut String, text: &str) {
    out.reserve(text.len() + 2);
    out.push('"');
    escaped(text, |piece| out.push_str(piece));
    out.push('"');
}

/// Writes `text` as a JSON string, byte for byte as `serde_json` writes
/// it: the answer's strings (the object's, the warnings) go through here.
pub(crate) fn write_json_string(text: &str, out: &mut Vec<u8>) {
    out.reserve(text.len() + 2);
    out.push(b'"');
    // An escape (`\"`, most of them) is two pushes: in wasm a copy of
    // unknown length is a call out of the module.
    escaped(text, |piece| match piece.as_bytes() {
        &[first, second] => {
            out.push(first);
            out.push(second);
        }
        bytes => out.extend_from_slice(bytes),
    });
    out.push(b'"');
}

/// `text` as the inside of a JSON string, given to `put` in pieces: each
/// run of text that needs no escape as it is, then each escape. The
/// escapes are serde_json's: `\"`, `\\`, the short forms of backspace,
/// tab, line feed, form feed and carriage return, and `\u00XX` (lower-case
/// hex) for the other bytes below U+0020; nothing else is escaped. Runs are
/// split only at those ASCII bytes, so each is whole UTF-8.
fn escaped(text: &str, mut put: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut start = 0;
    while let Some(at) = next_escape(bytes, start) {
        if at > start {
            put(&text[start..at]);
        }
        put(ESCAPES[usize::from(bytes[at])]);
        start = at + 1;
    }
    if start < text.len() {
        put(&text[start..]);
    }
}

/// Where the first byte JSON escapes (`"`, `\` or one below U+0020) sits
/// in `bytes` at or after `from`. Eight bytes at a time, as one `u64`
/// (wasm has 64-bit integers; its `usize` is 32 bits): a byte of `x` is
/// below `n` when subtracting `n` from it borrows into its top bit, and
/// equal to `c` when `x ^ c` is zero there. A borrow only ever spills above
/// a byte that matched, so the lowest byte flagged (the word is read
/// little-endian) is the first that matches. Every string of the answer
/// passes here, and the byte-at-a-time loop was the writer's largest cost.
fn next_escape(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    const QUOTE: u64 = u64::from_le_bytes([b'"'; 8]);
    const BACKSLASH: u64 = u64::from_le_bytes([b'\\'; 8]);
    const SPACE: u64 = u64::from_le_bytes([0x20; 8]);
    let rest = bytes.get(from..)?;
    let mut words = rest.chunks_exact(8);
    let mut at = from;
    for word in &mut words {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(word);
        let x = u64::from_le_bytes(eight);
        // A byte of 0x80 or more (UTF-8 beyond ASCII) is none of the three;
        // `!x` keeps its top bit out of the answer.
        let below_space = x.wrapping_sub(SPACE);
        let quote = (x ^ QUOTE).wrapping_sub(ONES);
        let backslash = (x ^ BACKSLASH).wrapping_sub(ONES);
        let flagged = (below_space | quote | backslash) & !x & HIGH;
        if flagged != 0 {
            return Some(at + (flagged.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let found = (words.remainder().iter()).position(|&b| b < 0x20 || b == b'"' || b == b'\\');
    found.map(|offset| at + offset)
}

/// What each byte JSON escapes is written as (only the entries of those
/// bytes are ever read).
const ESCAPES: [&str; 256] = {
    let mut table = [""; 256];
    let controls = [
        "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007",
        "\\b", "\\t", "\\n", "\\u000b", "\\f", "\\r", "\\u000e", "\\u000f", "\\u0010", "\\u0011",
        "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017", "\\u0018", "\\u0019",
        "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
    ];
    let mut byte = 0;
    while byte < controls.len() {
        table[byte] = controls[byte];
        byte += 1;
    }
    table[b'"' as usize] = "\\\"";
    table[b'\\' as usize] = "\\\\";
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Eight bytes at a time, the search finds what a byte loop finds,
        /// wherever the byte sits and whatever surrounds it (characters
        /// beyond ASCII included), and the text is written as serde_json
        /// writes it.
        #[test]
        fn escaping_matches_serde_json(
            text in "[ -~\\x00-\\x1fé€\u{10000}]{0,40}",
            from in 0usize..48,
        ) {
            let bytes = text.as_bytes();
            let expected = (bytes.iter().enumerate().skip(from))
                .find(|&(_, &b)| b < 0x20 || b == b'"' || b == b'\\')
                .map(|(at, _)| at);
            proptest::prop_assert_eq!(next_escape(bytes, from), expected);
            let mut ours = Vec::new();
            write_json_string(&text, &mut ours);
            proptest::prop_assert_eq!(ours, serde_json::to_vec(&text).unwrap());
            proptest::prop_assert_eq!(
                quoted(&text).to_string(),
                serde_json::to_string(&text).unwrap()
            );
        }
    }

    /// Each of the bytes JSON escapes, at every place of a 17-byte text
    /// (two words and a remainder), among bytes on either side of it.
    #[test]
    fn the_search_finds_each_escaped_byte_anywhere() {
        for at in 0..17 {
            for filler in [b'a', b'!', b'#', b'[', b']', b'~', 0x7f, 0x21] {
                let mut text = vec![filler; 17];
                assert_eq!(next_escape(&text, 0), None, "{filler:#x}");
                for escaped in [b'"', b'\\', 0x00, 0x01, 0x1f, b'\n'] {
                    text[at] = escaped;
                    assert_eq!(next_escape(&text, 0), Some(at), "{escaped:#x} at {at}");
                    assert_eq!(next_escape(&text, at + 1), None);
                }
                text[at] = filler;
            }
        }
        let tag = "plexsphere:platform.example.org/€";
        assert_eq!(next_escape(tag.as_bytes(), 0), None);
    }

    #[test]
    fn every_control_character_is_escaped_as_serde_json_escapes_it() {
        let text: String = (0u8..0x20)
            .map(char::from)
            .chain(['"', '\\', 'é'])
            .collect();
        let mut pushed = String::new();
        push_quoted(&mut pushed, &text);
        assert_eq!(pushed, serde_json::to_string(&text).unwrap());
    }
}
