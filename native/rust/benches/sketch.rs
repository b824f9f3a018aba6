//! What the sketch costs a Rust emitter beside the BLAKE3 hash it sits next
//! to in every record: both over the same f32 tensors (896 elements, a hidden
//! state; 1 MiB), batches of calls alternating so that both see the machine
//! in the same state, each keeping its fastest batch (at least 20 ms, at
//! least ten batches, more until the budget is spent). Prints one JSON object
//! per case, as `benchmarks/bench_sketch.cpp` does for the C++ header:
//!
//!     cargo bench --bench sketch --features orch_logging [-- --quick]

use std::hint::black_box;
use std::time::{Duration, Instant};

use orchlog::DType;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let budget = Duration::from_millis(if quick { 300 } else { 1500 });
    let path = if cfg!(target_arch = "x86_64") && avx2() { "avx2" } else { "portable" };
    for n in [896usize, 1 << 18] {
        let values: Vec<f32> = (0..n).map(|i| (i as f32 * 0.001).sin()).collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let (mut sketch, mut hash) = (Duration::MAX, Duration::MAX);
        let start = Instant::now();
        let mut batches = 0;
        while batches < 10 || start.elapsed() < budget {
            sketch = sketch.min(batch(|| {
                black_box(orchlog::__sketch(DType::F32, black_box(&bytes)));
            }));
            hash = hash.min(batch(|| {
                black_box(blake3::hash(black_box(&bytes)));
            }));
            batches += 1;
        }
        println!(
            "{{\"case\": \"sketch\", \"path\": \"{path}\", \"elements\": {n}, \"sketch_s\": {:.9e}, \"blake3_s\": {:.9e}}}",
            sketch.as_secs_f64(),
            hash.as_secs_f64()
        );
    }
}

fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2");
    #[allow(unreachable_code)]
    false
}

/// Mean time per call over a batch of at least 20 ms.
fn batch(mut call: impl FnMut()) -> Duration {
    let (start, mut calls) = (Instant::now(), 0u32);
    while calls == 0 || start.elapsed() < Duration::from_millis(20) {
        call();
        calls += 1;
    }
    start.elapsed() / calls
}
