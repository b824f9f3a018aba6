//! The widest instruction set the crate's run-time-dispatched kernels (the sketch, the stats, the
//! side-by-side BLAKE3 chunks, CRC-32C) may use: the CPU's own, or less when `ORCHLOG_ISA` says so,
//! read once, as the C++ header's detail/isa.hpp reads it. It is for tests and for measuring on one
//! machine what a machine without AVX-512 (or without AVX2) runs; every path gives the same bits. The
//! `blake3` crate picks its own kernels.
//!
//! ```text
//! ORCHLOG_ISA=avx512    the default where the CPU has it (and the compiler: Rust 1.89 or later)
//! ORCHLOG_ISA=avx2      AVX2 at most (x86-64-v3)
//! ORCHLOG_ISA=sse4      SSE4.2 at most (x86-64-v2)
//! ORCHLOG_ISA=baseline  the build's own instruction set (x86-64: SSE2)
//! ```

use std::sync::OnceLock;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) enum Isa {
    Baseline,
    Sse4,
    Avx2,
    Avx512,
}

/// What `ORCHLOG_ISA`'s value allows, and a warning when it is not one of the four names.
fn parse_cap(value: Option<&str>) -> (Isa, Option<String>) {
    match value.unwrap_or("") {
        "" | "avx512" => (Isa::Avx512, None),
        "avx2" => (Isa::Avx2, None),
        "sse4" => (Isa::Sse4, None),
        "baseline" => (Isa::Baseline, None),
        other => (
            Isa::Avx512,
            Some(format!("ORCHLOG_ISA={other} is not avx512, avx2, sse4 or baseline; using the CPU's widest")),
        ),
    }
}

fn cap() -> Isa {
    static CAP: OnceLock<Isa> = OnceLock::new();
    *CAP.get_or_init(|| {
        let value = std::env::var_os("ORCHLOG_ISA");
        let (cap, warning) = parse_cap(value.as_ref().map(|v| v.to_str().unwrap_or("?")));
        if let Some(w) = warning {
            crate::warn::warn(&w);
        }
        cap
    })
}

/// Whether the kernels of `isa` may run: the CPU has it and the cap allows it.
pub(crate) fn allowed(isa: Isa) -> bool {
    isa <= cap() && has(isa)
}

#[cfg(target_arch = "x86_64")]
fn has(isa: Isa) -> bool {
    match isa {
        Isa::Baseline => true,
        Isa::Sse4 => std::arch::is_x86_feature_detected!("sse4.2"),
        Isa::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
        Isa::Avx512 => has_avx512(),
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn has(isa: Isa) -> bool {
    isa == Isa::Baseline
}

#[cfg(all(target_arch = "x86_64", orchlog_avx512))]
fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vl")
}

/// Compilers before Rust 1.89 have no AVX-512 intrinsics (build.rs).
#[cfg(all(target_arch = "x86_64", not(orchlog_avx512)))]
fn has_avx512() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::{parse_cap, Isa};

    #[test]
    fn the_four_names_cap_and_anything_else_warns_and_caps_nothing() {
        assert_eq!(parse_cap(None), (Isa::Avx512, None));
        assert_eq!(parse_cap(Some("")), (Isa::Avx512, None));
        assert_eq!(parse_cap(Some("avx2")).0, Isa::Avx2);
        assert_eq!(parse_cap(Some("sse4")).0, Isa::Sse4);
        assert_eq!(parse_cap(Some("baseline")).0, Isa::Baseline);
        let (cap, warning) = parse_cap(Some("AVX2"));
        assert_eq!(cap, Isa::Avx512);
        assert!(warning.is_some_and(|w| w.contains("ORCHLOG_ISA=AVX2")));
    }
}
