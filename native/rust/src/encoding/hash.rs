//! BLAKE3 of a tensor's bytes: the `blake3` crate, except for inputs of three whole chunks up to four
//! (3,072 to 4,095 bytes; a hidden-state row of 896 f32 is 3,584).
//!
//! The crate hashes whole chunks 16, 8 or 4 at a time and the ones left over one after the other: three
//! chunks and a partial one are four chains of 16 compressions in a row (3.2 us, against 1.4 us for four
//! whole chunks). Here those chunks are compressed side by side, each chunk's state as four rows of four
//! words in one 128-bit lane (the BLAKE3 reference's blake3_sse41.c rounds): all four chunks in one
//! AVX-512 vector (Rust 1.89 or later: build.rs), else two to an AVX2 vector and two vectors, as the
//! C++ header's rows_kernel.inc does; the crate's `hazmat` functions join the chaining values into the
//! root. With AVX2, about 2.1-2.2 us for any two to four chunks, so the kernels are used only where
//! the crate is slower (measured in turn, AMD EPYC with AVX-512: 3,584 bytes 2.2 against 3.2 us;
//! 2,048 bytes 2.0 against 1.3 us); AVX-512 takes a 896-f32 summary record from 4.35 to 3.7 us, with
//! the sketch's AVX-512 loop (docs/rust.md).

/// The hash of `bytes`, the same bits as `blake3::hash`.
#[cfg(test)]
pub(crate) fn blake3(bytes: &[u8]) -> [u8; 32] {
    Stepped::new(bytes).finish()
}

/// The hash of `bytes`, its side-by-side chunks (above) compressed a block at a time: `step` does the
/// next block of each and says whether there was one, `finish` does what is left and gives the hash.
/// Each block is a chain of dependent instructions that leaves most of the core idle, so a caller with
/// independent work (the digest's sketch) steps between its own. Inputs the crate hashes take no steps.
pub(crate) struct Stepped<'b> {
    bytes: &'b [u8],
    #[cfg(target_arch = "x86_64")]
    rows: Option<(rows::Rows<'b>, Kernel)>,
}

/// The widest side-by-side kernel the CPU (and ORCHLOG_ISA) allows.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
enum Kernel {
    Avx2,
    #[cfg(orchlog_avx512)]
    Avx512,
}

impl<'b> Stepped<'b> {
    pub(crate) fn new(bytes: &'b [u8]) -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            let side_by_side = (3 * CHUNK_LEN..ROWS * CHUNK_LEN).contains(&bytes.len());
            let rows = if side_by_side { kernel().map(|k| (rows::Rows::new(bytes), k)) } else { None };
            Stepped { bytes, rows }
        }
        #[cfg(not(target_arch = "x86_64"))]
        Stepped { bytes }
    }

    pub(crate) fn step(&mut self) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Some((rows, kernel)) = &mut self.rows {
            if rows.done() {
                return false;
            }
            // SAFETY: the CPU has the kernel's instruction set (kernel()).
            unsafe {
                match kernel {
                    Kernel::Avx2 => rows.step_avx2(),
                    #[cfg(orchlog_avx512)]
                    Kernel::Avx512 => rows.step_avx512(),
                }
            }
            return true;
        }
        false
    }

    pub(crate) fn finish(self) -> [u8; 32] {
        #[cfg(target_arch = "x86_64")]
        if let Some((mut rows, kernel)) = self.rows {
            // SAFETY: as in step.
            unsafe {
                match kernel {
                    Kernel::Avx2 => rows.finish_avx2(),
                    #[cfg(orchlog_avx512)]
                    Kernel::Avx512 => rows.finish_avx512(),
                }
            }
            return join(&rows.out[..self.bytes.len().div_ceil(CHUNK_LEN)]);
        }
        *blake3::hash(self.bytes).as_bytes()
    }
}

