//! Whole-tensor statistics in the format's fixed summation order
//! (FORMAT.md, "Stats"), so that every emitter prints the same digits.
//!
//! Element i goes to lane i % 8; each lane sums in element order in f64 from
//! +0.0; lanes combine as ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)). Rust never
//! contracts `a + b * c` into a fused multiply-add, so squares are rounded
//! products as the format asks. Eight independent lanes are also what lets
//! the compiler vectorise the loop without changing a bit of the result.

use crate::encoding::numbers::{bf16_to_f32_bits, f16_to_f32_bits};
use crate::schema_gen::{DType, Stats, STATS_LANES};

const LANES: usize = STATS_LANES;

/// Stats of `bytes`, the little-endian elements of a tensor of `dtype`.
pub(crate) fn compute(dtype: DType, bytes: &[u8]) -> Stats {
    match dtype {
        DType::F32 => accumulate(bytes, |b: [u8; 4]| f64::from(f32::from_le_bytes(b))),
        DType::F64 => accumulate(bytes, f64::from_le_bytes),
        DType::F16 => accumulate(bytes, |b: [u8; 2]| widen_bits(f16_to_f32_bits(u16::from_le_bytes(b)))),
        DType::Bf16 => accumulate(bytes, |b: [u8; 2]| widen_bits(bf16_to_f32_bits(u16::from_le_bytes(b)))),
        DType::I8 => accumulate(bytes, |b: [u8; 1]| f64::from(i8::from_le_bytes(b))),
        DType::U8 => accumulate(bytes, |b: [u8; 1]| f64::from(b[0])),
        DType::I32 => accumulate(bytes, |b: [u8; 4]| f64::from(i32::from_le_bytes(b))),
        // `as` rounds to nearest, as the format asks for i64.
        DType::I64 => accumulate(bytes, |b: [u8; 8]| i64::from_le_bytes(b) as f64),
    }
}

fn widen_bits(f32_bits: u32) -> f64 {
    f64::from(f32::from_bits(f32_bits))
}

/// Per-lane running values; a non-finite element is counted, not summed.
struct Lanes {
    sum: [f64; LANES],
    sum_sq: [f64; LANES],
    min: [f64; LANES],
    max: [f64; LANES],
    abs_max: [f64; LANES],
    finite: [u64; LANES],
    nan: [u64; LANES],
}

impl Lanes {
    fn new() -> Self {
        Lanes {
            sum: [0.0; LANES],
            sum_sq: [0.0; LANES],
            min: [f64::INFINITY; LANES],
            max: [f64::NEG_INFINITY; LANES],
            abs_max: [0.0; LANES],
            finite: [0; LANES],
            nan: [0; LANES],
        }
    }

    #[inline(always)]
    fn add(&mut self, lane: usize, v: f64) {
        let finite = v.is_finite();
        // Adding +0.0 instead of skipping can only turn a -0.0 lane sum into
        // +0.0; every non-zero result is the same, and zero results are
        // written as +0 anyway.
        let x = if finite { v } else { 0.0 };
        self.sum[lane] += x;
        self.sum_sq[lane] += x * x;
        self.min[lane] = if finite && v < self.min[lane] { v } else { self.min[lane] };
        self.max[lane] = if finite && v > self.max[lane] { v } else { self.max[lane] };
        self.abs_max[lane] = if x.abs() > self.abs_max[lane] { x.abs() } else { self.abs_max[lane] };
        self.finite[lane] += u64::from(finite);
        self.nan[lane] += u64::from(v.is_nan());
    }

    /// `add` for eight finite values, one per lane: the common case, without
    /// the selects that non-finite values need.
    #[inline(always)]
    fn add_finite(&mut self, x: &[f64; LANES]) {
        for (lane, &v) in x.iter().enumerate() {
            self.sum[lane] += v;
            self.sum_sq[lane] += v * v;
            self.min[lane] = if v < self.min[lane] { v } else { self.min[lane] };
            self.max[lane] = if v > self.max[lane] { v } else { self.max[lane] };
            self.abs_max[lane] = if v.abs() > self.abs_max[lane] { v.abs() } else { self.abs_max[lane] };
            self.finite[lane] += 1;
        }
    }

