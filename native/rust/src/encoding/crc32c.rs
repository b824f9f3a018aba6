//! CRC-32C (Castagnoli: reflected polynomial 0x82F63B78, init and final xor
//! 0xFFFFFFFF; "123456789" gives 0xE3069283), the binary stream's frame
//! checksum (FORMAT.md, "Frame checksum"). x86-64 CPUs with SSE4.2 run the
//! crc32 instruction, picked at run time; other machines slicing-by-8 over a
//! table built once. Both give the same value: it is one function of the bytes.

use std::sync::OnceLock;

/// The CRC of `bytes` continuing from `crc` (0 to start): `update(update(0, a), b)` is the CRC of `a` then `b`.
pub(crate) fn update(crc: u32, bytes: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if crate::encoding::isa::allowed(crate::encoding::isa::Isa::Sse4) {
        // SAFETY: the CPU has SSE4.2 (isa::allowed).
        return !unsafe { sse42(!crc, bytes) };
    }
    !portable(!crc, bytes)
}

fn tables() -> &'static [[u32; 256]; 8] {
    static TABLES: OnceLock<[[u32; 256]; 8]> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut t = [[0u32; 256]; 8];
        for i in 0..256u32 {
            let mut c = i;
            for _ in 0..8 {
                c = (c >> 1) ^ (0x82F6_3B78 & 0u32.wrapping_sub(c & 1));
            }
            t[0][i as usize] = c;
        }
        for i in 0..256 {
            for s in 1..8 {
                t[s][i] = (t[s - 1][i] >> 8) ^ t[0][(t[s - 1][i] & 0xff) as usize];
            }
        }
        t
    })
}

/// The register form (pre- and post-inverted by the caller).
fn portable(mut crc: u32, bytes: &[u8]) -> u32 {
    let t = tables();
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let lo = u32::from_le_bytes([w[0], w[1], w[2], w[3]]) ^ crc;
        let hi = u32::from_le_bytes([w[4], w[5], w[6], w[7]]);
        crc = t[7][(lo & 0xff) as usize]
            ^ t[6][((lo >> 8) & 0xff) as usize]
            ^ t[5][((lo >> 16) & 0xff) as usize]
            ^ t[4][(lo >> 24) as usize]
            ^ t[3][(hi & 0xff) as usize]
            ^ t[2][((hi >> 8) & 0xff) as usize]
            ^ t[1][((hi >> 16) & 0xff) as usize]
            ^ t[0][(hi >> 24) as usize];
    }
    for &b in words.remainder() {
        crc = (crc >> 8) ^ t[0][((crc ^ u32::from(b)) & 0xff) as usize];
    }
    crc
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe fn sse42(crc: u32, bytes: &[u8]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u64, _mm_crc32_u8};
    let mut c = u64::from(crc);
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        c = _mm_crc32_u64(c, u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]));
    }
    let mut c = c as u32;
    for &b in words.remainder() {
        c = _mm_crc32_u8(c, b);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_value_is_castagnolis() {
        assert_eq!(update(0, b"123456789"), 0xE306_9283);
        assert_eq!(!portable(!0, b"123456789"), 0xE306_9283);
    }

    #[test]
    fn the_hardware_and_the_table_agree_and_continue_across_pieces() {
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
        for cut in [0, 1, 7, 8, 9, 500, 999, 1000] {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(update(update(0, a), b), !portable(!0, &bytes), "cut at {cut}");
        }
    }
}
