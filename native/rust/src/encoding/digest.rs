//! The digest fields of a record: what is computed over the whole tensor,
//! outside the logger's lock. The schema marks them `source: digest`; the
//! generated `Digest::of` (fields_gen.rs) calls `digest_<field>` for each,
//! so a new digest field is one schema line and one function here (and its
//! twins in orchlog/encoding/digest.py and detail/encode/digest.hpp), all
//! held to the vectors.

use crate::encoding::{sketch, stats};
use crate::schema_gen::Stats;
use crate::tensor::Tensor;

/// 64 lowercase hex digits.
pub(crate) struct Hex256([u8; 64]);

pub(crate) fn digest_stats(tensor: &Tensor<'_>) -> Stats {
    stats::compute(tensor.dtype(), tensor.bytes())
}

pub(crate) fn digest_sketch(tensor: &Tensor<'_>) -> [f64; sketch::ROWS] {
    sketch::compute(tensor.dtype(), tensor.bytes()).map(f64::from)
}

pub(crate) fn digest_blake3(tensor: &Tensor<'_>) -> Hex256 {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let hash = blake3::hash(tensor.bytes());
    let mut hex = [0u8; 64];
    for (pair, byte) in hex.chunks_exact_mut(2).zip(hash.as_bytes()) {
        pair.copy_from_slice(&[HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]]);
    }
    Hex256(hex)
}

/// A digest member as the record view holds it.
pub(crate) trait DigestField<'a> {
    type View;
    fn view(&'a self) -> Self::View;
}

impl DigestField<'_> for Stats {
    type View = Stats;
    fn view(&self) -> Stats {
        *self
    }
}

impl<'a> DigestField<'a> for Hex256 {
    type View = &'a str;
    fn view(&'a self) -> &'a str {
        // Only ASCII hex digits are ever stored.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl<'a, const N: usize> DigestField<'a> for [f64; N] {
    type View = &'a [f64];
    fn view(&'a self) -> &'a [f64] {
        self
    }
}