    fn finish(&self, numel: usize) -> Stats {
        let finite: u64 = self.finite.iter().sum();
        let nan: u64 = self.nan.iter().sum();
        let nan_count = nan as i64;
        let inf_count = (numel as u64 - finite - nan) as i64;
        if finite == 0 {
            return Stats { nan_count, inf_count, ..Stats::default() };
        }
        let n = finite as f64;
        let fold = |lanes: &[f64; LANES], pick: fn(f64, f64) -> f64| lanes.iter().copied().fold(lanes[0], pick);
        Stats {
            min: Some(plus_zero(fold(&self.min, f64::min))),
            max: Some(plus_zero(fold(&self.max, f64::max))),
            mean: Some(plus_zero(tree(&self.sum) / n)),
            rms: Some(plus_zero((tree(&self.sum_sq) / n).sqrt())),
            abs_max: Some(plus_zero(fold(&self.abs_max, f64::max))),
            nan_count,
            inf_count,
        }
    }
}

/// The stats from each lane's sum and sum of squares, the extremes and the counts (the sketch's pass
/// gathers them: encoding/sketch.rs).
pub(crate) fn from_lanes(
    sum: &[f64; LANES],
    sum_sq: &[f64; LANES],
    lo: f64,
    hi: f64,
    finite: usize,
    nan: usize,
    inf: usize,
) -> Stats {
    let (nan_count, inf_count) = (nan as i64, inf as i64);
    if finite == 0 {
        return Stats { nan_count, inf_count, ..Stats::default() };
    }
    let n = finite as f64;
    Stats {
        min: Some(plus_zero(lo)),
        max: Some(plus_zero(hi)),
        mean: Some(plus_zero(tree(sum) / n)),
        rms: Some(plus_zero((tree(sum_sq) / n).sqrt())),
        abs_max: Some(plus_zero(lo.abs().max(hi.abs()))),
        nan_count,
        inf_count,
    }
}

/// The NaN and the ±Inf elements of a tensor (integer dtypes have none).
pub(crate) fn count_nonfinite(dtype: DType, bytes: &[u8]) -> (usize, usize) {
    let count = |values: &mut dyn Iterator<Item = f64>| {
        values.fold((0, 0), |(nan, inf), v| (nan + usize::from(v.is_nan()), inf + usize::from(v.is_infinite())))
    };
    match dtype {
        DType::F32 => {
            count(&mut bytes.chunks_exact(4).map(|b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))))
        }
        DType::F64 => count(&mut bytes.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap_or([0; 8])))),
        DType::F16 => {
            count(&mut bytes.chunks_exact(2).map(|b| widen_bits(f16_to_f32_bits(u16::from_le_bytes([b[0], b[1]])))))
        }
        DType::Bf16 => {
            count(&mut bytes.chunks_exact(2).map(|b| widen_bits(bf16_to_f32_bits(u16::from_le_bytes([b[0], b[1]])))))
        }
        DType::I8 | DType::U8 | DType::I32 | DType::I64 => (0, 0),
    }
}

/// ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7))
fn tree(l: &[f64; LANES]) -> f64 {
    ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
}

/// The sign of a zero result depends on evaluation order; the format drops it.
fn plus_zero(v: f64) -> f64 {
    if v == 0.0 {
        0.0
    } else {
        v
    }
}

