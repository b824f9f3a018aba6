//! The shortest decimal digits that round-trip in a value's own precision,
//! the closest such digits, and of two equally close the even one.
//!
//! Ryu (the `ryu` crate) computes exactly these, as NumPy and
//! `std::to_chars` do. Rust's own `{:e}` is not used: it rounds an exact tie
//! up (f32 6.51953125 prints as 6.5195313, where the format wants 6.5195312),
//! and it is four times slower.

/// A positive value as `0.digits × 10^exponent`: `count` ASCII digits, the first not zero, no trailing
/// zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shortest {
    pub digits: [u8; 17],
    pub count: usize,
    pub exponent: i32,
}

impl Shortest {
    pub fn digits(&self) -> &[u8] {
        &self.digits[..self.count]
    }
}

/// The shortest digits of a positive finite f32.
#[cfg(test)]
fn shortest_f32(v: f32) -> Shortest {
    parse_decimal(ryu::Buffer::new().format_finite(v))
}

/// The shortest digits of a positive finite f64.
#[cfg(test)]
fn shortest_f64(v: f64) -> Shortest {
    parse_decimal(ryu::Buffer::new().format_finite(v))
}

/// Reads `int[.frac][e[-]exp]`, the way Ryu prints (at most 17 significant digits), into digits and
/// exponent, in one pass over the bytes. The digits stay text: a number read into an integer had to be
/// written out again a division at a time.
pub(crate) fn parse_decimal(text: &str) -> Shortest {
    let bytes = text.as_bytes();
    let mut s = Shortest { digits: [0; 17], count: 0, exponent: 0 };
    let mut int_len = 0;
    let mut in_fraction = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'e' || b == b'E' {
            break;
        }
        i += 1;
        if b == b'.' {
            in_fraction = true;
            continue;
        }
        int_len += i32::from(!in_fraction);
        if s.count == 0 && b == b'0' {
            // A leading zero moves the point, not the digits.
            s.exponent -= 1;
        } else if let Some(d) = s.digits.get_mut(s.count) {
            *d = b;
            s.count += 1;
        }
    }
    let mut exp = 0i32;
    let negative = bytes.get(i + 1) == Some(&b'-');
    for &b in bytes.iter().skip(i + 1 + usize::from(negative)) {
        exp = exp * 10 + i32::from(b - b'0');
    }
    s.exponent += int_len + if negative { -exp } else { exp };
    while s.count > 1 && s.digits[s.count - 1] == b'0' {
        s.count -= 1;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digits(s: Shortest) -> (u64, i32) {
        (std::str::from_utf8(s.digits()).unwrap().parse().unwrap(), s.exponent)
    }

    // The literals are the exact binary values, digits of a tie included.
    #[allow(clippy::excessive_precision)]
    #[test]
    fn an_exact_tie_between_two_shortest_candidates_goes_to_the_even_one() {
        // 6.51953125 lies exactly halfway between 6.5195312 and 6.5195313.
        assert_eq!(digits(shortest_f32(6.51953125)), (65195312, 1));
        assert_eq!(digits(shortest_f32(3841915.25)), (38419152, 7));
    }

    #[test]
    fn every_printed_layout_reads_back_as_digits_and_exponent() {
        let read = |text| {
            let s = parse_decimal(text);
            (String::from_utf8(s.digits().to_vec()).unwrap(), s.exponent)
        };
        assert_eq!(read("0.0001"), ("1".to_owned(), -3));
        assert_eq!(read("1.5e20"), ("15".to_owned(), 21));
        assert_eq!(read("123.0"), ("123".to_owned(), 3));
        assert_eq!(read("5e-324"), ("5".to_owned(), -323));
        assert_eq!(read("1.2345678901234567e-7"), ("12345678901234567".to_owned(), -6));
    }

    #[test]
    fn values_keep_their_own_precision() {
        assert_eq!(digits(shortest_f32(0.1)), (1, 0));
        assert_eq!(digits(shortest_f64(f64::from(0.1f32))), (10000000149011612, 0));
    }
}
