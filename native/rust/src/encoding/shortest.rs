//! The shortest decimal digits that round-trip in a given precision; of two
//! equally close candidates, the one with the even last digit.
//!
//! Rust's `{:e}` gives the shortest round-trip digits and the closest such
//! digits, but settles an exact tie upwards (6.51953125 as f32 prints as
//! 6.5195313). The format, like Ryu, `std::to_chars` and NumPy, takes the
//! even candidate (6.5195312), so ties are detected here with exact integer
//! arithmetic and settled to even.

use std::fmt::Write as _;

/// The precision whose round trip the digits must survive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Precision {
    F32,
    F64,
}

/// A positive value as `0.digits × 10^exponent`, with `count` digits and no
/// trailing zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shortest {
    pub digits: u64,
    pub count: u32,
    pub exponent: i32,
}

/// The shortest digits of `v`, positive and finite, and exactly representable
/// in `precision` (an f32 value is passed widened to f64, which is exact).
pub(crate) fn shortest(v: f64, precision: Precision) -> Shortest {
    let mut s = rust_shortest(v, precision);
    if s.digits % 2 == 1 {
        settle_tie_to_even(&mut s, v, precision);
    }
    s
}

/// Room for the longest `{:e}` of a positive f64: `2.2250738585072014e-308`.
struct Scientific {
    buf: [u8; 32],
    len: usize,
}

impl std::fmt::Write for Scientific {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

fn rust_shortest(v: f64, precision: Precision) -> Shortest {
    let mut text = Scientific { buf: [0; 32], len: 0 };
    // Cannot fail: 32 bytes hold any `{:e}` of an f32 or f64.
    let _ = match precision {
        Precision::F32 => write!(text, "{:e}", v as f32),
        Precision::F64 => write!(text, "{:e}", v),
    };
    let text = &text.buf[..text.len];
    let (mut digits, mut count, mut exponent, mut exponent_sign) = (0u64, 0u32, 0i32, 1i32);
    let mut in_exponent = false;
    for &c in text {
        match (c, in_exponent) {
            (b'e', _) => in_exponent = true,
            (b'-', true) => exponent_sign = -1,
            (b'0'..=b'9', false) => {
                digits = digits * 10 + u64::from(c - b'0');
                count += 1;
            }
            (b'0'..=b'9', true) => exponent = exponent * 10 + i32::from(c - b'0'),
            _ => {}
        }
    }
    strip_trailing_zeros(Shortest { digits, count, exponent: exponent_sign * exponent + 1 })
}

fn strip_trailing_zeros(mut s: Shortest) -> Shortest {
    while s.count > 1 && s.digits % 10 == 0 {
        s.digits /= 10;
        s.count -= 1;
    }
    s
}

fn settle_tie_to_even(s: &mut Shortest, v: f64, precision: Precision) {
    for alternative in [s.digits - 1, s.digits + 1] {
        // `…9 + 1` carries into another digit count: not a same-length tie.
        if alternative == 0 || decimal_digits(alternative) != s.count {
            continue;
        }
        let midpoint = s.digits.min(alternative) * 10 + 5;
        let scale = s.exponent - s.count as i32;
        if equals_decimal(v, midpoint, scale - 1) && round_trips(alternative, scale, v, precision) {
            *s = strip_trailing_zeros(Shortest { digits: alternative, ..*s });
            return;
        }
    }
}

fn decimal_digits(mut n: u64) -> u32 {
    let mut count = 1;
    while n >= 10 {
        n /= 10;
        count += 1;
    }
    count
}

/// Whether `digits × 10^scale`, read back in `precision`, is `v` again.
fn round_trips(digits: u64, scale: i32, v: f64, precision: Precision) -> bool {
    let text = format!("{digits}e{scale}");
    match precision {
        Precision::F32 => text.parse::<f32>().map(f64::from) == Ok(v),
        Precision::F64 => text.parse::<f64>() == Ok(v),
    }
}

/// Whether the positive f64 `v` equals `n × 10^q` exactly.
fn equals_decimal(v: f64, n: u64, q: i32) -> bool {
    // v = m × 2^e exactly.
    let bits = v.to_bits();
    let (biased, fraction) = ((bits >> 52) as i32 & 0x7ff, bits & ((1 << 52) - 1));
    let (m, e) = if biased == 0 { (fraction, -1074) } else { (fraction | 1 << 52, biased - 1075) };
    // m × 2^e = n × 5^q × 2^q. Move the power of five to the side where it
    // is a factor. If that product overflows u128 the two sides cannot be
    // equal: their odd parts are below 2^53 × 5^|q| and 2^64 respectively.
    let five_to = |k: i32| 5u128.checked_pow(k.unsigned_abs());
    let (lhs, rhs) = if q >= 0 {
        (Some(u128::from(m)), five_to(q).and_then(|p| p.checked_mul(u128::from(n))))
    } else {
        (five_to(q).and_then(|p| p.checked_mul(u128::from(m))), Some(u128::from(n)))
    };
    let (Some(lhs), Some(rhs)) = (lhs, rhs) else { return false };
    // lhs × 2^(e - q) == rhs
    let shift = e - q;
    let (small, large, bits) = if shift >= 0 { (lhs, rhs, shift) } else { (rhs, lhs, -shift) };
    bits < 128 && large.trailing_zeros() >= bits as u32 && large >> bits == small
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digits_of(v: f64, precision: Precision) -> (u64, i32) {
        let s = shortest(v, precision);
        (s.digits, s.exponent)
    }

    #[test]
    fn an_exact_tie_between_two_shortest_candidates_goes_to_the_even_one() {
        // 6.51953125 lies exactly halfway between 6.5195312 and 6.5195313.
        assert_eq!(digits_of(6.51953125, Precision::F32), (65195312, 1));
        assert_eq!(f64::from(f32::from_bits(0x4a6a_7ded)), 3841915.25);
        assert_eq!(digits_of(3841915.25, Precision::F32), (38419152, 7));
    }

    #[test]
    fn a_value_that_is_not_a_tie_keeps_its_closest_digits() {
        assert_eq!(digits_of(f64::from(1.0000001f32), Precision::F32), (10000001, 1));
        assert_eq!(digits_of(0.3, Precision::F64), (3, 0));
        assert_eq!(digits_of(5e-324, Precision::F64), (5, -323));
    }

    #[test]
    fn exact_decimal_equality_covers_large_small_and_unequal_values() {
        assert!(equals_decimal(6.51953125, 651953125, -8));
        assert!(equals_decimal(1.5e20, 15, 19));
        assert!(!equals_decimal(0.1, 1, -1));
        assert!(!equals_decimal(1e300, 1, 300));
        assert!(!equals_decimal(5e-324, 5, -324));
        assert!(equals_decimal(2f64.powi(-20), 95367431640625, -20));
    }
}