/// Dispatches to a copy of the loop compiled for AVX2 where the CPU has it:
/// four f64 lanes per instruction instead of two. The result is the same
/// bit for bit, since the lanes and their order do not change.
fn accumulate<const W: usize>(bytes: &[u8], decode: impl Fn([u8; W]) -> f64) -> Stats {
    #[cfg(target_arch = "x86_64")]
    if crate::encoding::isa::allowed(crate::encoding::isa::Isa::Avx2) {
        // SAFETY: the CPU has AVX2 (isa::allowed).
        return unsafe { accumulate_avx2(bytes, decode) };
    }
    accumulate_portable(bytes, decode)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn accumulate_avx2<const W: usize>(bytes: &[u8], decode: impl Fn([u8; W]) -> f64) -> Stats {
    accumulate_portable(bytes, decode)
}

#[inline(always)]
fn accumulate_portable<const W: usize>(bytes: &[u8], decode: impl Fn([u8; W]) -> f64) -> Stats {
    let mut lanes = Lanes::new();
    let mut blocks = bytes.chunks_exact(W * LANES);
    for block in &mut blocks {
        let x: [f64; LANES] = std::array::from_fn(|lane| decode(std::array::from_fn(|i| block[lane * W + i])));
        if x.iter().all(|v| v.is_finite()) {
            lanes.add_finite(&x);
        } else {
            (0..LANES).for_each(|lane| lanes.add(lane, x[lane]));
        }
    }
    for (lane, element) in blocks.remainder().chunks_exact(W).enumerate() {
        lanes.add(lane, decode(std::array::from_fn(|i| element[i])));
    }
    lanes.finish(bytes.len() / W)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_stats(values: &[f32]) -> Stats {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        compute(DType::F32, &bytes)
    }

    #[test]
    fn stats_cover_finite_elements_and_count_the_rest() {
        let s = f32_stats(&[1.0, -3.0, f32::NAN, f32::INFINITY, 2.0, f32::NEG_INFINITY]);
        assert_eq!((s.min, s.max, s.abs_max), (Some(-3.0), Some(2.0), Some(3.0)));
        assert_eq!(s.mean, Some(0.0));
        assert_eq!(s.rms, Some((14.0f64 / 3.0).sqrt()));
        assert_eq!((s.nan_count, s.inf_count), (1, 2));
    }

    #[test]
    fn no_finite_element_gives_null_stats() {
        let s = f32_stats(&[f32::NAN, f32::INFINITY]);
        assert_eq!(s, Stats { nan_count: 1, inf_count: 1, ..Stats::default() });
        assert_eq!(f32_stats(&[]), Stats::default());
    }

    #[test]
    fn zero_results_are_positive_zero() {
        let s = f32_stats(&[-0.0, -0.0]);
        for v in [s.min, s.max, s.mean, s.rms, s.abs_max] {
            assert_eq!(v.map(f64::to_bits), Some(0));
        }
    }

    #[test]
    fn element_i_is_summed_in_lane_i_mod_8() {
        // 1e16 + 1 + 1 loses both ones when they meet 1e16 one at a time; the
        // lane order puts them together first, in lanes 1 and 2 of one pair.
        let values = [1e16, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1e16];
        let bytes: Vec<u8> = values.iter().flat_map(|v: &f64| v.to_le_bytes()).collect();
        // lane 0: 1e16 + -1e16 = 0; lanes 1, 2: 1 each; (0+1)+(1+0) = 2.
        assert_eq!(compute(DType::F64, &bytes).mean, Some(2.0 / 9.0));
    }

    #[test]
    fn the_dispatched_and_portable_loops_agree_bit_for_bit() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let bytes: Vec<u8> = (0..10_007)
            .flat_map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Mostly ordinary values, with a NaN or an infinity now and then.
                let bits = match i % 97 {
                    0 => x as u32 | 0x7fc0_0000,
                    1 => (x as u32 & 0x8000_0000) | 0x7f80_0000,
                    _ => (x as u32 & 0xbfff_ffff) | 0x3000_0000,
                };
                bits.to_le_bytes()
            })
            .collect();
        let decode = |b: [u8; 4]| f64::from(f32::from_le_bytes(b));
        let (dispatched, portable) = (accumulate(&bytes, decode), accumulate_portable(&bytes, decode));
        let bits = |s: Stats| [s.min, s.max, s.mean, s.rms, s.abs_max].map(|v| v.map(f64::to_bits));
        assert_eq!(bits(dispatched), bits(portable));
        assert_eq!((dispatched.nan_count, dispatched.inf_count), (portable.nan_count, portable.inf_count));
        assert!(dispatched.nan_count > 0 && dispatched.inf_count > 0);
    }

    #[test]
    fn i64_widens_with_round_to_nearest() {
        let bytes: Vec<u8> = [i64::MAX, i64::MIN].iter().flat_map(|v| v.to_le_bytes()).collect();
        let s = compute(DType::I64, &bytes);
        assert_eq!((s.max, s.min), (Some(9.223372036854776e18), Some(-9.223372036854776e18)));
    }
}
