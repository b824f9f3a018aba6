//! Canonical number text (FORMAT.md, "Numbers"), and exact half-precision
//! widening. Integers are plain decimal. Floats take their shortest
//! round-trip digits in the value's own precision (see `shortest`), laid out
//! as ECMAScript's `Number::toString` does, with negative zero as `-0.0` and
//! non-finite values as the strings the schema names.

use crate::encoding::shortest::parse_decimal;
use crate::schema_gen::{NAN_TOKEN, NEGATIVE_ZERO_TOKEN, NEG_INF_TOKEN, POS_INF_TOKEN};

/// The f32 bits of an f16 given by its bits, widened exactly.
///
/// Done by hand rather than with `half`'s `to_f32`, which may use the F16C
/// instruction: hardware conversion quiets a signalling NaN, and the format
/// keeps NaN payloads bit for bit (shifted left by 13, no quiet bit set).
pub(crate) fn f16_to_f32_bits(h: u16) -> u32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let mant = u32::from(h & 0x3ff);
    match exp {
        // Zeros and subnormals: mant * 2^-24 is exact in f32.
        0 => {
            let magnitude = mant as f32 * f32::from_bits(0x3380_0000);
            sign | magnitude.to_bits()
        }
        0x1f => sign | 0x7f80_0000 | (mant << 13),
        _ => sign | ((exp + 112) << 23) | (mant << 13),
    }
}

/// The f32 bits of a bf16 given by its bits: bf16 is the upper half of an f32.
pub(crate) fn bf16_to_f32_bits(b: u16) -> u32 {
    u32::from(b) << 16
}

/// Appends the JSON token of an f32 (also used for widened f16 and bf16).
pub(crate) fn write_f32(out: &mut Vec<u8>, v: f32) {
    write_float(out, f64::from(v), |text| text.format_finite(v.abs()));
}

/// Appends the JSON token of an f64.
pub(crate) fn write_f64(out: &mut Vec<u8>, v: f64) {
    write_float(out, v, |text| text.format_finite(v.abs()));
}

/// `v` is the value (widened exactly when it is an f32); `ryu` prints its
/// magnitude in the value's own precision (`shortest`).
fn write_float(out: &mut Vec<u8>, v: f64, ryu: impl FnOnce(&mut ryu::Buffer) -> &str) {
    let token = if v.is_nan() {
        NAN_TOKEN
    } else if v.is_infinite() {
        if v > 0.0 {
            POS_INF_TOKEN
        } else {
            NEG_INF_TOKEN
        }
    } else if v == 0.0 {
        if v.is_sign_negative() {
            NEGATIVE_ZERO_TOKEN
        } else {
            "0"
        }
    } else {
        // Laid out on the stack and appended once: a record's numbers are most of its pieces.
        let mut text = [0u8; 32];
        let mut at = 0;
        if v < 0.0 {
            text[0] = b'-';
            at = 1;
        }
        let mut buffer = ryu::Buffer::new();
        let printed = ryu(&mut buffer);
        if !printed.as_bytes().contains(&b'e') {
            // Ryu writes fixed point where ECMAScript does (in a narrower range of exponents), with the
            // same digits and layout but for the ".0" it puts after an integer: most of a record's numbers
            // are taken as printed, without reading their digits back.
            let fixed = printed.strip_suffix(".0").unwrap_or(printed).as_bytes();
            text[at..at + fixed.len()].copy_from_slice(fixed);
            out.extend_from_slice(&text[..at + fixed.len()]);
            return;
        }
        let s = parse_decimal(printed);
        at = ecmascript_layout(&mut text, at, s.digits(), s.exponent);
        out.extend_from_slice(&text[..at]);
        return;
    };
    out.extend_from_slice(token.as_bytes());
}

/// ECMAScript `Number::toString` steps for digits `s` (k of them, 1 to 17) and
/// decimal exponent `n`, where the value is 0.s × 10ⁿ, written into `text` from
/// `at` (room for 25 characters); returns the end.
fn ecmascript_layout(text: &mut [u8; 32], mut at: usize, s: &[u8], n: i32) -> usize {
    let mut put = |bytes: &[u8]| {
        text[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    };
    let k = s.len() as i32;
    if k <= n && n <= 21 {
        put(s);
        put(&[b'0'; 21][..(n - k) as usize]);
    } else if 0 < n && n <= 21 {
        put(&s[..n as usize]);
        put(b".");
        put(&s[n as usize..]);
    } else if -6 < n && n <= 0 {
        put(b"0.");
        put(&[b'0'; 6][..(-n) as usize]);
        put(s);
    } else {
        put(&s[..1]);
        if k > 1 {
            put(b".");
            put(&s[1..]);
        }
        put(if n >= 1 { b"e+" } else { b"e-" });
        put(decimal(u64::from((n - 1).unsigned_abs()), &mut [0; 20]));
    }
    at
}

/// Appends an integer in plain decimal.
pub(crate) fn write_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    write_u64(out, v.unsigned_abs());
}