#[cfg(target_arch = "x86_64")]
fn kernel() -> Option<Kernel> {
    use crate::encoding::isa::{allowed, Isa};
    #[cfg(orchlog_avx512)]
    if allowed(Isa::Avx512) {
        return Some(Kernel::Avx512);
    }
    allowed(Isa::Avx2).then_some(Kernel::Avx2)
}

const CHUNK_LEN: usize = 1024;
/// Chunks hashed side by side.
const ROWS: usize = 4;

/// The root over two to four chunks' chaining values: the tree is left-complete, so three chunks join
/// as ((0, 1), 2).
fn join(cvs: &[[u8; 32]]) -> [u8; 32] {
    use blake3::hazmat::{merge_subtrees_non_root, merge_subtrees_root, Mode};
    let (left, right) = match cvs {
        [a, b] => (*a, *b),
        [a, b, c] => (merge_subtrees_non_root(a, b, Mode::Hash), *c),
        [a, b, c, d] => (merge_subtrees_non_root(a, b, Mode::Hash), merge_subtrees_non_root(c, d, Mode::Hash)),
        _ => unreachable!("two to four chunks"),
    };
    *merge_subtrees_root(&left, &right, Mode::Hash).as_bytes()
}

#[cfg(target_arch = "x86_64")]
mod rows {
    use super::{CHUNK_LEN, ROWS};
    use std::arch::x86_64::*;

    const BLOCK_LEN: usize = 64;

    /// `_MM_SHUFFLE(z, y, x, w)` (not a stable const fn).
    const fn mm_shuffle(z: i32, y: i32, x: i32, w: i32) -> i32 {
        (z << 6) | (y << 4) | (x << 2) | w
    }
    const IV: [u32; 8] =
        [0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19];
    const CHUNK_START: u32 = 1;
    const CHUNK_END: u32 = 2;

    /// One row of the state of each of four chunks, one 128-bit lane per chunk, and the operations the
    /// rounds need, every one within each lane (the reference's blake3_sse41.c, four chunks wide).
    pub(super) trait Row: Copy {
        /// Four words in every lane.
        unsafe fn lanes4(words: &[u32]) -> Self;
        /// 16 bytes of each of four blocks, from `at`.
        unsafe fn load_lanes(blocks: &[&[u8]; ROWS], at: usize) -> Self;
        unsafe fn load(words: &[u32; 16]) -> Self;
        unsafe fn store(v: Self) -> [u32; 16];
        unsafe fn add(a: Self, b: Self) -> Self;
        unsafe fn xor(a: Self, b: Self) -> Self;
        unsafe fn ror16(a: Self) -> Self;
        unsafe fn ror12(a: Self) -> Self;
        unsafe fn ror8(a: Self) -> Self;
        unsafe fn ror7(a: Self) -> Self;
        /// `_mm_shuffle_epi32`.
        unsafe fn shuffle<const IMM: i32>(a: Self) -> Self;
        /// `_mm_shuffle_ps` on words.
        unsafe fn shuffle2<const IMM: i32>(a: Self, b: Self) -> Self;
        /// Words 1 and 3 of each lane from b (`_mm_blend_epi16` with 0xCC).
        unsafe fn blend_1010(a: Self, b: Self) -> Self;
        /// Word 3 of each lane from b (0xC0).
        unsafe fn blend_1000(a: Self, b: Self) -> Self;
        unsafe fn unpacklo64(a: Self, b: Self) -> Self;
        unsafe fn unpacklo32(a: Self, b: Self) -> Self;
        unsafe fn unpackhi32(a: Self, b: Self) -> Self;
    }

    /// AVX2: chunks 0 and 1 in the first vector, 2 and 3 in the second.
    #[derive(Clone, Copy)]
    pub(super) struct Avx2(__m256i, __m256i);

