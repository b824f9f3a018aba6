//! Reference tensor bytes -> the engine's dtype, for a graft. The same dtype
//! is copied as is; floats (f32, f16, bf16, f64) convert among themselves
//! with round-to-nearest-even, as a cast in NumPy or PyTorch does. Integer
//! tensors only take their own dtype: converting token ids or quantized
//! blocks would hide the very difference a graft is meant to remove.
//!
//! The bit-level rounding is the C++ logger's (detail/graft/convert.hpp),
//! not `half`'s, so that every emitter grafts the same bits (NaN included).

use crate::encoding::numbers::{bf16_to_f32_bits, f16_to_f32_bits};
use crate::schema_gen::DType;

pub(crate) fn is_float(d: DType) -> bool {
    matches!(d, DType::F32 | DType::F16 | DType::Bf16 | DType::F64)
}

/// Whether a reference tensor of dtype `from` may overwrite one of dtype `to`.
pub(crate) fn converts(from: DType, to: DType) -> bool {
    from == to || (is_float(from) && is_float(to))
}

fn f32_to_bf16_bits(f: f32) -> u16 {
    let bits = f.to_bits();
    if bits & 0x7FFF_FFFF > 0x7F80_0000 {
        return ((bits >> 16) | 0x40) as u16; // NaN stays NaN
    }
    (bits.wrapping_add(0x7FFF + ((bits >> 16) & 1)) >> 16) as u16
}

fn f32_to_f16_bits(f: f32) -> u16 {
    let bits = f.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let abs = bits & 0x7FFF_FFFF;
    if abs > 0x7F80_0000 {
        return sign | 0x7E00; // NaN
    }
    if abs >= 0x477F_F000 {
        return sign | 0x7C00; // rounds to or beyond 65520: Inf
    }
    if abs < 0x3880_0000 {
        // Below the smallest normal f16: subnormal or zero, in units of 2^-24.
        let shift = 126 - (abs >> 23);
        if shift > 24 {
            return sign;
        }
        let mant = (abs & 0x7F_FFFF) | 0x80_0000;
        let kept = mant >> shift;
        let rest = mant & ((1 << shift) - 1);
        let mid = 1 << (shift - 1);
        return sign | (kept + u32::from(rest > mid || (rest == mid && kept & 1 == 1))) as u16;
    }
    let rounded = abs - 0x3800_0000 + 0xFFF + ((abs >> 13) & 1);
    sign | (rounded >> 13) as u16
}

fn u16_at(p: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([p[2 * i], p[2 * i + 1]])
}

pub(crate) fn float_at(d: DType, p: &[u8], i: usize) -> f64 {
    match d {
        DType::F64 => f64::from_le_bytes(p[8 * i..8 * i + 8].try_into().unwrap_or_default()),
        DType::F16 => f64::from(f32::from_bits(f16_to_f32_bits(u16_at(p, i)))),
        DType::Bf16 => f64::from(f32::from_bits(bf16_to_f32_bits(u16_at(p, i)))),
        _ => f64::from(f32::from_le_bytes(p[4 * i..4 * i + 4].try_into().unwrap_or_default())),
    }
}

fn store_float(d: DType, p: &mut [u8], i: usize, v: f64) {
    match d {
        DType::F64 => p[8 * i..8 * i + 8].copy_from_slice(&v.to_le_bytes()),
        DType::F32 => p[4 * i..4 * i + 4].copy_from_slice(&(v as f32).to_le_bytes()),
        // Through f32: exact for an f32 source; an f64 source rounds twice,
        // which differs from one rounding only at exact ties of the f32 step.
        _ => {
            let f = v as f32;
            let h = if d == DType::F16 { f32_to_f16_bits(f) } else { f32_to_bf16_bits(f) };
            p[2 * i..2 * i + 2].copy_from_slice(&h.to_le_bytes());
        }
    }
}

/// Writes the elements of `src` (dtype `from`) into `dst` as `to`, both
/// little-endian; [`converts`] must hold and the lengths match the count.
pub(crate) fn convert_elements(from: DType, src: &[u8], to: DType, dst: &mut [u8]) {
    if from == to {
        dst.copy_from_slice(src);
        return;
    }
    for i in 0..dst.len() / to.size() {
        store_float(to, dst, i, float_at(from, src, i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convert(from: DType, src: &[u8], to: DType) -> Vec<u8> {
        let mut out = vec![0; src.len() / from.size() * to.size()];
        convert_elements(from, src, to, &mut out);
        out
    }

    #[test]
    fn f32_to_f16_rounds_to_nearest_even_like_half() {
        // Every f16 and the midpoints between neighbours: half's software
        // conversion is round-to-nearest-even too, and differs only for NaN.
        for h in 0..=u16::MAX {
            let f = f32::from_bits(f16_to_f32_bits(h));
            if f.is_nan() {
                assert_eq!(f32_to_f16_bits(f) & 0x7E00, 0x7E00);
                continue;
            }
            assert_eq!(f32_to_f16_bits(f), half::f16::from_f32(f).to_bits(), "{h:#06x}");
            let next = f32::from_bits(f16_to_f32_bits(h.wrapping_add(1)));
            if next.is_finite() && f.is_finite() && (h & 0x7FFF) != 0x7BFF {
                let mid = ((f64::from(f) + f64::from(next)) / 2.0) as f32;
                assert_eq!(f32_to_f16_bits(mid), half::f16::from_f32(mid).to_bits(), "mid after {h:#06x}");
            }
        }
    }

    #[test]
    fn f32_to_bf16_rounds_to_nearest_even() {
        let cases = [(0x3F80_8000u32, 0x3F80u16), (0x3F81_8000, 0x3F82), (0x3F80_8001, 0x3F81), (0x7F7F_FFFF, 0x7F80)];
        for (bits, want) in cases {
            assert_eq!(f32_to_bf16_bits(f32::from_bits(bits)), want, "{bits:#010x}");
        }
        assert_eq!(f32_to_bf16_bits(f32::NAN) & 0x7FC0, 0x7FC0);
    }

    #[test]
    fn the_same_dtype_is_copied_bit_for_bit_and_floats_convert() {
        let nan_payload = 0x7FC0_1234u32.to_le_bytes();
        assert_eq!(convert(DType::F32, &nan_payload, DType::F32), nan_payload);
        assert_eq!(convert(DType::F32, &1.5f32.to_le_bytes(), DType::F64), 1.5f64.to_le_bytes());
        assert_eq!(convert(DType::F64, &(-2.0f64).to_le_bytes(), DType::Bf16), 0xC000u16.to_le_bytes());
        assert_eq!(convert(DType::F16, &0x3C00u16.to_le_bytes(), DType::F32), 1.0f32.to_le_bytes());
        assert!(
            converts(DType::I32, DType::I32) && !converts(DType::I32, DType::I64) && !converts(DType::F32, DType::I8)
        );
    }
}
