//! Whether a record is proven within tolerance of the reference's record of
//! its key: rel_l2 = |ours - reference| / |reference| at most the
//! tolerance, by the whole tensors or by the bound the two sketches give,
//! computed as `orchlog compare`'s bounds.py does and never looser. Every sum
//! is sequential in f64 in the C++ core's order (detail/against/proof.hpp).

use crate::fields_gen::Digest;
use crate::graft::convert;
use crate::graft::reference::Summary;
use crate::schema_gen::DType;

/// The lower end of the sketch's estimate band, rounded down from
/// orchlog/encoding/sketch.py's ESTIMATE_BAND[0] (0.35892307...).
const SKETCH_BAND_LOW: f64 = 0.3589;
/// A margin for the rounding of the two implementations' sums.
const PROOF_MARGIN: f64 = 1.0 + 1.0 / 1_048_576.0;

pub(crate) fn is_float(d: DType) -> bool {
    convert::is_float(d)
}

/// |a - b|^2 <= t^2 |a|^2 over whole tensors of float dtypes (a: the reference).
pub(crate) fn within_by_tensors(
    ref_dtype: DType,
    reference: &[u8],
    dtype: DType,
    ours: &[u8],
    numel: usize,
    tolerance: f64,
) -> bool {
    let (mut diff2, mut norm2) = (0.0f64, 0.0f64);
    for i in 0..numel {
        let a = convert::float_at(ref_dtype, reference, i);
        let b = convert::float_at(dtype, ours, i);
        let d = a - b;
        diff2 += d * d;
        norm2 += a * a;
    }
    diff2.is_finite() && norm2.is_finite() && diff2 * PROOF_MARGIN <= tolerance * tolerance * norm2
}

/// The sketch bound (bounds.py, sketch_l2 and row_slack): |a - b| <= (D +
/// slack) / sqrt(band_low), with D the rows' root mean square difference and
/// slack the rounding the stored f32 rows allow.
pub(crate) fn within_by_sketch(reference: &Summary, ours: &Digest, numel: usize, tolerance: f64) -> bool {
    let (Some(rms_a), Some(rms_b), true) = (reference.rms, ours.stats.rms, reference.sketched) else { return false };
    let rows = ours.sketch.len();
    let (mut d2, mut u_sum, mut u2) = (0.0f64, 0.0f64, 0.0f64);
    for (&a, &b) in reference.sketch.iter().zip(&ours.sketch) {
        let d = a - b;
        let u = a.abs() + b.abs();
        d2 += d * d;
        u_sum += u;
        u2 += u * u;
    }
    let n = numel as f64;
    let chunks = (n / 512.0).ceil();
    let v = 2f64.powi(-148) + (chunks + 10.0) * 2f64.powi(-53) * n * (rms_a + rms_b);
    let c = 2f64.powi(-23);
    let count = rows as f64;
    let slack = (c * c * u2 / count + 2.0 * c * v * u_sum / count + v * v).sqrt();
    let hi = ((d2 / count).sqrt() + slack) / SKETCH_BAND_LOW.sqrt();
    let norm = n.sqrt() * rms_a;
    hi.is_finite() && norm.is_finite() && hi * PROOF_MARGIN <= tolerance * norm
}
