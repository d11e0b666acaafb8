//! Go `time.Duration` text, as the v1beta1 Cluster API fields carry it.
//!
//! v1beta1 `nodeDrainTimeout` and its siblings are `metav1.Duration`
//! strings (`"5m"`, `"1m30s"`); v1beta2 renamed them to whole seconds
//! (`nodeDrainTimeoutSeconds: 300`). The policy compares the two by value
//! and writes what CAPI writes: Go's `Duration.String()`. Parsing follows
//! Go's `time.ParseDuration`; the conversion to seconds truncates, as CAPI's
//! `ConvertToSeconds` does (api/core/v1beta2/conversion.go).

use crate::json::quote::quoted;

/// Nanoseconds per unit, by Go's unit names.
const UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("μs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Go's largest duration, in nanoseconds (`math.MaxInt64`).
const MAX_NANOS: u64 = i64::MAX as u64;

/// A duration in nanoseconds, as Go's `time.Duration` holds it.
pub(crate) type Nanos = i64;

/// A text Go's `time.ParseDuration` refuses (or whose value overflows
/// Go's `time.Duration`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} is not a duration such as \"5m0s\" or \"90s\"", quoted(.text))]
pub(crate) struct InvalidDuration {
    /// The text as written.
    pub(crate) text: String,
}

/// Parses a Go duration (`"300ms"`, `"-1.5h"`, `"2h45m"`), or says why not.
pub(crate) fn parse(text: &str) -> Result<Nanos, InvalidDuration> {
    let invalid = || InvalidDuration {
        text: text.to_owned(),
    };
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (int_part, after) = rest.split_at(int_len);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(tail) => {
                let len = tail.bytes().take_while(u8::is_ascii_digit).count();
                tail.split_at(len)
            }
            None => ("", after),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(invalid());
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let scale = UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .map(|(_, scale)| *scale)
            .ok_or_else(invalid)?;
        let whole: u64 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().map_err(|_| invalid())?
        };
        let mut value = whole.checked_mul(scale).ok_or_else(invalid)?;
        // The fraction contributes at most one unit; digits past the
        // nanosecond are dropped, as Go drops them.
        let mut place = scale;
        for digit in frac_part.bytes().take(20) {
            place /= 10;
            value = value
                .checked_add(u64::from(digit - b'0') * place)
                .ok_or_else(invalid)?;
        }
        total = total.checked_add(value).ok_or_else(invalid)?;
        if total > MAX_NANOS {
            return Err(invalid());
        }
        rest = after;
    }
    let total = Nanos::try_from(total).map_err(|_| invalid())?;
    Ok(if negative { -total } else { total })
}

/// Whole seconds, truncated toward zero and capped at `i32`, as CAPI's
/// v1beta1 → v1beta2 conversion stores a duration.
pub(crate) fn to_seconds(nanos: Nanos) -> i64 {
    let seconds = nanos / 1_000_000_000;
    seconds.clamp(i64::from(i32::MIN), i64::from(i32::MAX))
}

/// Nanoseconds of a whole number of seconds (saturating: an `int32` of
/// seconds always fits).
pub(crate) fn from_seconds(seconds: i64) -> Nanos {
    seconds.saturating_mul(1_000_000_000)
}

/// Go's `Duration.String()`: `"1h2m3.5s"`, `"1m30s"`, `"500ms"`, `"0s"`.
pub(crate) fn format(nanos: Nanos) -> String {
    if nanos == 0 {
        return "0s".to_owned();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    if n < 1_000_000_000 {
        let (scale, unit) = match n {
            0..1_000 => (1, "ns"),
            1_000..1_000_000 => (1_000, "µs"),
            _ => (1_000_000, "ms"),
        };
        return format!("{sign}{}{unit}", decimal(n, scale));
    }
    let hours = n / 3_600_000_000_000;
    let minutes = n / 60_000_000_000 % 60;
    let seconds = decimal(n % 60_000_000_000, 1_000_000_000);
    match (hours, minutes) {
        (0, 0) => format!("{sign}{seconds}s"),
        (0, m) => format!("{sign}{m}m{seconds}s"),
        (h, m) => format!("{sign}{h}h{m}m{seconds}s"),
    }
}

/// `value / scale` with its fraction, trailing zeros trimmed.
fn decimal(value: u64, scale: u64) -> String {
    let (whole, fraction) = (value / scale, value % scale);
    if fraction == 0 {
        return whole.to_string();
    }
    let width = scale.ilog10() as usize;
    let digits = format!("{fraction:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("0", 0)]
    #[case("0s", 0)]
    #[case("10s", 10_000_000_000)]
    #[case("5m", 300_000_000_000)]
    #[case("5m0s", 300_000_000_000)]
    #[case("1m30s", 90_000_000_000)]
    #[case("1.5h", 5_400_000_000_000)]
    #[case("2h45m", 9_900_000_000_000)]
    #[case("300ms", 300_000_000)]
    #[case("1.5s", 1_500_000_000)]
    #[case("-1.5h", -5_400_000_000_000)]
    #[case("+5s", 5_000_000_000)]
    #[case("1µs", 1_000)]
    #[case("1us", 1_000)]
    #[case(".5s", 500_000_000)]
    #[case("1.s", 1_000_000_000)]
    fn parses_go_durations(#[case] text: &str, #[case] nanos: Nanos) {
        assert_eq!(parse(text), Ok(nanos));
    }

    #[rstest]
    #[case("")]
    #[case("5")]
    #[case("s")]
    #[case("5 m")]
    #[case("5d")]
    #[case("-")]
    #[case(".s")]
    #[case("99999999999999999999h")]
    #[case("3000000h")]
    #[case("18446744073s")]
    #[case("18446744073.999999999s")]
    fn refuses_what_go_refuses(#[case] text: &str) {
        assert!(parse(text).is_err(), "{text:?} parsed");
    }

    #[test]
    fn refusal_quotes_the_text_as_json() {
        assert_eq!(
            parse("5 \"m\"").unwrap_err().to_string(),
            r#""5 \"m\"" is not a duration such as "5m0s" or "90s""#
        );
    }

    #[rstest]
    #[case(0, "0s")]
    #[case(10_000_000_000, "10s")]
    #[case(300_000_000_000, "5m0s")]
    #[case(90_000_000_000, "1m30s")]
    #[case(3_600_000_000_000, "1h0m0s")]
    #[case(5_400_000_000_000, "1h30m0s")]
    #[case(1_500_000_000, "1.5s")]
    #[case(500_000_000, "500ms")]
    #[case(1_500, "1.5µs")]
    #[case(7, "7ns")]
    #[case(-90_000_000_000, "-1m30s")]
    #[case(3_723_500_000_000, "1h2m3.5s")]
    fn formats_like_go(#[case] nanos: Nanos, #[case] text: &str) {
        assert_eq!(format(nanos), text);
        assert_eq!(parse(text), Ok(nanos), "round trip of {text}");
    }

    #[test]
    fn seconds_truncate_and_cap_like_capi_conversion() {
        assert_eq!(to_seconds(parse("1.9s").unwrap()), 1);
        assert_eq!(to_seconds(parse("-1.9s").unwrap()), -1);
        assert_eq!(to_seconds(parse("1000000h").unwrap()), i64::from(i32::MAX));
        assert_eq!(from_seconds(300), parse("5m").unwrap());
    }
}
