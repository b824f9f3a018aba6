//! With orchlog's `orch_logging` feature off, `orch_log!` evaluates none of
//! its arguments and leaves nothing in the binary; with it on (and logging
//! switched on at run time) the same call evaluates each argument once.

use std::sync::Once;

/// Switches logging on at run time, so that only the build decides.
fn log_to_a_temporary_file() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("off_means_off.jsonl");
        std::env::set_var("ORCH_LOG_FILE", path);
    });
}

#[test]
fn arguments_are_evaluated_only_when_the_feature_is_on() {
    log_to_a_temporary_file();
    let mut evaluated = Vec::new();
    orchlog_feature_probe::forward(&[1.0, 2.0], 5, &mut |what| evaluated.push(what));
    if cfg!(feature = "orch_logging") {
        assert_eq!(evaluated, ["checkpoint", "values", "token", "layer", "meta"]);
        assert!(orchlog::enabled());
    } else {
        assert_eq!(evaluated, [] as [&str; 0]);
        assert!(!orchlog::enabled());
    }
}

#[test]
fn graft_arguments_are_evaluated_only_when_the_feature_is_on() {
    log_to_a_temporary_file();
    let mut evaluated = Vec::new();
    let mut hidden = [1.0f32, 2.0];
    // No ORCH_GRAFT_SELECT: even with the feature, the call only logs.
    let grafted = orchlog_feature_probe::graft_forward(&mut hidden, 5, &mut |what| evaluated.push(what));
    assert_eq!((grafted, hidden), (false, [1.0, 2.0]));
    if cfg!(feature = "orch_logging") {
        assert_eq!(evaluated, ["checkpoint", "values", "token", "layer", "meta"]);
    } else {
        assert_eq!(evaluated, [] as [&str; 0]);
    }
}

#[test]
fn device_arguments_are_evaluated_only_with_the_cuda_feature() {
    log_to_a_temporary_file();
    let mut evaluated = Vec::new();
    orchlog_feature_probe::device_forward(&[1.0, 2.0], 5, &mut |what| evaluated.push(what));
    if cfg!(feature = "cuda") {
        assert_eq!(evaluated, ["checkpoint", "data", "token"]);
    } else {
        assert_eq!(evaluated, [] as [&str; 0]);
    }
}

#[test]
fn the_calls_leave_no_trace_in_the_binary_without_the_feature() {
    let binary = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    // The checkpoint names the probe logs and grafts, spelt backwards here so
    // that this test's own code does not put them into the binary.
    for backwards in ["c1d5-tniopkcehc-eborp-zz", "a2e8-tniopkcehc-tfarg-eborp-zz"] {
        let needle: Vec<u8> = backwards.bytes().rev().collect();
        let present = binary.windows(needle.len()).any(|w| w == needle.as_slice());
        assert_eq!(present, cfg!(feature = "orch_logging"), "{backwards}: checkpoint literal present: {present}");
    }
}
