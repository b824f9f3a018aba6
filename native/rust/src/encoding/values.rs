//! The leading values a record prints, decoded from the tensor's bytes into
//! the number each encoding writes: f32 bits for f32, f16 and bf16 (widened
//! exactly), f64 bits for f64, i64 for the integer dtypes.

use crate::encoding::numbers::{bf16_to_f32_bits, f16_to_f32_bits};
use crate::schema_gen::{DType, ValuesView};

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Number {
    F32Bits(u32),
    F64Bits(u64),
    Int(i64),
}

/// The first `values.count` elements of `values.data`.
pub(crate) fn leading<'v>(values: &ValuesView<'v>) -> impl ExactSizeIterator<Item = Number> + 'v {
    values.data.chunks_exact(values.dtype.size()).take(values.count).map(decoder(values.dtype))
}

fn decoder(dtype: DType) -> fn(&[u8]) -> Number {
    match dtype {
        DType::F32 => |b| Number::F32Bits(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        DType::F16 => |b| Number::F32Bits(f16_to_f32_bits(u16::from_le_bytes([b[0], b[1]]))),
        DType::Bf16 => |b| Number::F32Bits(bf16_to_f32_bits(u16::from_le_bytes([b[0], b[1]]))),
        DType::F64 => |b| Number::F64Bits(u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])),
        DType::I8 => |b| Number::Int(i64::from(b[0] as i8)),
        DType::U8 => |b| Number::Int(i64::from(b[0])),
        DType::I32 => |b| Number::Int(i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
        DType::I64 => |b| Number::Int(i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_count_elements_are_decoded() {
        let data = [1i32, -2, 3].map(i32::to_le_bytes).concat();
        let view = ValuesView { dtype: DType::I32, data: &data, count: 2 };
        assert_eq!(leading(&view).collect::<Vec<_>>(), [Number::Int(1), Number::Int(-2)]);
    }

    #[test]
    fn half_precision_values_decode_to_widened_f32_bits() {
        let data = [0x3c00u16, 0x3f80].map(u16::to_le_bytes).concat();
        let f16 = ValuesView { dtype: DType::F16, data: &data, count: 2 };
        let bf16 = ValuesView { dtype: DType::Bf16, data: &data, count: 2 };
        assert_eq!(leading(&f16).next(), Some(Number::F32Bits(1.0f32.to_bits())));
        assert_eq!(leading(&bf16).nth(1), Some(Number::F32Bits(1.0f32.to_bits())));
    }

    #[test]
    fn small_integers_are_sign_extended_or_not_by_dtype() {
        let data = [0xffu8];
        let i8s = ValuesView { dtype: DType::I8, data: &data, count: 1 };
        let u8s = ValuesView { dtype: DType::U8, data: &data, count: 1 };
        assert_eq!((leading(&i8s).next(), leading(&u8s).next()), (Some(Number::Int(-1)), Some(Number::Int(255))));
    }
}
