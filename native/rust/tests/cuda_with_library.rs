//! With the feature `cuda` and liborchlog_c built against the CUDA runtime
//! (ORCHLOG_C_LIBRARY names it; tests/native/test_rust_cuda.py builds it and
//! runs this test, which is ignored otherwise), a host tensor given to
//! `orch_log_cuda!` is read as host memory and written as `orch_log!` writes
//! it, by this crate's logger.
#![cfg(feature = "cuda")]

use std::path::PathBuf;

use orchlog::{orch_log, orch_log_cuda, Config, DType};
use serde_json::Value;

#[test]
#[ignore = "needs liborchlog_c built with -DORCHLOG_C_CUDA=ON in ORCHLOG_C_LIBRARY (tests/native/test_rust_cuda.py)"]
fn a_host_tensor_given_to_orch_log_cuda_is_written_as_orch_log_writes_it() {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cuda_with_library.jsonl");
    assert!(orchlog::install(Config { file: Some(path.clone()), ..Config::default() }));
    assert!(orchlog::cuda::available(), "ORCHLOG_C_LIBRARY must name a liborchlog_c built with CUDA");
    let x = [1.0f32, -2.5, 3.0, 4.25];
    // SAFETY: x is host memory holding the 4 f32 values the call describes.
    unsafe { orch_log_cuda!("hidden", x.as_ptr().cast(), DType::F32, [2, 2], std::ptr::null_mut(), 7usize, layer = 2) };
    orch_log!("hidden", &x, 7usize, layer = 2, shape = [2, 2]);
    assert_eq!(orchlog::error_count(), 0);
    let text = std::fs::read_to_string(path).unwrap();
    let mut records: Vec<Value> = text.lines().skip(1).map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.len(), 2, "{text}");
    for r in &mut records {
        r.as_object_mut().unwrap().remove("seq");
    }
    assert_eq!(records[0], records[1]);
}
