//! Where an audited object was read.

use std::fmt;

/// Where an object was read: the file, the document (1-based), and the item
/// (1-based) when the document is a `List` or an array; or the API server's
/// list it came from ([`Origin::list`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The file as the caller names it (a path on the command line, or what
    /// the page calls the pasted text); for a listed object, the list
    /// (`plural.group/version`).
    pub file: String,
    /// The YAML document (or JSON value) in the file, from 1; 0 for an
    /// object listed from an API server, which has no documents.
    pub document: usize,
    /// The item of a `List` or array, from 1; nested lists add one level
    /// each, outermost first.
    pub items: Vec<usize>,
}

impl Origin {
    /// An object listed from an API server: its list (`plural.group/version`)
    /// is where it was read, pages and places in them being the server's.
    pub fn list(list: String) -> Origin {
        Origin {
            file: list,
            document: 0,
            items: Vec::new(),
        }
    }

    /// The list an object was listed from, when it was.
    pub fn listed_from(&self) -> Option<&str> {
        (self.document == 0).then_some(self.file.as_str())
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(list) = self.listed_from() {
            return write!(f, "the list of {list}");
        }
        write!(f, "{} document {}", self.file, self.document)?;
        for item in &self.items {
            write!(f, " item {item}")?;
        }
        Ok(())
    }
}
