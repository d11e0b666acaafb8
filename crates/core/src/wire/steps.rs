//! The steps of one `validate` call, for a profiler to time.

/// The steps of one `validate` call, reported as each ends
/// (`wire::validate_stepped`, with the `steps` feature).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(feature = "steps"), allow(unreachable_pub))]
pub enum Step {
    /// The payload is read (the object only scanned).
    Payload,
    /// The settings are parsed.
    Settings,
    /// The object's projection is decoded.
    Object,
    /// The request is decided (look-ups included).
    Decided,
    /// The answer is written.
    Encoded,
}