fn write_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(decimal(v, &mut [0; 20]));
}

/// The decimal digits of `v`, written into the end of `buf`.
fn decimal(mut v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut start = buf.len();
    loop {
        start -= 1;
        buf[start] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            return &buf[start..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_vectors;

    fn token(write: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        write(&mut out);
        String::from_utf8(out).unwrap()
    }

    fn cases(dtype: &str) -> Vec<(u64, String)> {
        let doc = test_vectors::load("floats.json");
        let cases = doc[dtype].as_array().unwrap();
        assert!(cases.len() > 100, "{dtype}: too few float vectors");
        cases
            .iter()
            .map(|c| (u64::from_str_radix(c[0].as_str().unwrap(), 16).unwrap(), c[1].as_str().unwrap().to_owned()))
            .collect()
    }

    #[test]
    fn every_f32_vector_prints_its_exact_token() {
        for (bits, expected) in cases("f32") {
            assert_eq!(token(|o| write_f32(o, f32::from_bits(bits as u32))), expected, "bits {bits:08x}");
        }
    }

    #[test]
    fn every_f64_vector_prints_its_exact_token() {
        for (bits, expected) in cases("f64") {
            assert_eq!(token(|o| write_f64(o, f64::from_bits(bits))), expected, "bits {bits:016x}");
        }
    }

    #[test]
    fn every_f16_vector_prints_its_exact_token_after_widening() {
        for (bits, expected) in cases("f16") {
            let wide = f32::from_bits(f16_to_f32_bits(bits as u16));
            assert_eq!(token(|o| write_f32(o, wide)), expected, "bits {bits:04x}");
        }
    }

    #[test]
    fn every_bf16_vector_prints_its_exact_token_after_widening() {
        for (bits, expected) in cases("bf16") {
            let wide = f32::from_bits(bf16_to_f32_bits(bits as u16));
            assert_eq!(token(|o| write_f32(o, wide)), expected, "bits {bits:04x}");
        }
    }

    #[test]
    fn f16_widening_is_exact_for_every_non_nan_pattern() {
        for bits in 0..=u16::MAX {
            let ours = f32::from_bits(f16_to_f32_bits(bits));
            if !ours.is_nan() {
                assert_eq!(ours.to_bits(), half::f16::from_bits(bits).to_f32().to_bits(), "bits {bits:04x}");
            }
        }
    }

    #[test]
    fn widening_keeps_a_signalling_nan_payload_without_quieting_it() {
        assert_eq!(f16_to_f32_bits(0x7c01), 0x7f80_2000);
        assert_eq!(f16_to_f32_bits(0xfe00), 0xffc0_0000);
        assert_eq!(bf16_to_f32_bits(0x7f81), 0x7f81_0000);
    }

    #[test]
    fn integers_are_plain_decimal_down_to_the_extremes() {
        assert_eq!(token(|o| write_i64(o, 0)), "0");
        assert_eq!(token(|o| write_i64(o, -42)), "-42");
        assert_eq!(token(|o| write_i64(o, i64::MIN)), "-9223372036854775808");
        assert_eq!(token(|o| write_i64(o, i64::MAX)), "9223372036854775807");
    }

    #[test]
    fn layout_switches_to_exponent_form_at_ecmascript_boundaries() {
        assert_eq!(token(|o| write_f64(o, 1e21)), "1e+21");
        assert_eq!(token(|o| write_f64(o, 1e20)), "100000000000000000000");
        assert_eq!(token(|o| write_f64(o, 1e-6)), "0.000001");
        assert_eq!(token(|o| write_f64(o, 1e-7)), "1e-7");
        assert_eq!(token(|o| write_f64(o, -1.5e-7)), "-1.5e-7");
        assert_eq!(token(|o| write_f64(o, 123.456)), "123.456");
        assert_eq!(token(|o| write_f64(o, f64::MIN_POSITIVE)), "2.2250738585072014e-308");
    }
}
