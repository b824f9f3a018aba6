//! What logging costs a Rust engine, each figure beside a baseline measured
//! in the same run:
//!
//! - a disabled call (feature on, ORCH_LOG_FILE unset) against an empty loop;
//! - records/s and GB/s of tensor data in summary mode (JSONL) and full mode
//!   (binary stream with the tensor) for 4 KiB, 1 MiB and 256 MiB f32 tensors,
//!   full mode against a plain write of the same bytes to the same disk;
//! - BLAKE3 alone, which (with the stats) bounds both modes for large tensors;
//! - one hidden-state row (896 f32, the record an engine logs most) in summary
//!   and in full mode, each against a plain write of the row's bytes.
//!
//!     cargo bench --bench emitter --features orch_logging [-- --quick] [--json]
//!
//! Files go to $ORCHLOG_BENCH_DIR (default: the system temp dir) and are
//! removed after each case. Prints a Markdown table, or with `--json` one
//! JSON object per case (what `benchmarks/emitters.py` reads to set these
//! figures beside the C++ logger's, measured the same way by
//! `benchmarks/bench_cpp.cpp`).

use std::fs::File;
use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use orchlog::{orch_log, Config, Keys, Logger, Mode, Tensor};

const SIZES: [(&str, usize); 3] = [("4 KiB", 4 << 10), ("1 MiB", 1 << 20), ("256 MiB", 256 << 20)];

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let json = std::env::args().any(|a| a == "--json");
    let budget = Duration::from_millis(if quick { 300 } else { 1500 });
    let dir = std::env::var_os("ORCHLOG_BENCH_DIR").map_or_else(std::env::temp_dir, PathBuf::from);
    let dir = dir.join(format!("orchlog-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("bench dir");

    let row = |case: &str, label: &str, bytes: usize, per_record: f64, baseline: Option<(&str, f64)>| {
        if json {
            json_row(case, bytes, per_record, baseline)
        } else {
            table_row(case, label, bytes, per_record, baseline)
        }
    };
    if !json {
        println!("| case | tensor | per record | records/s | GB/s | baseline | baseline GB/s | ratio |");
        println!("|---|---|---:|---:|---:|---|---:|---:|");
    }
    let (disabled, empty) = disabled_call();
    row("disabled", "896", 896 * 4, disabled, Some(("empty loop", empty)));
    for (label, bytes) in SIZES {
        let values: Vec<f32> = (0..bytes / 4).map(|i| (i as f32 * 0.001).sin()).collect();
        let tensor = Tensor::from_slice(&values);
        let data = tensor.bytes();
        let budget = if bytes >= 256 << 20 && quick { Duration::ZERO } else { budget };
        let summary = with_logger(&dir, Mode::Summary, |logger| {
            measure(budget, |i| logger.log("hidden", &values, Keys::new().token(i)))
        });
        row("summary", label, bytes, summary.as_secs_f64(), None);
        // Full mode and its baseline alternate, so that both see the same
        // disk: the page cache, write-back and other users of the machine.
        let plain_path = dir.join("plain");
        let mut plain = File::create(&plain_path).expect("plain file");
        let (full, plain_write) = with_logger(&dir, Mode::Full, |logger| {
            measure_pair(
                budget,
                |i| logger.log("hidden", &values, Keys::new().token(i)),
                |_| plain.write_all(data).expect("plain write"),
            )
        });
        drop(plain);
        let _ = std::fs::remove_file(&plain_path);
        row("full", label, bytes, full.as_secs_f64(), Some(("plain write", plain_write.as_secs_f64())));
        let hash = measure(budget, |_| {
            black_box(blake3::hash(black_box(data)));
        });
        row("blake3", label, bytes, hash.as_secs_f64(), None);
    }
    hidden_row(&dir, budget, &row);
    let _ = std::fs::remove_dir_all(&dir);
}

/// One hidden-state row of a 0.5B model in each mode, batch by batch in turn with a plain write of its
/// bytes to the same directory (benchmarks/bench_cpp.cpp's `row` cases).
fn hidden_row(dir: &Path, budget: Duration, row: &impl Fn(&str, &str, usize, f64, Option<(&str, f64)>)) {
    let values: Vec<f32> = (0..896).map(|i| (i as f32 * 0.001).sin()).collect();
    let data = Tensor::from_slice(&values).bytes().to_vec();
    for (case, mode) in [("row summary", Mode::Summary), ("row full", Mode::Full)] {
        let plain_path = dir.join("plain");
        let mut plain = File::create(&plain_path).expect("plain file");
        let (logged, plain_write) = with_logger(dir, mode, |logger| {
            measure_pair(
                budget,
                |i| logger.log("hidden", &values, Keys::new().token(i)),
                |_| plain.write_all(&data).expect("plain write"),
            )
        });
        drop(plain);
        let _ = std::fs::remove_file(&plain_path);
        row(case, "896", data.len(), logged.as_secs_f64(), Some(("plain write", plain_write.as_secs_f64())));
    }
}

/// Seconds per `orch_log!` while logging is off at run time, and per
/// iteration of a loop that does the same work minus the call.
fn disabled_call() -> (f64, f64) {
    std::env::remove_var("ORCH_LOG_FILE");
    assert!(!orchlog::enabled());
    let values = vec![0.5f32; 896];
    const CALLS: u64 = 200_000_000;
    let empty = time_loop(CALLS, |i| {
        black_box(i);
    });
    let disabled = time_loop(CALLS, |i| {
        orch_log!("disabled", black_box(&values), black_box(i), layer = 3);
    });
    (disabled.as_secs_f64() / CALLS as f64, empty.as_secs_f64() / CALLS as f64)
}

/// The fastest of three timed runs of `calls` iterations.
fn time_loop(calls: u64, mut body: impl FnMut(u64)) -> Duration {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            (0..calls).for_each(&mut body);
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// Best mean time per call over batches of calls (each batch at least
/// 20 ms or one call; at least three batches, more until `budget` is spent).
/// On a shared machine the fastest batch is the least disturbed one.
fn measure(budget: Duration, mut call: impl FnMut(u64)) -> Duration {
    measure_pair(budget, &mut call, |_| {}).0
}

/// `measure` for two calls, their batches alternating.
fn measure_pair(budget: Duration, mut a: impl FnMut(u64), mut b: impl FnMut(u64)) -> (Duration, Duration) {
    a(0);
    b(0);
    let (start, mut best, mut batches) = (Instant::now(), (Duration::MAX, Duration::MAX), 0);
    while batches < 3 || start.elapsed() < budget {
        best.0 = best.0.min(batch(&mut a));
        best.1 = best.1.min(batch(&mut b));
        batches += 1;
    }
    best
}

fn batch(call: &mut impl FnMut(u64)) -> Duration {
    let (start, mut calls) = (Instant::now(), 0);
    while calls == 0 || start.elapsed() < Duration::from_millis(20) {
        call(calls);
        calls += 1;
    }
    start.elapsed() / calls as u32
}

/// Runs `bench` with a logger writing `mode` to a file in `dir`, removed after.
fn with_logger<T>(dir: &Path, mode: Mode, bench: impl FnOnce(&Logger) -> T) -> T {
    let path = dir.join("trace");
    let logger = Logger::new(Config { file: Some(path.clone()), mode, ..Config::default() });
    assert!(logger.is_on(), "cannot write {}", path.display());
    let result = bench(&logger);
    assert_eq!(logger.error_count(), 0);
    drop(logger);
    let _ = std::fs::remove_file(&path);
    result
}

/// One case as a JSON object on a line of its own (seconds per call).
fn json_row(case: &str, bytes: usize, per_record: f64, baseline: Option<(&str, f64)>) {
    let base =
        baseline.map_or(String::new(), |(name, s)| format!(",\"baseline\":\"{name}\",\"baseline_seconds\":{s:e}"));
    println!("{{\"case\":\"{case}\",\"bytes\":{bytes},\"seconds\":{per_record:e}{base}}}");
}

fn table_row(case: &str, label: &str, bytes: usize, per_record: f64, baseline: Option<(&str, f64)>) {
    if case == "disabled" {
        let empty = baseline.map_or(f64::NAN, |(_, s)| s);
        println!(
            "| disabled call | 896 f32 | {:.2} ns | {:.0} M/s | | empty loop: {:.2} ns | | {:.2}x |",
            per_record * 1e9,
            1e-6 / per_record,
            empty * 1e9,
            per_record / empty
        );
        return;
    }
    let gbs = |s: f64| bytes as f64 / s / 1e9;
    let (base_name, base_gbs, ratio) = match baseline {
        Some((name, s)) => (name.to_owned(), format!("{:.2}", gbs(s)), format!("{:.2}x", gbs(per_record) / gbs(s))),
        None => (String::new(), String::new(), String::new()),
    };
    let case = match case {
        "blake3" => "blake3 alone".to_owned(),
        mode => format!("{mode} mode"),
    };
    println!(
        "| {case} | {label} f32 | {} | {} | {:.2} | {base_name} | {base_gbs} | {ratio} |",
        pretty(per_record),
        rate(1.0 / per_record),
        gbs(per_record)
    );
}

fn rate(per_second: f64) -> String {
    if per_second < 100.0 {
        format!("{per_second:.1}")
    } else {
        format!("{per_second:.0}")
    }
}

fn pretty(seconds: f64) -> String {
    match seconds {
        s if s >= 1e-3 => format!("{:.1} ms", s * 1e3),
        s => format!("{:.1} µs", s * 1e6),
    }
}
