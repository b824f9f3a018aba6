//! With the feature `cuda` but no liborchlog_c to load, a device tensor is
//! skipped: one warning, each call counted, and the engine runs on.
#![cfg(feature = "cuda")]

use std::path::PathBuf;

use orchlog::{orch_log_cuda, Config, DType};

#[test]
fn a_missing_liborchlog_c_skips_every_device_tensor_and_counts_each() {
    std::env::set_var("ORCHLOG_C_LIBRARY", "/nonexistent/liborchlog_c.so");
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cuda_without_library.jsonl");
    assert!(orchlog::install(Config { file: Some(path.clone()), ..Config::default() }));
    let x = [1.0f32, 2.0, 3.0, 4.0];
    for token in 0..3usize {
        // SAFETY: x is host memory holding the 4 f32 values the call describes.
        unsafe { orch_log_cuda!("device", x.as_ptr().cast(), DType::F32, [4], std::ptr::null_mut(), token) };
    }
    assert!(!orchlog::cuda::available());
    assert_eq!(orchlog::error_count(), 3);
    let text = std::fs::read_to_string(path).unwrap();
    assert_eq!(text.lines().count(), 1, "only the header: {text}");
}
