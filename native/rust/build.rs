//! Sets `cfg(orchlog_avx512)` when the compiler has the AVX-512 intrinsics (stable since Rust 1.89):
//! the crate's rust-version is older, and there its kernels stop at AVX2.

use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(orchlog_avx512)");
    println!("cargo::rerun-if-env-changed=RUSTC");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let version = Command::new(rustc).arg("--version").output().ok().and_then(|o| String::from_utf8(o.stdout).ok());
    // "rustc 1.95.0 (59807616e 2026-04-14)": the minor version.
    let minor = version
        .as_deref()
        .and_then(|v| v.split_whitespace().nth(1))
        .and_then(|v| v.split('.').nth(1))
        .and_then(|m| m.parse::<u32>().ok());
    if minor.is_some_and(|m| m >= 89) {
        println!("cargo::rustc-cfg=orchlog_avx512");
    }
}
