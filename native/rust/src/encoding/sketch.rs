//! The linear sketch of a tensor (FORMAT.md, "Sketch"): 64 f32 numbers from
//! which two summaries bound ‖a − b‖₂ without the tensors, the same bits as
//! every other emitter's.
//!
//! Each 512-element chunk is 8 groups of 64 (lane q holds elements 8p + q);
//! each group gets hashed signs, a 64-point Walsh-Hadamard transform and
//! hashed signs again, and its outputs are added into 64 accumulator rows of
//! its lane through a permutation the chunk picks from a table. The lanes are
//! independent, so a chunk is done eight lanes at a time (AVX-512), in two
//! slices of four (AVX2) or one lane after another (portable), picked at run
//! time, with the same bits, since it is the same sequence of IEEE additions
//! per lane (Rust never fuses or reorders them).
//! `orchlog/encoding/sketch.py` is the reference and
//! `tests/encoding/sketch_vectors.json` the shared vectors.

use std::sync::OnceLock;

use crate::encoding::isa::{self, Isa};
use crate::encoding::numbers::{bf16_to_f32_bits, f16_to_f32_bits};
use crate::encoding::stats;
use crate::schema_gen::{DType, Stats};

pub(crate) const ROWS: usize = 64;
const LANES: usize = 8;
const CHUNK: usize = ROWS * LANES;
/// Row permutations a chunk picks from.
const TABLE: usize = 1024;
/// f64 lanes handled together: a chunk is done in LANES / WIDTH slices.
const WIDTH: usize = 4;
const SLICES: usize = LANES / WIDTH;
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;
// Consecutive 64-bit words of pi's hex digits: constants no one chose, one per stream.
const SEED_SIGNS: u64 = 0x243F_6A88_85A3_08D3;
const SEED_PICK: u64 = 0x1319_8A2E_0370_7344;
const SEED_TABLE: u64 = 0xA409_3822_299F_31D0;
const SEED_LANES: u64 = 0x082E_FA98_EC4E_6C89;

/// Output `j` of SplitMix64 seeded with `seed`.
pub(crate) fn splitmix64(seed: u64, j: u64) -> u64 {
    let mut z = seed.wrapping_add(j.wrapping_add(1).wrapping_mul(GOLDEN));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Permutation `m` of stream `seed`: a Fisher-Yates shuffle of 0..63 whose
/// k-th swap (entry i = 63 − k with entry (w · (i + 1)) >> 32) takes w from the
/// low (k even) or high (k odd) half of output 32m + k / 2.
fn permutation(seed: u64, m: u64) -> [u8; ROWS] {
    let mut out: [u8; ROWS] = std::array::from_fn(|r| r as u8);
    for k in 0..ROWS - 1 {
        let i = ROWS - 1 - k;
        let w = (splitmix64(seed, 32 * m + (k / 2) as u64) >> (32 * (k % 2))) & 0xFFFF_FFFF;
        let j = ((w * (i as u64 + 1)) >> 32) as usize;
        out.swap(i, j);
    }
    out
}

struct Tables {
    /// The permutations chunks pick from.
    rows: Vec<[u8; ROWS]>,
    /// Row t of the sketch reads row `lanes[q][t]` of lane q.
    lanes: [[u8; ROWS]; LANES],
}

/// Built once, on first use (64 KiB).
fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| Tables {
        rows: (0..TABLE as u64).map(|m| permutation(SEED_TABLE, m)).collect(),
        lanes: std::array::from_fn(|q| permutation(SEED_LANES, q as u64)),
    })
}

/// The sketch of `bytes`, the little-endian elements of a tensor of `dtype` (the digest takes it with
/// the stats: `compute_with_stats`).
#[cfg(test)]
pub(crate) fn compute(dtype: DType, bytes: &[u8]) -> [f32; ROWS] {
    with_widen(dtype, bytes, Run::<_, false> { bytes, widest: Isa::Avx512, between: || {} }).0
}

