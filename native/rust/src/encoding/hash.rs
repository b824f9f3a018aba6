//! BLAKE3 of a tensor's bytes: the `blake3` crate, except for inputs of three whole chunks up to four
//! (3,072 to 4,095 bytes; a hidden-state row of 896 f32 is 3,584).
//!
//! The crate hashes whole chunks 16, 8 or 4 at a time and the ones left over one after the other: three
//! chunks and a partial one are four chains of 16 compressions in a row (3.2 us, against 1.4 us for four
//! whole chunks). Here those chunks are compressed side by side, each chunk's state as four rows of four
//! words in one 128-bit lane (the BLAKE3 reference's blake3_sse41.c rounds), two chunks to an AVX2
//! vector and two vectors, as the C++ header's rows_kernel.inc does; the crate's `hazmat` functions join
//! the chaining values into the root. About 2.1-2.2 us for any two to four chunks, so it is used only
//! where the crate is slower (measured in turn, AMD EPYC with AVX-512: 3,584 bytes 2.2 against 3.2 us;
//! 2,048 bytes 2.0 against 1.3 us).

/// The hash of `bytes`, the same bits as `blake3::hash`.
pub(crate) fn blake3(bytes: &[u8]) -> [u8; 32] {
    #[cfg(target_arch = "x86_64")]
    if (3 * CHUNK_LEN..ROWS * CHUNK_LEN).contains(&bytes.len()) && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        let cvs = unsafe { rows::chunk_cvs(bytes) };
        return join(&cvs[..bytes.len().div_ceil(CHUNK_LEN)]);
    }
    *blake3::hash(bytes).as_bytes()
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

    /// One row of four chunks: chunks 0 and 1 in the first vector, 2 and 3 in the second.
    #[derive(Clone, Copy)]
    struct V(__m256i, __m256i);

    macro_rules! each {
        ($f:ident :: < $imm:block >, $a:expr, $b:expr) => {
            V($f::<$imm>($a.0, $b.0), $f::<$imm>($a.1, $b.1))
        };
        ($f:ident :: < $imm:block >, $a:expr) => {
            V($f::<$imm>($a.0), $f::<$imm>($a.1))
        };
        ($f:ident, $a:expr, $b:expr) => {
            V($f($a.0, $b.0), $f($a.1, $b.1))
        };
        ($f:ident, $a:expr) => {
            V($f($a.0), $f($a.1))
        };
    }

    /// `_mm_shuffle_ps` on words, within each 128-bit lane.
    #[inline(always)]
    unsafe fn shuffle2<const IMM: i32>(a: __m256i, b: __m256i) -> __m256i {
        _mm256_castps_si256(_mm256_shuffle_ps::<IMM>(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b)))
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
    unsafe fn g(r: &mut [V; 4], m: V, first: bool) {
        r[0] = each!(_mm256_add_epi32, each!(_mm256_add_epi32, r[0], m), r[1]);
        let d = each!(_mm256_xor_si256, r[3], r[0]);
        r[3] = if first { each!(rot16, d) } else { each!(rot8, d) };
        r[2] = each!(_mm256_add_epi32, r[2], r[3]);
        let b = each!(_mm256_xor_si256, r[1], r[2]);
        r[1] = if first { each!(rot12, b) } else { each!(rot7, b) };
    }

    /// Diagonals into columns and back, as the reference does it (rows 0, 2 and 3 move; row 1 stays).
    #[inline(always)]
    unsafe fn diagonalize(r: &mut [V; 4]) {
        r[0] = each!(_mm256_shuffle_epi32::<{ mm_shuffle(2, 1, 0, 3) }>, r[0]);
        r[3] = each!(_mm256_shuffle_epi32::<{ mm_shuffle(1, 0, 3, 2) }>, r[3]);
        r[2] = each!(_mm256_shuffle_epi32::<{ mm_shuffle(0, 3, 2, 1) }>, r[2]);
    }
    #[inline(always)]
    unsafe fn undiagonalize(r: &mut [V; 4]) {
        r[0] = each!(_mm256_shuffle_epi32::<{ mm_shuffle(0, 3, 2, 1) }>, r[0]);
        r[3] = each!(_mm256_shuffle_epi32::<{ mm_shuffle(1, 0, 3, 2) }>, r[3]);
        r[2] = each!(_mm256_shuffle_epi32::<{ mm_shuffle(2, 1, 0, 3) }>, r[2]);
    }

    /// One block of each chunk: `cv` holds words 0-3 and 4-7 of each chaining value, `m` words 0-3, 4-7,
    /// 8-11 and 12-15 of each block, `r3` each chunk's counter, block length and flags.
    #[inline(always)]
    unsafe fn compress(cv: &mut [V; 2], m: [V; 4], r3: V) {
        let iv = _mm256_broadcastsi128_si256(_mm_loadu_si128(IV.as_ptr().cast()));
        let mut r = [cv[0], cv[1], V(iv, iv), r3];
        let [m0, m1, m2, m3] = m;
        let mut t0 = each!(shuffle2::<{ mm_shuffle(2, 0, 2, 0) }>, m0, m1);
        g(&mut r, t0, true);
        let mut t1 = each!(shuffle2::<{ mm_shuffle(3, 1, 3, 1) }>, m0, m1);
        g(&mut r, t1, false);
        diagonalize(&mut r);
        let mut t2 = each!(shuffle2::<{ mm_shuffle(2, 0, 2, 0) }>, m2, m3);
        t2 = each!(_mm256_shuffle_epi32::<{ mm_shuffle(2, 1, 0, 3) }>, t2);
        g(&mut r, t2, true);
        let mut t3 = each!(shuffle2::<{ mm_shuffle(3, 1, 3, 1) }>, m2, m3);
        t3 = each!(_mm256_shuffle_epi32::<{ mm_shuffle(2, 1, 0, 3) }>, t3);
        g(&mut r, t3, false);
        undiagonalize(&mut r);
        for _ in 1..7 {
            let (m0, m1, m2, m3) = (t0, t1, t2, t3);
            t0 = each!(shuffle2::<{ mm_shuffle(3, 1, 1, 2) }>, m0, m1);
            t0 = each!(_mm256_shuffle_epi32::<{ mm_shuffle(0, 3, 2, 1) }>, t0);
            g(&mut r, t0, true);
            let lo = each!(_mm256_shuffle_epi32::<{ mm_shuffle(0, 0, 3, 3) }>, m0);
            let hi = each!(shuffle2::<{ mm_shuffle(3, 3, 2, 2) }>, m2, m3);
            t1 = each!(_mm256_blend_epi32::<{ 0b1010_1010 }>, lo, hi);
            g(&mut r, t1, false);
            diagonalize(&mut r);
            t2 = each!(_mm256_blend_epi32::<{ 0b1000_1000 }>, each!(_mm256_unpacklo_epi64, m3, m1), m2);
            t2 = each!(_mm256_shuffle_epi32::<{ mm_shuffle(1, 3, 2, 0) }>, t2);
            g(&mut r, t2, true);
            t3 = each!(_mm256_unpacklo_epi32, m2, each!(_mm256_unpackhi_epi32, m1, m3));
            t3 = each!(_mm256_shuffle_epi32::<{ mm_shuffle(0, 1, 3, 2) }>, t3);
            g(&mut r, t3, false);
            undiagonalize(&mut r);
        }
        cv[0] = each!(_mm256_xor_si256, r[0], r[2]);
        cv[1] = each!(_mm256_xor_si256, r[1], r[3]);
    }

    #[inline(always)]
    unsafe fn two(a: &[u8], b: &[u8]) -> __m256i {
        _mm256_inserti128_si256::<1>(
            _mm256_castsi128_si256(_mm_loadu_si128(a.as_ptr().cast())),
            _mm_loadu_si128(b.as_ptr().cast()),
        )
    }

    /// The chaining values of the chunks of `bytes` (1,025 to 4,096 bytes), as non-root nodes.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn chunk_cvs(bytes: &[u8]) -> [[u8; 32]; ROWS] {
        let chunks = bytes.len().div_ceil(CHUNK_LEN);
        let last_len = bytes.len() - (chunks - 1) * CHUNK_LEN;
        let last_blocks = last_len.div_ceil(BLOCK_LEN);
        // Each chunk's blocks, the last one zero-padded; a chunk whose blocks are done compresses zeros,
        // and its result is taken at its last block.
        let mut padded = [[0u8; BLOCK_LEN]; ROWS];
        let zeros = [0u8; BLOCK_LEN];
        let blocks_of = |l: usize| {
            if l + 1 < chunks {
                CHUNK_LEN / BLOCK_LEN
            } else if l + 1 == chunks {
                last_blocks
            } else {
                0
            }
        };
        for (l, pad) in padded.iter_mut().enumerate().take(chunks) {
            let start = l * CHUNK_LEN + (blocks_of(l) - 1) * BLOCK_LEN;
            let end = bytes.len().min(start + BLOCK_LEN);
            pad[..end - start].copy_from_slice(&bytes[start..end]);
        }
        let iv = [
            _mm256_broadcastsi128_si256(_mm_loadu_si128(IV.as_ptr().cast())),
            _mm256_broadcastsi128_si256(_mm_loadu_si128(IV[4..].as_ptr().cast())),
        ];
        let mut cv = [V(iv[0], iv[0]), V(iv[1], iv[1])];
        let mut out = [[0u8; 32]; ROWS];
        let take = |cv: &[V; 2], l: usize, out: &mut [[u8; 32]; ROWS]| {
            let mut words = [[0u32; 8]; 2];
            let half = |v: V| if l < 2 { v.0 } else { v.1 };
            _mm256_storeu_si256(words[0].as_mut_ptr().cast(), half(cv[0]));
            _mm256_storeu_si256(words[1].as_mut_ptr().cast(), half(cv[1]));
            let lane = 4 * (l % 2);
            for i in 0..4 {
                out[l][4 * i..4 * i + 4].copy_from_slice(&words[0][lane + i].to_le_bytes());
                out[l][16 + 4 * i..16 + 4 * i + 4].copy_from_slice(&words[1][lane + i].to_le_bytes());
            }
        };
        let steps = if chunks > 1 { CHUNK_LEN / BLOCK_LEN } else { last_blocks };
        for b in 0..steps {
            let mut row3 = [0u32; 16];
            let mut block: [&[u8]; ROWS] = [&zeros; ROWS];
            for (l, slot) in block.iter_mut().enumerate() {
                let n = blocks_of(l);
                let last = b + 1 == n;
                if b < n {
                    *slot = if last { &padded[l] } else { &bytes[l * CHUNK_LEN + b * BLOCK_LEN..][..BLOCK_LEN] };
                }
                row3[4 * l] = l as u32; // the chunk's counter: a hash starts at chunk 0
                row3[4 * l + 2] = if last && l + 1 == chunks {
                    (last_len - (last_blocks - 1) * BLOCK_LEN) as u32
                } else {
                    BLOCK_LEN as u32
                };
                row3[4 * l + 3] = if b == 0 { CHUNK_START } else { 0 } | if last { CHUNK_END } else { 0 };
            }
            let m = [0, 16, 32, 48]
                .map(|at| V(two(&block[0][at..], &block[1][at..]), two(&block[2][at..], &block[3][at..])));
            let r3 = V(_mm256_loadu_si256(row3.as_ptr().cast()), _mm256_loadu_si256(row3[8..].as_ptr().cast()));
            compress(&mut cv, m, r3);
            for l in 0..chunks {
                if b + 1 == blocks_of(l) {
                    take(&cv, l, &mut out);
                }
            }
        }
        out
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

    /// The side-by-side kernel serves 3,072 to 4,095 bytes; it is correct from two chunks on.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_kernel_alone_gives_the_crates_hash_from_two_to_four_chunks() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let bytes: Vec<u8> = (0..4 * super::CHUNK_LEN).map(|i| (i * 17 % 253) as u8).collect();
        for n in super::CHUNK_LEN + 1..=bytes.len() {
            // SAFETY: the CPU has AVX2, checked above.
            let cvs = unsafe { super::rows::chunk_cvs(&bytes[..n]) };
            let root = super::join(&cvs[..n.div_ceil(super::CHUNK_LEN)]);
            assert_eq!(root, *blake3::hash(&bytes[..n]).as_bytes(), "{n} bytes");
        }
    }
}
