//! The digest fields of a record: what is computed over the whole tensor,
//! outside the logger's lock. The schema marks them `source: digest`; the
//! generated `Digest::of` (fields_gen.rs) calls `digest_<field>` for each,
//! so a new digest field is one schema line and one function here (and its
//! twins in orchlog/encoding/digest.py and detail/encode/digest.hpp), all
//! held to the vectors.

use crate::encoding::{hash, sketch};
use crate::schema_gen::Stats;
use crate::tensor::Tensor;

/// 64 lowercase hex digits.
pub(crate) struct Hex256([u8; 64]);

/// The digest fields the format defines, computed together: the stats come from the sketch's read
/// of the tensor (encoding/sketch.rs), BLAKE3 (encoding/hash.rs) reads it once more, its side-by-side
/// chunks a block at a time between the sketch's runs (a compression is a chain of dependent
/// instructions; the sketch's independent arithmetic runs beside it).
pub(crate) struct Pass<'p, 't> {
    /// For a digest field the pass does not compute itself (tests/codegen/next_fields.py adds one).
    #[allow(dead_code)]
    pub(crate) tensor: &'p Tensor<'t>,
    stats: Stats,
    sketch: [f32; sketch::ROWS],
    blake3: [u8; 32],
}

impl<'p, 't> Pass<'p, 't> {
    pub(crate) fn new(tensor: &'p Tensor<'t>) -> Self {
        let bytes = tensor.bytes();
        let mut hasher = hash::Stepped::new(bytes);
        let (sketch, stats) = sketch::compute_with_stats(tensor.dtype(), bytes, || {
            hasher.step();
        });
        Pass { tensor, stats, sketch, blake3: hasher.finish() }
    }
}

pub(crate) fn digest_stats(pass: &Pass<'_, '_>) -> Stats {
    pass.stats
}

pub(crate) fn digest_sketch(pass: &Pass<'_, '_>) -> [f64; sketch::ROWS] {
    pass.sketch.map(f64::from)
}

pub(crate) fn digest_blake3(pass: &Pass<'_, '_>) -> Hex256 {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut hex = [0u8; 64];
    for (pair, byte) in hex.chunks_exact_mut(2).zip(pass.blake3.iter()) {
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