/// The sketch and the stats of the same elements, from one read of them (on x86-64 with AVX2; else
/// one after the other). `between` is called after each of the vector loop's runs of 8 positions (16
/// a chunk with AVX-512, 32 with AVX2; never on the portable path): a caller puts there short work
/// that waits on its own results (a BLAKE3 compression), which the core does beside the sketch's.
pub(crate) fn compute_with_stats(dtype: DType, bytes: &[u8], between: impl FnMut()) -> ([f32; ROWS], Stats) {
    compute_with_stats_on(Isa::Avx512, dtype, bytes, between)
}

/// `compute_with_stats` with kernels of `widest` at most (tests run each).
fn compute_with_stats_on(widest: Isa, dtype: DType, bytes: &[u8], between: impl FnMut()) -> ([f32; ROWS], Stats) {
    let (rows, totals) = with_widen(dtype, bytes, Run::<_, true> { bytes, widest, between });
    match totals {
        Some(t) => {
            let n = bytes.len() / dtype.size();
            let (nan, inf) = if t.nonfinite { stats::count_nonfinite(dtype, bytes) } else { (0, 0) };
            (rows, stats::from_lanes(&t.sum, &t.sq, t.lo, t.hi, n - nan - inf, nan, inf))
        }
        None => (rows, stats::compute(dtype, bytes)),
    }
}

/// Sums, squares and extremes of the finite elements the sketch read: lane q of the stats is lane q of
/// the sketch, and each lane's elements arrive in element order, as the stats' order asks.
struct Totals {
    sum: [f64; LANES],
    sq: [f64; LANES],
    lo: f64,
    hi: f64,
    nonfinite: bool,
}

/// A sketch run over `bytes` with an element reader: `f32_le` says the elements are little-endian f32
/// (so a run of them loads as one vector).
struct Run<'b, F: FnMut(), const STATS: bool> {
    bytes: &'b [u8],
    /// The widest kernels to use, where the CPU and ORCHLOG_ISA allow them.
    widest: Isa,
    /// Called between the vector loop's runs (`compute_with_stats`).
    between: F,
}

impl<F: FnMut(), const STATS: bool> Run<'_, F, STATS> {
    fn with<const B: usize>(self, widen: impl Fn([u8; B]) -> f64, f32_le: bool) -> ([f32; ROWS], Option<Totals>) {
        #[cfg(all(target_arch = "x86_64", orchlog_avx512))]
        if self.widest >= Isa::Avx512 && isa::allowed(Isa::Avx512) {
            // SAFETY: the CPU has AVX-512 F, BW and VL (isa::allowed).
            return unsafe { vectors::run_avx512::<B, STATS>(self.bytes, widen, f32_le, self.between) };
        }
        #[cfg(target_arch = "x86_64")]
        if self.widest >= Isa::Avx2 && isa::allowed(Isa::Avx2) {
            // SAFETY: the CPU has AVX2 (isa::allowed).
            return unsafe { vectors::run_avx2::<B, STATS>(self.bytes, widen, f32_le, self.between) };
        }
        let _ = f32_le;
        (run_portable(self.bytes, widen), None)
    }
}

fn with_widen<F: FnMut(), const STATS: bool>(
    dtype: DType,
    bytes: &[u8],
    run: Run<'_, F, STATS>,
) -> ([f32; ROWS], Option<Totals>) {
    let _ = bytes;
    match dtype {
        DType::F32 => run.with(|b: [u8; 4]| f64::from(f32::from_le_bytes(b)), cfg!(target_endian = "little")),
        DType::F64 => run.with(f64::from_le_bytes, false),
        DType::F16 => run.with(|b: [u8; 2]| f64::from(f32::from_bits(f16_to_f32_bits(u16::from_le_bytes(b)))), false),
        DType::Bf16 => run.with(|b: [u8; 2]| f64::from(f32::from_bits(bf16_to_f32_bits(u16::from_le_bytes(b)))), false),
        DType::I8 => run.with(|b: [u8; 1]| f64::from(i8::from_le_bytes(b)), false),
        DType::U8 => run.with(|b: [u8; 1]| f64::from(b[0]), false),
        DType::I32 => run.with(|b: [u8; 4]| f64::from(i32::from_le_bytes(b)), false),
        // `as` rounds to nearest, as for stats.
        DType::I64 => run.with(|b: [u8; 8]| i64::from_le_bytes(b) as f64, false),
    }
}