    macro_rules! each {
        ($f:ident :: < $imm:ident >, $a:expr, $b:expr) => {
            Avx2($f::<$imm>($a.0, $b.0), $f::<$imm>($a.1, $b.1))
        };
        ($f:ident :: < $imm:ident >, $a:expr) => {
            Avx2($f::<$imm>($a.0), $f::<$imm>($a.1))
        };
        ($f:ident :: < $imm:block >, $a:expr, $b:expr) => {
            Avx2($f::<$imm>($a.0, $b.0), $f::<$imm>($a.1, $b.1))
        };
        ($f:ident :: < $imm:block >, $a:expr) => {
            Avx2($f::<$imm>($a.0), $f::<$imm>($a.1))
        };
        ($f:ident, $a:expr, $b:expr) => {
            Avx2($f($a.0, $b.0), $f($a.1, $b.1))
        };
        ($f:ident, $a:expr) => {
            Avx2($f($a.0), $f($a.1))
        };
    }

    /// Byte i of each word of the result is byte (i + `bytes`) mod 4 of the word: a rotation right by
    /// 8 x `bytes` bits, as one byte shuffle.
    const fn byte_rotation(bytes: usize) -> [u8; 32] {
        let mut mask = [0u8; 32];
        let mut i = 0;
        while i < 32 {
            mask[i] = ((i & !3) | ((i + bytes) & 3)) as u8;
            i += 1;
        }
        mask
    }
    const ROT16: [u8; 32] = byte_rotation(2);
    const ROT8: [u8; 32] = byte_rotation(1);

