//! Quoting text for people, in one way: JSON's. A leaf module, so every
//! other module (fields, durations, settings, reports) can use it without
//! importing each other.

use std::fmt;

/// Text quoted for people: a JSON string (`"team/x"`, `"a\"b"`,
/// `"\u0000"`). Every message, warning, report and explanation quotes the
/// keys, values and patterns it names through this, so the quoting is one
/// (JSON's, which users can paste into a manifest) and never Rust's debug
/// text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Quoted<'a>(pub(crate) &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Serialising a string cannot fail.
        f.write_str(&serde_json::to_string(self.0).map_err(|_| fmt::Error)?)
    }
}

/// `text` quoted for people ([`Quoted`]).
pub(crate) fn quoted(text: &str) -> Quoted<'_> {
    Quoted(text)
}