/// The loop written with vectors of f64 lanes (four with AVX2, all eight with AVX-512), which LLVM keeps
/// in registers (the portable loop's arrays end up in memory, at a third of the speed). A chunk is done
/// in LANES / W slices; every lane's additions are the portable loop's, in its order, so every width
/// gives the same bits. With STATS, the stats' lane sums and extremes are gathered from the same loads.
#[cfg(target_arch = "x86_64")]
mod vectors {
    use super::{finish, splitmix64, tables, Totals, CHUNK, LANES, ROWS, SEED_PICK, SEED_SIGNS};
    use std::arch::x86_64::*;

    /// One vector of W f64 lanes and the operations the loop needs; `Words` holds one u64 per lane.
    pub(super) trait F64s: Copy {
        const W: usize;
        type Words: Copy;
        unsafe fn zero() -> Self;
        unsafe fn splat(x: f64) -> Self;
        unsafe fn from_fn(f: impl Fn(usize) -> f64) -> Self;
        /// W little-endian f32 at `p`, widened.
        unsafe fn load_f32(p: *const u8) -> Self;
        unsafe fn words(f: impl Fn(usize) -> i64) -> Self::Words;
        unsafe fn add(a: Self, b: Self) -> Self;
        unsafe fn sub(a: Self, b: Self) -> Self;
        unsafe fn mul(a: Self, b: Self) -> Self;
        /// The second operand where the first is NaN, as minpd and maxpd do.
        unsafe fn min(a: Self, b: Self) -> Self;
        unsafe fn max(a: Self, b: Self) -> Self;
        /// x where it is finite, +0.0 elsewhere; and whether every lane was finite.
        unsafe fn keep_finite(x: Self, z: Self) -> (Self, bool);
        /// Lane k negated where bit `bit` of word k is set (a sign flip, exact).
        unsafe fn negate_where(v: Self, words: Self::Words, bit: i32) -> Self;
        unsafe fn store(v: Self, out: &mut [f64]);
    }

    impl F64s for __m256d {
        const W: usize = 4;
        type Words = __m256i;
        #[inline(always)]
        unsafe fn zero() -> Self {
            _mm256_setzero_pd()
        }
        #[inline(always)]
        unsafe fn splat(x: f64) -> Self {
            _mm256_set1_pd(x)
        }
        #[inline(always)]
        unsafe fn from_fn(f: impl Fn(usize) -> f64) -> Self {
            _mm256_set_pd(f(3), f(2), f(1), f(0))
        }
        #[inline(always)]
        unsafe fn load_f32(p: *const u8) -> Self {
            _mm256_cvtps_pd(_mm_loadu_ps(p.cast()))
        }
        #[inline(always)]
        unsafe fn words(f: impl Fn(usize) -> i64) -> __m256i {
            _mm256_set_epi64x(f(3), f(2), f(1), f(0))
        }
        #[inline(always)]
        unsafe fn add(a: Self, b: Self) -> Self {
            _mm256_add_pd(a, b)
        }
        #[inline(always)]
        unsafe fn sub(a: Self, b: Self) -> Self {
            _mm256_sub_pd(a, b)
        }
        #[inline(always)]
        unsafe fn mul(a: Self, b: Self) -> Self {
            _mm256_mul_pd(a, b)
        }
        #[inline(always)]
        unsafe fn min(a: Self, b: Self) -> Self {
            _mm256_min_pd(a, b)
        }
        #[inline(always)]
        unsafe fn max(a: Self, b: Self) -> Self {
            _mm256_max_pd(a, b)
        }
        #[inline(always)]
        unsafe fn keep_finite(x: Self, z: Self) -> (Self, bool) {
            let finite = _mm256_cmp_pd::<_CMP_EQ_OQ>(z, z);
            (_mm256_and_pd(x, finite), _mm256_movemask_pd(finite) == 0b1111)
        }
        #[inline(always)]
        unsafe fn negate_where(v: Self, words: __m256i, bit: i32) -> Self {
            let mask = _mm256_slli_epi64::<63>(_mm256_srl_epi64(words, _mm_cvtsi32_si128(bit)));
            _mm256_xor_pd(v, _mm256_castsi256_pd(mask))
        }
        #[inline(always)]
        unsafe fn store(v: Self, out: &mut [f64]) {
            _mm256_storeu_pd(out[..4].as_mut_ptr(), v)
        }
    }

