//! An engine that calls `orchlog::install`, `Logger`, `log` and `Tensor`
//! builds with orchlog's `orch_logging` feature off and on, with no `#[cfg]`
//! of its own; off, nothing is installed or written, on, both loggers write.

#[test]
fn the_same_start_up_code_logs_only_when_the_feature_is_on() {
    let dir =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("api_in_both_builds_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("probe.jsonl");
    let (installed, own_on, own_written, errors) = orchlog_feature_probe::start_up(&trace);
    let on = cfg!(feature = "orch_logging");
    assert_eq!((installed, own_on, own_written, errors), (on, on, 2 * u64::from(on), 0));
    let lines = |path: &std::path::Path| std::fs::read_to_string(path).map(|t| t.lines().count()).unwrap_or(0);
    // A header and three records (the guarded call and the graft run too), or no file at all.
    assert_eq!(lines(&trace), if on { 4 } else { 0 });
    assert_eq!(lines(&trace.with_extension("own.jsonl")), if on { 3 } else { 0 });
}
