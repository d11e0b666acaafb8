//! `memcmp` for the wasm module, eight bytes at a time.
//!
//! Every `str` and `[u8]` comparison in Rust (`Ord`, and so every
//! `BTreeMap` key search, sort and bulk build) ends in a call to the C
//! `memcmp`. On wasm32-wasip1 that is wasi-libc's, a loop of one byte per
//! iteration (musl's `src/string/memcmp.c`), and the keys this policy
//! compares share long prefixes: `plexsphere:platform.example.org/attr-0NN`,
//! `cluster.x-k8s.io/…`, `topology.cluster.x-k8s.io/…`. It was the
//! module's costliest function: 28 % of the guest's instructions on
//! xr-aws-50 (BENCHMARKS.md, "Cloud tags against the result floor").
//!
//! Defining the symbol here makes the linker take this one instead of
//! pulling wasi-libc's `memcmp.o` out of its archive. Natively (tests,
//! tools) the platform's own is used; [`compare`] is what both the symbol
//! and the tests call.

/// Compares `a` and `b` byte-wise over the first `min(len)` bytes, as C's
/// `memcmp` does: negative, zero or positive as the first differing byte
/// of `a` is lower than, equal to or higher than `b`'s.
///
/// Reads eight bytes of each at a time as little-endian words: the first
/// differing byte is the lowest differing one, found from the words' XOR.
/// Written without slice comparisons, which would call `memcmp` again.
pub fn compare(a: &[u8], b: &[u8]) -> i32 {
    let n = a.len().min(b.len());
    let mut a_words = a[..n].chunks_exact(8);
    let mut b_words = b[..n].chunks_exact(8);
    for (x, y) in (&mut a_words).zip(&mut b_words) {
        let (x, y) = (word(x), word(y));
        if x != y {
            let shift = (x ^ y).trailing_zeros() & !7;
            return i32::from((x >> shift) as u8) - i32::from((y >> shift) as u8);
        }
    }
    for (x, y) in a_words.remainder().iter().zip(b_words.remainder()) {
        if x != y {
            return i32::from(*x) - i32::from(*y);
        }
    }
    0
}

/// Eight bytes as a little-endian word (`chunks_exact(8)` gives exactly
/// eight).
fn word(bytes: &[u8]) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(bytes);
    u64::from_le_bytes(word)
}

/// The C symbol: `n` bytes at `a` against `n` bytes at `b`.
///
/// # Safety
///
/// C's contract for `memcmp`: both point to at least `n` readable bytes
/// (any pointer when `n` is 0).
#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    if n == 0 {
        return 0;
    }
    // SAFETY: the caller's contract above; `n` is not 0, so the pointers
    // are to live memory and not dangling.
    let (a, b) = unsafe {
        (
            core::slice::from_raw_parts(a, n),
            core::slice::from_raw_parts(b, n),
        )
    };
    compare(a, b)
}

#[cfg(test)]
mod tests {
    use super::compare;
    use std::cmp::Ordering;

    fn sign(n: i32) -> Ordering {
        n.cmp(&0)
    }

    /// Every length from 0 to 40, the first difference at every place, in
    /// either direction and with either byte the high one: the sign agrees
    /// with `[u8]`'s `Ord` and the difference is that of the two bytes.
    #[test]
    fn agrees_with_slice_order_at_every_length_and_place() {
        for len in 0..=40usize {
            let base: Vec<u8> = (0..len).map(|i| b"plexsphere:ab/c-0"[i % 17]).collect();
            assert_eq!(compare(&base, &base), 0);
            for at in 0..len {
                for (x, y) in [(0x00, 0xff), (0x61, 0x62), (0x80, 0x7f), (0xfe, 0x01)] {
                    let mut a = base.clone();
                    let mut b = base.clone();
                    a[at] = x;
                    b[at] = y;
                    // A later difference must not matter.
                    if at + 1 < len {
                        a[at + 1] = 0xff;
                        b[at + 1] = 0x00;
                    }
                    assert_eq!(compare(&a, &b), i32::from(x) - i32::from(y), "{len} {at}");
                    assert_eq!(sign(compare(&a, &b)), a.cmp(&b));
                    assert_eq!(sign(compare(&b, &a)), b.cmp(&a));
                }
            }
        }
    }

    /// Only the shorter length counts, as `memcmp` with `n` = that length.
    #[test]
    fn compares_the_common_prefix_only() {
        assert_eq!(
            compare(
                b"platform.example.org/attr",
                b"platform.example.org/attr-000"
            ),
            0
        );
        assert_eq!(compare(b"", b"x"), 0);
        assert!(compare(b"cluster.x-k8s.io/a", b"cluster.x-k8s.io/b-longer") < 0);
    }
}