    // Compiled only by Rust 1.89 or later (build.rs), whatever the crate's rust-version.
    #[cfg(orchlog_avx512)]
    #[allow(clippy::incompatible_msrv)]
    impl F64s for __m512d {
        const W: usize = 8;
        type Words = __m512i;
        #[inline(always)]
        unsafe fn zero() -> Self {
            _mm512_setzero_pd()
        }
        #[inline(always)]
        unsafe fn splat(x: f64) -> Self {
            _mm512_set1_pd(x)
        }
        #[inline(always)]
        unsafe fn from_fn(f: impl Fn(usize) -> f64) -> Self {
            _mm512_set_pd(f(7), f(6), f(5), f(4), f(3), f(2), f(1), f(0))
        }
        #[inline(always)]
        unsafe fn load_f32(p: *const u8) -> Self {
            _mm512_cvtps_pd(_mm256_loadu_ps(p.cast()))
        }
        #[inline(always)]
        unsafe fn words(f: impl Fn(usize) -> i64) -> __m512i {
            _mm512_set_epi64(f(7), f(6), f(5), f(4), f(3), f(2), f(1), f(0))
        }
        #[inline(always)]
        unsafe fn add(a: Self, b: Self) -> Self {
            _mm512_add_pd(a, b)
        }
        #[inline(always)]
        unsafe fn sub(a: Self, b: Self) -> Self {
            _mm512_sub_pd(a, b)
        }
        #[inline(always)]
        unsafe fn mul(a: Self, b: Self) -> Self {
            _mm512_mul_pd(a, b)
        }
        #[inline(always)]
        unsafe fn min(a: Self, b: Self) -> Self {
            _mm512_min_pd(a, b)
        }
        #[inline(always)]
        unsafe fn max(a: Self, b: Self) -> Self {
            _mm512_max_pd(a, b)
        }
        #[inline(always)]
        unsafe fn keep_finite(x: Self, z: Self) -> (Self, bool) {
            let finite = _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(z, z);
            (_mm512_maskz_mov_pd(finite, x), finite == 0xFF)
        }
        #[inline(always)]
        unsafe fn negate_where(v: Self, words: __m512i, bit: i32) -> Self {
            let mask = _mm512_slli_epi64::<63>(_mm512_srl_epi64(words, _mm_cvtsi32_si128(bit)));
            _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(v), mask))
        }
        #[inline(always)]
        unsafe fn store(v: Self, out: &mut [f64]) {
            _mm512_storeu_pd(out[..8].as_mut_ptr(), v)
        }
    }

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn run_avx2<const B: usize, const STATS: bool>(
        bytes: &[u8],
        widen: impl Fn([u8; B]) -> f64,
        f32_le: bool,
        between: impl FnMut(),
    ) -> ([f32; ROWS], Option<Totals>) {
        run::<__m256d, B, STATS>(bytes, widen, f32_le, between)
    }

    #[cfg(orchlog_avx512)]
    #[allow(clippy::incompatible_msrv)]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn run_avx512<const B: usize, const STATS: bool>(
        bytes: &[u8],
        widen: impl Fn([u8; B]) -> f64,
        f32_le: bool,
        between: impl FnMut(),
    ) -> ([f32; ROWS], Option<Totals>) {
        run::<__m512d, B, STATS>(bytes, widen, f32_le, between)
    }

    /// Stages h = 1, 2, 4 over v (or 8, 16, 32 when v holds every 8th position).
    #[inline(always)]
    unsafe fn three_stages<V: F64s>(v: &mut [V; 8]) {
        for h in [1, 2, 4] {
            for j in 0..8 {
                if j & h == 0 {
                    let (x, y) = (v[j], v[j + h]);
                    v[j] = V::add(x, y);
                    v[j + h] = V::sub(x, y);
                }
            }
        }
    }

    /// The most slices a chunk is done in (AVX2: two of four lanes).
    const MAX_SLICES: usize = 2;

    #[inline(always)]
    unsafe fn run<V: F64s, const B: usize, const STATS: bool>(
        bytes: &[u8],
        widen: impl Fn([u8; B]) -> f64,
        f32_le: bool,
        mut between: impl FnMut(),
    ) -> ([f32; ROWS], Option<Totals>) {
        let w = V::W;
        let slices = LANES / w;
        let t = tables();
        let n = bytes.len() / B;
        // Past the end: NaN, which the sketch reads as +0.0 and the stats' extremes pass over.
        let at = |i: usize| -> f64 {
            match bytes.get(i * B..i * B + B) {
                Some(b) => widen(b.try_into().unwrap_or([0; B])),
                None => f64::NAN,
            }
        };
        let mut sum = [V::zero(); MAX_SLICES];
        let mut sq = [V::zero(); MAX_SLICES];
        let mut lo = V::splat(f64::INFINITY);
        let mut hi = V::splat(f64::NEG_INFINITY);
        let mut nonfinite = false;
        let mut acc = [[V::zero(); ROWS]; MAX_SLICES];
        let mut y = [V::zero(); ROWS];
        for c in 0..n.div_ceil(CHUNK) {
            let pick = &t.rows[(splitmix64(SEED_PICK, c as u64) >> 54) as usize];
            for (s, slice) in acc.iter_mut().enumerate().take(slices) {
                let group = |k: usize| (LANES * c + w * s + k) as u64;
                let words = |stream: u64| V::words(|k| splitmix64(SEED_SIGNS, 2 * group(k) + stream) as i64);
                let (delta, tau) = (words(0), words(1));
                for a in 0..8 {
                    let start = CHUNK * c + 64 * a;
                    let mut v = [V::zero(); 8];
                    let whole = start + 64 <= n;
                    if start >= n {
                        // Past the end: +0.0 for the sketch, nothing for the stats.
                    } else {
                        match bytes.get(start * B..(start + 64) * B) {
                            Some(run) if f32_le => {
                                for (j, x) in v.iter_mut().enumerate() {
                                    let e = (8 * j + w * s) * B;
                                    *x = V::load_f32(run[e..e + 4 * w].as_ptr());
                                }
                            }
                            _ => {
                                for (j, x) in v.iter_mut().enumerate() {
                                    let i = start + 8 * j + w * s;
                                    *x = V::from_fn(|k| at(i + k));
                                    if STATS && !whole {
                                        nonfinite |= (i..i + w).any(|e| e < n && !at(e).is_finite());
                                    }
                                }
                            }
                        }
                        for x in v.iter_mut() {
                            // x - x is NaN exactly for NaN and ±Inf (and past the end), which count as +0.0.
                            let z = V::sub(*x, *x);
                            if STATS {
                                // min/max give their second operand when the first is NaN: x + z is NaN
                                // exactly where x is not finite.
                                let xn = V::add(*x, z);
                                lo = V::min(xn, lo);
                                hi = V::max(xn, hi);
                            }
                            let (kept, all_finite) = V::keep_finite(*x, z);
                            *x = kept;
                            if STATS {
                                nonfinite |= whole && !all_finite;
                                // Adding +0.0 for a non-finite element can only turn a -0.0 lane sum into
                                // +0.0; every non-zero result is the same, and a zero result is written +0.
                                sum[s] = V::add(sum[s], *x);
                                sq[s] = V::add(sq[s], V::mul(*x, *x));
                            }
                        }
                    }
                    for (j, x) in v.iter_mut().enumerate() {
                        *x = V::negate_where(*x, delta, (8 * a + j) as i32);
                    }
                    three_stages(&mut v);
                    y[8 * a..8 * a + 8].copy_from_slice(&v);
                    between();
                }
                for a in 0..8 {
                    let mut v = [V::zero(); 8];
                    for (b, x) in v.iter_mut().enumerate() {
                        *x = y[a + 8 * b];
                    }
                    three_stages(&mut v);
                    for (b, x) in v.iter().enumerate() {
                        let row = &mut slice[pick[a + 8 * b] as usize];
                        *row = V::add(*row, V::negate_where(*x, tau, (a + 8 * b) as i32));
                    }
                    between();
                }
            }
        }
        let mut by_lane = [[0.0f64; ROWS]; LANES];
        let mut stored = [0.0f64; LANES];
        for (s, slice) in acc.iter().enumerate().take(slices) {
            for (r, v) in slice.iter().enumerate() {
                V::store(*v, &mut stored);
                for k in 0..w {
                    by_lane[w * s + k][r] = stored[k];
                }
            }
        }
        let rows = finish(|q, row| by_lane[q][row], t);
        if !STATS {
            return (rows, None);
        }
        let mut totals =
            Totals { sum: [0.0; LANES], sq: [0.0; LANES], lo: f64::INFINITY, hi: f64::NEG_INFINITY, nonfinite };
        for s in 0..slices {
            V::store(sum[s], &mut totals.sum[w * s..]);
            V::store(sq[s], &mut totals.sq[w * s..]);
        }
        let (mut los, mut his) = ([0.0f64; LANES], [0.0f64; LANES]);
        V::store(lo, &mut los);
        V::store(hi, &mut his);
        for (l, h) in los.into_iter().zip(his).take(w) {
            totals.lo = if l < totals.lo { l } else { totals.lo };
            totals.hi = if h > totals.hi { h } else { totals.hi };
        }
        (rows, Some(totals))
    }
}