    #[inline(always)]
    unsafe fn rot16(x: __m256i) -> __m256i {
        _mm256_shuffle_epi8(x, _mm256_loadu_si256(ROT16.as_ptr().cast()))
    }
    #[inline(always)]
    unsafe fn rot8(x: __m256i) -> __m256i {
        _mm256_shuffle_epi8(x, _mm256_loadu_si256(ROT8.as_ptr().cast()))
    }
    #[inline(always)]
    unsafe fn rot12(x: __m256i) -> __m256i {
        _mm256_or_si256(_mm256_srli_epi32::<12>(x), _mm256_slli_epi32::<20>(x))
    }
    #[inline(always)]
    unsafe fn rot7(x: __m256i) -> __m256i {
        _mm256_or_si256(_mm256_srli_epi32::<7>(x), _mm256_slli_epi32::<25>(x))
    }
    #[inline(always)]
    unsafe fn shuffle_ps256<const IMM: i32>(a: __m256i, b: __m256i) -> __m256i {
        _mm256_castps_si256(_mm256_shuffle_ps::<IMM>(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b)))
    }
    #[inline(always)]
    unsafe fn two(a: &[u8], b: &[u8]) -> __m256i {
        _mm256_inserti128_si256::<1>(
            _mm256_castsi128_si256(_mm_loadu_si128(a.as_ptr().cast())),
            _mm_loadu_si128(b.as_ptr().cast()),
        )
    }

    impl Row for Avx2 {
        #[inline(always)]
        unsafe fn lanes4(words: &[u32]) -> Self {
            let v = _mm256_broadcastsi128_si256(_mm_loadu_si128(words[..4].as_ptr().cast()));
            Avx2(v, v)
        }
        #[inline(always)]
        unsafe fn load_lanes(blocks: &[&[u8]; ROWS], at: usize) -> Self {
            Avx2(two(&blocks[0][at..], &blocks[1][at..]), two(&blocks[2][at..], &blocks[3][at..]))
        }
        #[inline(always)]
        unsafe fn load(words: &[u32; 16]) -> Self {
            Avx2(_mm256_loadu_si256(words.as_ptr().cast()), _mm256_loadu_si256(words[8..].as_ptr().cast()))
        }
        #[inline(always)]
        unsafe fn store(v: Self) -> [u32; 16] {
            let mut out = [0u32; 16];
            _mm256_storeu_si256(out.as_mut_ptr().cast(), v.0);
            _mm256_storeu_si256(out[8..].as_mut_ptr().cast(), v.1);
            out
        }
        #[inline(always)]
        unsafe fn add(a: Self, b: Self) -> Self {
            each!(_mm256_add_epi32, a, b)
        }
        #[inline(always)]
        unsafe fn xor(a: Self, b: Self) -> Self {
            each!(_mm256_xor_si256, a, b)
        }
        #[inline(always)]
        unsafe fn ror16(a: Self) -> Self {
            each!(rot16, a)
        }
        #[inline(always)]
        unsafe fn ror12(a: Self) -> Self {
            each!(rot12, a)
        }
        #[inline(always)]
        unsafe fn ror8(a: Self) -> Self {
            each!(rot8, a)
        }
        #[inline(always)]
        unsafe fn ror7(a: Self) -> Self {
            each!(rot7, a)
        }
        #[inline(always)]
        unsafe fn shuffle<const IMM: i32>(a: Self) -> Self {
            each!(_mm256_shuffle_epi32::<IMM>, a)
        }
        #[inline(always)]
        unsafe fn shuffle2<const IMM: i32>(a: Self, b: Self) -> Self {
            each!(shuffle_ps256::<IMM>, a, b)
        }
        #[inline(always)]
        unsafe fn blend_1010(a: Self, b: Self) -> Self {
            each!(_mm256_blend_epi32::<{ 0b1010_1010 }>, a, b)
        }
        #[inline(always)]
        unsafe fn blend_1000(a: Self, b: Self) -> Self {
            each!(_mm256_blend_epi32::<{ 0b1000_1000 }>, a, b)
        }
        #[inline(always)]
        unsafe fn unpacklo64(a: Self, b: Self) -> Self {
            each!(_mm256_unpacklo_epi64, a, b)
        }
        #[inline(always)]
        unsafe fn unpacklo32(a: Self, b: Self) -> Self {
            each!(_mm256_unpacklo_epi32, a, b)
        }
        #[inline(always)]
        unsafe fn unpackhi32(a: Self, b: Self) -> Self {
            each!(_mm256_unpackhi_epi32, a, b)
        }
    }

    /// AVX-512: the four chunks in one vector, rotations in one instruction each.
    #[cfg(orchlog_avx512)]
    #[derive(Clone, Copy)]
    pub(super) struct Avx512(__m512i);

    // Compiled only by Rust 1.89 or later (build.rs), whatever the crate's rust-version.
    #[cfg(orchlog_avx512)]
    #[allow(clippy::incompatible_msrv)]
    impl Row for Avx512 {
        #[inline(always)]
        unsafe fn lanes4(words: &[u32]) -> Self {
            Avx512(_mm512_broadcast_i32x4(_mm_loadu_si128(words[..4].as_ptr().cast())))
        }
        #[inline(always)]
        unsafe fn load_lanes(blocks: &[&[u8]; ROWS], at: usize) -> Self {
            // No closures here: one would not inherit the caller's target features, and the intrinsics
            // inside it would become calls.
            let v = _mm512_castsi128_si512(_mm_loadu_si128(blocks[0][at..at + 16].as_ptr().cast()));
            let v = _mm512_inserti32x4::<1>(v, _mm_loadu_si128(blocks[1][at..at + 16].as_ptr().cast()));
            let v = _mm512_inserti32x4::<2>(v, _mm_loadu_si128(blocks[2][at..at + 16].as_ptr().cast()));
            Avx512(_mm512_inserti32x4::<3>(v, _mm_loadu_si128(blocks[3][at..at + 16].as_ptr().cast())))
        }
        #[inline(always)]
        unsafe fn load(words: &[u32; 16]) -> Self {
            Avx512(_mm512_loadu_si512(words.as_ptr().cast()))
        }
        #[inline(always)]
        unsafe fn store(v: Self) -> [u32; 16] {
            let mut out = [0u32; 16];
            _mm512_storeu_si512(out.as_mut_ptr().cast(), v.0);
            out
        }
        #[inline(always)]
        unsafe fn add(a: Self, b: Self) -> Self {
            Avx512(_mm512_add_epi32(a.0, b.0))
        }
        #[inline(always)]
        unsafe fn xor(a: Self, b: Self) -> Self {
            Avx512(_mm512_xor_si512(a.0, b.0))
        }
        #[inline(always)]
        unsafe fn ror16(a: Self) -> Self {
            Avx512(_mm512_ror_epi32::<16>(a.0))
        }
        #[inline(always)]
        unsafe fn ror12(a: Self) -> Self {
            Avx512(_mm512_ror_epi32::<12>(a.0))
        }
        #[inline(always)]
        unsafe fn ror8(a: Self) -> Self {
            Avx512(_mm512_ror_epi32::<8>(a.0))
        }
        #[inline(always)]
        unsafe fn ror7(a: Self) -> Self {
            Avx512(_mm512_ror_epi32::<7>(a.0))
        }
        #[inline(always)]
        unsafe fn shuffle<const IMM: i32>(a: Self) -> Self {
            Avx512(_mm512_shuffle_epi32::<IMM>(a.0))
        }
        #[inline(always)]
        unsafe fn shuffle2<const IMM: i32>(a: Self, b: Self) -> Self {
            Avx512(_mm512_castps_si512(_mm512_shuffle_ps::<IMM>(_mm512_castsi512_ps(a.0), _mm512_castsi512_ps(b.0))))
        }
        #[inline(always)]
        unsafe fn blend_1010(a: Self, b: Self) -> Self {
            Avx512(_mm512_mask_blend_epi32(0xAAAA, a.0, b.0))
        }
        #[inline(always)]
        unsafe fn blend_1000(a: Self, b: Self) -> Self {
            Avx512(_mm512_mask_blend_epi32(0x8888, a.0, b.0))
        }
        #[inline(always)]
        unsafe fn unpacklo64(a: Self, b: Self) -> Self {
            Avx512(_mm512_unpacklo_epi64(a.0, b.0))
        }
        #[inline(always)]
        unsafe fn unpacklo32(a: Self, b: Self) -> Self {
            Avx512(_mm512_unpacklo_epi32(a.0, b.0))
        }
        #[inline(always)]
        unsafe fn unpackhi32(a: Self, b: Self) -> Self {
            Avx512(_mm512_unpackhi_epi32(a.0, b.0))
        }
    }

    #[inline(always)]
    unsafe fn g<V: Row>(r: &mut [V; 4], m: V, first: bool) {
        r[0] = V::add(V::add(r[0], m), r[1]);
        let d = V::xor(r[3], r[0]);
        r[3] = if first { V::ror16(d) } else { V::ror8(d) };
        r[2] = V::add(r[2], r[3]);
        let b = V::xor(r[1], r[2]);
        r[1] = if first { V::ror12(b) } else { V::ror7(b) };
    }

    /// Diagonals into columns and back, as the reference does it (rows 0, 2 and 3 move; row 1 stays).
    #[inline(always)]
    unsafe fn diagonalize<V: Row>(r: &mut [V; 4]) {
        r[0] = V::shuffle::<{ mm_shuffle(2, 1, 0, 3) }>(r[0]);
        r[3] = V::shuffle::<{ mm_shuffle(1, 0, 3, 2) }>(r[3]);
        r[2] = V::shuffle::<{ mm_shuffle(0, 3, 2, 1) }>(r[2]);
    }
    #[inline(always)]
    unsafe fn undiagonalize<V: Row>(r: &mut [V; 4]) {
        r[0] = V::shuffle::<{ mm_shuffle(0, 3, 2, 1) }>(r[0]);
        r[3] = V::shuffle::<{ mm_shuffle(1, 0, 3, 2) }>(r[3]);
        r[2] = V::shuffle::<{ mm_shuffle(2, 1, 0, 3) }>(r[2]);
    }

    /// One block of each chunk: `cv` holds words 0-3 and 4-7 of each chaining value, `m` words 0-3, 4-7,
    /// 8-11 and 12-15 of each block, `r3` each chunk's counter, block length and flags.
    #[inline(always)]
    unsafe fn compress<V: Row>(cv: &mut [V; 2], m: [V; 4], r3: V) {
        let mut r = [cv[0], cv[1], V::lanes4(&IV), r3];
        let [m0, m1, m2, m3] = m;
        let mut t0 = V::shuffle2::<{ mm_shuffle(2, 0, 2, 0) }>(m0, m1);
        g(&mut r, t0, true);
        let mut t1 = V::shuffle2::<{ mm_shuffle(3, 1, 3, 1) }>(m0, m1);
        g(&mut r, t1, false);
        diagonalize(&mut r);
        let mut t2 = V::shuffle2::<{ mm_shuffle(2, 0, 2, 0) }>(m2, m3);
        t2 = V::shuffle::<{ mm_shuffle(2, 1, 0, 3) }>(t2);
        g(&mut r, t2, true);
        let mut t3 = V::shuffle2::<{ mm_shuffle(3, 1, 3, 1) }>(m2, m3);
        t3 = V::shuffle::<{ mm_shuffle(2, 1, 0, 3) }>(t3);
        g(&mut r, t3, false);
        undiagonalize(&mut r);
        for _ in 1..7 {
            let (m0, m1, m2, m3) = (t0, t1, t2, t3);
            t0 = V::shuffle2::<{ mm_shuffle(3, 1, 1, 2) }>(m0, m1);
            t0 = V::shuffle::<{ mm_shuffle(0, 3, 2, 1) }>(t0);
            g(&mut r, t0, true);
            let lo = V::shuffle::<{ mm_shuffle(0, 0, 3, 3) }>(m0);
            let hi = V::shuffle2::<{ mm_shuffle(3, 3, 2, 2) }>(m2, m3);
            t1 = V::blend_1010(lo, hi);
            g(&mut r, t1, false);
            diagonalize(&mut r);
            t2 = V::blend_1000(V::unpacklo64(m3, m1), m2);
            t2 = V::shuffle::<{ mm_shuffle(1, 3, 2, 0) }>(t2);
            g(&mut r, t2, true);
            t3 = V::unpacklo32(m2, V::unpackhi32(m1, m3));
            t3 = V::shuffle::<{ mm_shuffle(0, 1, 3, 2) }>(t3);
            g(&mut r, t3, false);
            undiagonalize(&mut r);
        }
        cv[0] = V::xor(r[0], r[2]);
        cv[1] = V::xor(r[1], r[3]);
    }

    /// The chunks of `bytes` (1,025 to 4,096 bytes) between the blocks that compress them side by side:
    /// the chaining values so far (words 0-3 and 4-7 of each chunk, a 128-bit lane each) and, once a
    /// chunk's last block is done, its chaining value as a non-root node.
    pub(super) struct Rows<'b> {
        bytes: &'b [u8],
        chunks: usize,
        last_len: usize,
        last_blocks: usize,
        /// Each chunk's last block, zero-padded.
        padded: [[u8; BLOCK_LEN]; ROWS],
        cv: [[u32; 16]; 2],
        /// The next block; `steps` in all.
        block: usize,
        steps: usize,
        pub(super) out: [[u8; 32]; ROWS],
    }

    impl<'b> Rows<'b> {
        pub(super) fn new(bytes: &'b [u8]) -> Self {
            let chunks = bytes.len().div_ceil(CHUNK_LEN);
            let last_len = bytes.len() - (chunks - 1) * CHUNK_LEN;
            let last_blocks = last_len.div_ceil(BLOCK_LEN);
            let mut rows = Rows {
                bytes,
                chunks,
                last_len,
                last_blocks,
                padded: [[0u8; BLOCK_LEN]; ROWS],
                cv: [[0; 16]; 2],
                block: 0,
                steps: if chunks > 1 { CHUNK_LEN / BLOCK_LEN } else { last_blocks },
                out: [[0u8; 32]; ROWS],
            };
            for l in 0..chunks {
                let start = l * CHUNK_LEN + (rows.blocks_of(l) - 1) * BLOCK_LEN;
                let end = bytes.len().min(start + BLOCK_LEN);
                rows.padded[l][..end - start].copy_from_slice(&bytes[start..end]);
            }
            for (half, words) in rows.cv.iter_mut().enumerate() {
                for lane in words.chunks_exact_mut(4) {
                    lane.copy_from_slice(&IV[4 * half..4 * half + 4]);
                }
            }
            rows
        }

        /// Blocks of chunk `l`; a chunk whose blocks are done compresses zeros, and its result is taken at
        /// its last block.
        fn blocks_of(&self, l: usize) -> usize {
            if l + 1 < self.chunks {
                CHUNK_LEN / BLOCK_LEN
            } else if l + 1 == self.chunks {
                self.last_blocks
            } else {
                0
            }
        }

        pub(super) fn done(&self) -> bool {
            self.block == self.steps
        }

        /// Compresses the next block of every chunk.
        #[inline(always)]
        unsafe fn compress_block<V: Row>(&mut self, cv: &mut [V; 2]) {
            let zeros = [0u8; BLOCK_LEN];
            let b = self.block;
            self.block += 1;
            let mut row3 = [0u32; 16];
            let mut block: [&[u8]; ROWS] = [&zeros; ROWS];
            for (l, slot) in block.iter_mut().enumerate() {
                let n = self.blocks_of(l);
                let last = b + 1 == n;
                if b < n {
                    *slot =
                        if last { &self.padded[l] } else { &self.bytes[l * CHUNK_LEN + b * BLOCK_LEN..][..BLOCK_LEN] };
                }
                row3[4 * l] = l as u32; // the chunk's counter: a hash starts at chunk 0
                row3[4 * l + 2] = if last && l + 1 == self.chunks {
                    (self.last_len - (self.last_blocks - 1) * BLOCK_LEN) as u32
                } else {
                    BLOCK_LEN as u32
                };
                row3[4 * l + 3] = if b == 0 { CHUNK_START } else { 0 } | if last { CHUNK_END } else { 0 };
            }
            let m = [
                V::load_lanes(&block, 0),
                V::load_lanes(&block, 16),
                V::load_lanes(&block, 32),
                V::load_lanes(&block, 48),
            ];
            compress(cv, m, V::load(&row3));
            for l in 0..self.chunks {
                if b + 1 == self.blocks_of(l) {
                    let words = [V::store(cv[0]), V::store(cv[1])];
                    for i in 0..4 {
                        self.out[l][4 * i..4 * i + 4].copy_from_slice(&words[0][4 * l + i].to_le_bytes());
                        self.out[l][16 + 4 * i..16 + 4 * i + 4].copy_from_slice(&words[1][4 * l + i].to_le_bytes());
                    }
                }
            }
        }

        /// One block of every chunk, the chaining values kept in memory between calls.
        #[inline(always)]
        unsafe fn step<V: Row>(&mut self) {
            if self.done() {
                return;
            }
            let mut cv = [V::load(&self.cv[0]), V::load(&self.cv[1])];
            self.compress_block(&mut cv);
            self.cv = [V::store(cv[0]), V::store(cv[1])];
        }

        /// The blocks left, the chaining values in registers.
        #[inline(always)]
        unsafe fn finish<V: Row>(&mut self) {
            let mut cv = [V::load(&self.cv[0]), V::load(&self.cv[1])];
            while !self.done() {
                self.compress_block(&mut cv);
            }
        }

        /// `step` with AVX2 (inlined into the sketch's AVX2 loop, which has the same features).
        #[inline]
        #[target_feature(enable = "avx2")]
        pub(super) unsafe fn step_avx2(&mut self) {
            self.step::<Avx2>()
        }

        /// `finish` with AVX2.
        #[target_feature(enable = "avx2")]
        pub(super) unsafe fn finish_avx2(&mut self) {
            self.finish::<Avx2>()
        }

        /// `step` with AVX-512 (inlined into the sketch's AVX-512 loop).
        #[inline]
        #[cfg(orchlog_avx512)]
        #[allow(clippy::incompatible_msrv)]
        #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
        pub(super) unsafe fn step_avx512(&mut self) {
            self.step::<Avx512>()
        }

        /// `finish` with AVX-512.
        #[cfg(orchlog_avx512)]
        #[allow(clippy::incompatible_msrv)]
        #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
        pub(super) unsafe fn finish_avx512(&mut self) {
            self.finish::<Avx512>()
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_length_up_to_five_chunks_hashes_as_the_crate_does() {
        let bytes: Vec<u8> = (0..5 * super::CHUNK_LEN).map(|i| (i * 31 % 251) as u8).collect();
        for n in 0..=bytes.len() {
            assert_eq!(super::blake3(&bytes[..n]), *blake3::hash(&bytes[..n]).as_bytes(), "{n} bytes");
        }
    }

    /// However often a caller steps it (not at all, part of the way, to the end, past it), the hash is
    /// the crate's.
    #[test]
    fn stepping_any_number_of_times_gives_the_crates_hash() {
        let bytes: Vec<u8> = (0..5 * super::CHUNK_LEN).map(|i| (i * 29 % 241) as u8).collect();
        for n in 0..=bytes.len() {
            for steps in [0, 1, 7, 16, 40] {
                let mut hasher = super::Stepped::new(&bytes[..n]);
                for _ in 0..steps {
                    hasher.step();
                }
                assert_eq!(hasher.finish(), *blake3::hash(&bytes[..n]).as_bytes(), "{n} bytes, {steps} steps");
            }
        }
    }

    /// The side-by-side kernels serve 3,072 to 4,095 bytes; each is correct from two chunks on, stepped
    /// a block at a time or not, and takes a step a block (16 for two chunks or more).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_kernel_alone_gives_the_crates_hash_from_two_to_four_chunks() {
        use super::rows::Rows;
        let bytes: Vec<u8> = (0..4 * super::CHUNK_LEN).map(|i| (i * 17 % 253) as u8).collect();
        use crate::encoding::isa::{allowed, Isa};
        let mut kernels = Vec::new();
        if allowed(Isa::Avx2) {
            kernels.push("avx2");
        }
        #[cfg(orchlog_avx512)]
        if allowed(Isa::Avx512) {
            kernels.push("avx512");
        }
        // SAFETY (both): the CPU has the kernel's instruction set, checked above.
        let step = |name: &str, rows: &mut Rows<'_>| unsafe {
            match name {
                #[cfg(orchlog_avx512)]
                "avx512" => rows.step_avx512(),
                _ => rows.step_avx2(),
            }
        };
        let finish = |name: &str, rows: &mut Rows<'_>| unsafe {
            match name {
                #[cfg(orchlog_avx512)]
                "avx512" => rows.finish_avx512(),
                _ => rows.finish_avx2(),
            }
        };
        for name in kernels {
            for n in super::CHUNK_LEN + 1..=bytes.len() {
                for steps in [0, 3, 16, 20] {
                    let mut rows = Rows::new(&bytes[..n]);
                    let mut taken = 0;
                    for _ in 0..steps {
                        taken += usize::from(!rows.done());
                        step(name, &mut rows);
                    }
                    assert_eq!(taken, steps.min(16), "{name}, {n} bytes, {steps} steps");
                    finish(name, &mut rows);
                    let root = super::join(&rows.out[..n.div_ceil(super::CHUNK_LEN)]);
                    assert_eq!(root, *blake3::hash(&bytes[..n]).as_bytes(), "{name}, {n} bytes, {steps} steps");
                }
            }
        }
    }
}