type Lanes = [f64; WIDTH];

/// Negates lane k of `v` where bit `bit` of `words[k]` is set (a sign flip, exact).
#[inline(always)]
fn negate_where(v: &mut Lanes, words: &[u64; WIDTH], bit: usize) {
    for (x, w) in v.iter_mut().zip(words) {
        *x = f64::from_bits(x.to_bits() ^ ((w >> bit) << 63));
    }
}

#[inline(always)]
fn butterfly(v: &mut [Lanes; 8], a: usize, b: usize) {
    let (x, y) = (v[a], v[b]);
    v[a] = std::array::from_fn(|k| x[k] + y[k]);
    v[b] = std::array::from_fn(|k| x[k] - y[k]);
}

/// Stages h = 1, 2, 4 over v (or 8, 16, 32 when v holds every 8th position).
#[inline(always)]
fn three_stages(v: &mut [Lanes; 8]) {
    for h in [1, 2, 4] {
        for j in 0..8 {
            if j & h == 0 {
                butterfly(v, j, j + h);
            }
        }
    }
}

/// A NaN or an infinity counts as +0.0.
#[inline(always)]
fn finite_or_zero(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

#[inline(always)]
fn run_portable<const B: usize>(bytes: &[u8], widen: impl Fn([u8; B]) -> f64) -> [f32; ROWS] {
    let t = tables();
    let n = bytes.len() / B;
    let at = |i: usize| -> f64 {
        match bytes.get(i * B..i * B + B) {
            Some(b) => finite_or_zero(widen(b.try_into().unwrap_or([0; B]))),
            None => 0.0,
        }
    };
    let mut acc = [[[0.0f64; WIDTH]; ROWS]; SLICES];
    let mut y = [[0.0f64; WIDTH]; ROWS];
    for c in 0..n.div_ceil(CHUNK) {
        let pick = &t.rows[(splitmix64(SEED_PICK, c as u64) >> 54) as usize];
        for (s, slice) in acc.iter_mut().enumerate() {
            let mut delta = [0u64; WIDTH];
            let mut tau = [0u64; WIDTH];
            for k in 0..WIDTH {
                let group = (LANES * c + WIDTH * s + k) as u64;
                delta[k] = splitmix64(SEED_SIGNS, 2 * group);
                tau[k] = splitmix64(SEED_SIGNS, 2 * group + 1);
            }
            // Signs delta, then stages 1, 2, 4 on each run of 8 positions.
            for a in 0..8 {
                let start = CHUNK * c + 64 * a;
                let mut v = [[0.0f64; WIDTH]; 8];
                if let Some(run) = bytes.get(start * B..(start + 64) * B) {
                    for (j, lanes) in v.iter_mut().enumerate() {
                        for (k, x) in lanes.iter_mut().enumerate() {
                            let e = (8 * j + WIDTH * s + k) * B;
                            *x = finite_or_zero(widen(run[e..e + B].try_into().unwrap_or([0; B])));
                        }
                    }
                } else {
                    for (j, lanes) in v.iter_mut().enumerate() {
                        for (k, x) in lanes.iter_mut().enumerate() {
                            *x = at(start + 8 * j + WIDTH * s + k);
                        }
                    }
                }
                for (j, lanes) in v.iter_mut().enumerate() {
                    negate_where(lanes, &delta, 8 * a + j);
                }
                three_stages(&mut v);
                y[8 * a..8 * a + 8].copy_from_slice(&v);
            }
            // Stages 8, 16, 32 on every 8th position, then signs tau, into the picked accumulator rows.
            for a in 0..8 {
                let mut v = [[0.0f64; WIDTH]; 8];
                for (b, lanes) in v.iter_mut().enumerate() {
                    *lanes = y[a + 8 * b];
                }
                three_stages(&mut v);
                for (b, lanes) in v.iter_mut().enumerate() {
                    negate_where(lanes, &tau, a + 8 * b);
                    for (sum, x) in slice[pick[a + 8 * b] as usize].iter_mut().zip(lanes.iter()) {
                        *sum += x;
                    }
                }
            }
        }
    }
    finish(|q, row| acc[q / WIDTH][row][q % WIDTH], t)
}

/// Row t of the sketch: row `lanes[q][t]` of each lane q, combined as
/// ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)), rounded to the nearest f32, ties to
/// even (beyond f32's range, ±Inf); a zero as +0.
fn finish(lane_row: impl Fn(usize, usize) -> f64, t: &Tables) -> [f32; ROWS] {
    let mut out = [0.0f32; ROWS];
    for (row, o) in out.iter_mut().enumerate() {
        let mut l = [0.0f64; LANES];
        for (q, x) in l.iter_mut().enumerate() {
            *x = lane_row(q, t.lanes[q][row] as usize);
        }
        let f = (((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))) as f32;
        *o = if f == 0.0 { 0.0 } else { f };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn vectors() -> Value {
        let path =
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/encoding/sketch_vectors.json");
        serde_json::from_str(&std::fs::read_to_string(&path).expect("sketch vectors")).expect("sketch vectors JSON")
    }

    /// The inputs of `generate` cases, built as tests/encoding/sketch_vectors.py describes.
    fn generated(spec: &Value, dtype: DType, numel: usize) -> Vec<u8> {
        let seed = spec["seed"].as_u64().unwrap();
        (0..numel as u64)
            .flat_map(|i| {
                let word = splitmix64(seed, i);
                match dtype {
                    DType::I32 => ((word >> 32) as u32).to_le_bytes().to_vec(),
                    _ => {
                        let scale = spec["scale"].as_f64().unwrap();
                        let value = (word >> 11) as f64 * 2f64.powi(-53) * 2.0 * scale - scale;
                        match dtype {
                            DType::F32 => (value as f32).to_le_bytes().to_vec(),
                            _ => value.to_le_bytes().to_vec(),
                        }
                    }
                }
            })
            .collect()
    }

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
    }

    fn dtype(name: &str) -> DType {
        DType::ALL.into_iter().find(|d| d.name() == name).unwrap()
    }

    #[test]
    fn every_sketch_vector_is_reproduced_bit_for_bit_at_every_width() {
        let doc = vectors();
        let cases = doc["cases"].as_array().unwrap();
        assert!(cases.len() > 20);
        for case in cases {
            let dt = dtype(case["dtype"].as_str().unwrap());
            let numel = case["numel"].as_u64().unwrap() as usize;
            let data = match case.get("data_hex") {
                Some(text) => hex(text.as_str().unwrap()),
                None => generated(&case["generate"], dt, numel),
            };
            let expected: Vec<String> =
                case["expected_bits"].as_array().unwrap().iter().map(|b| b.as_str().unwrap().to_string()).collect();
            let bits = |rows: [f32; ROWS]| rows.iter().map(|r| format!("{:08x}", r.to_bits())).collect::<Vec<_>>();
            let name = case["name"].as_str().unwrap();
            assert_eq!(bits(compute(dt, &data)), expected, "{name}");
            for widest in [Isa::Avx512, Isa::Avx2, Isa::Baseline] {
                assert_eq!(bits(compute_with_stats_on(widest, dt, &data, || {}).0), expected, "{name}, {widest:?}");
            }
        }
    }

    #[test]
    fn the_stats_from_the_sketchs_pass_are_the_stats_alone_at_every_width() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for dt in DType::ALL {
            for numel in [0usize, 1, 7, 8, 9, 63, 64, 65, 511, 512, 513, 896, 1000, 4096, 5000] {
                for specials in [false, true] {
                    let bytes: Vec<u8> = (0..numel)
                        .flat_map(|_| {
                            let word = next();
                            let value = (word >> 11) as f64 * 2f64.powi(-53) * 8.0 - 4.0;
                            let value = match word % 64 {
                                0 if specials => f64::NAN,
                                1 if specials => f64::INFINITY,
                                2 if specials => f64::NEG_INFINITY,
                                3 if specials => -0.0,
                                _ => value,
                            };
                            match dt {
                                DType::F32 => (value as f32).to_le_bytes().to_vec(),
                                DType::F64 => value.to_le_bytes().to_vec(),
                                _ => word.to_le_bytes()[..dt.size()].to_vec(),
                            }
                        })
                        .collect();
                    let alone = stats::compute(dt, &bytes);
                    let bits = |s: Stats| [s.min, s.max, s.mean, s.rms, s.abs_max].map(|v| v.map(f64::to_bits));
                    let sketch = compute(dt, &bytes).map(f32::to_bits);
                    // Every kernel width this machine has gives the same bits.
                    for widest in [Isa::Avx512, Isa::Avx2, Isa::Baseline] {
                        let (rows, fused) = compute_with_stats_on(widest, dt, &bytes, || {});
                        let name = format!("{} x {numel}, specials {specials}, {widest:?}", dt.name());
                        assert_eq!(bits(fused), bits(alone), "{name}");
                        assert_eq!((fused.nan_count, fused.inf_count), (alone.nan_count, alone.inf_count), "{name}");
                        assert_eq!(rows.map(f32::to_bits), sketch, "{name}");
                    }
                }
            }
        }
    }

    #[test]
    fn one_element_difference_gives_rows_of_exactly_its_size() {
        let a: Vec<f32> = (0..3000).map(|i| (i % 13) as f32 * 0.25 - 1.0).collect();
        let mut d = vec![0.0f32; 3000];
        d[1234] = 0.5;
        let bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let sd = compute(DType::F32, &bytes(&d));
        assert!(sd.iter().all(|r| r.abs() == 0.5));
        let b: Vec<f32> = a.iter().zip(&d).map(|(x, y)| x + y).collect();
        let (sa, sb) = (compute(DType::F32, &bytes(&a)), compute(DType::F32, &bytes(&b)));
        for r in 0..ROWS {
            assert!((sb[r] - sa[r] - sd[r]).abs() < 1e-5);
        }
    }
}
