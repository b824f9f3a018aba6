//! Every form of `orch_graft!` grafts the tensor its key names and writes
//! the record it says, through the process-wide logger.
#![cfg(feature = "orch_logging")]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use orchlog::{meta, orch_graft, Config, DType, Keys, Logger, Mode, TensorMut};
use serde_json::Value;

/// The reference run (full mode) and the grafting run's trace, shared by the
/// tests of this binary: the process-wide logger is set once per process.
fn trace() -> &'static PathBuf {
    static TRACE: OnceLock<PathBuf> = OnceLock::new();
    TRACE.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let reference = dir.join("orch_graft_forms_ref.bin");
        let writer = Logger::new(Config { file: Some(reference.clone()), mode: Mode::Full, ..Config::default() });
        writer.log("no_keys", &[1.0f32, 2.0], Keys::new());
        writer.log("positional", &[3.0f32], Keys::new().token(4usize));
        writer.log("named", &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], Keys::new().token(7usize).layer(2).stage("rope").step(1).shape(&[2, 3]));
        writer.log("with_meta", &[9i32], Keys::new().layer(0));
        writer.log("raw_f16", &[0.5f32, -0.25], Keys::new());
        writer.log("counted", &[8.0f32], Keys::new().token(1usize).layer(2));
        writer.log("unselected", &[5.0f32], Keys::new());
        assert_eq!(writer.error_count(), 0);
        drop(writer);
        let path = dir.join("orch_graft_forms.jsonl");
        let config = Config {
            file: Some(path.clone()),
            graft_from: Some(reference.display().to_string()),
            graft_select: Some("checkpoint=no_keys,checkpoint=positional,checkpoint=named,checkpoint=with_meta,checkpoint=raw_f16,checkpoint=counted".into()),
            ..Config::default()
        };
        assert!(orchlog::install(config));
        path
    })
}

fn only(checkpoint: &str) -> Value {
    let text = std::fs::read_to_string(trace()).unwrap();
    let found: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["checkpoint"] == checkpoint)
        .collect();
    assert_eq!(found.len(), 1, "{checkpoint}: {found:?}");
    found.into_iter().next().unwrap()
}

#[test]
fn the_shortest_form_grafts_a_tensor_without_key_parts() {
    trace();
    let mut x = vec![0.0f32; 2];
    assert!(orch_graft!("no_keys", &mut x));
    assert_eq!(x, [1.0, 2.0]);
    assert_eq!(only("no_keys")["grafted"], true);
}

#[test]
fn a_positional_token_index_and_named_parts_make_the_key() {
    trace();
    let mut one = [0.0f32];
    let mut x = [0.0f32; 6];
    assert!(orch_graft!("positional", &mut one, 4usize));
    assert!(orch_graft!("named", &mut x, 7usize, stage = "rope", layer = 2, step = 1u32, shape = [2, 3]));
    assert_eq!((one, x), ([3.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    let r = only("named");
    assert_eq!((r["shape"].clone(), r["grafted"].clone()), (serde_json::json!([2, 3]), Value::Bool(true)));
}

#[test]
fn meta_and_raw_bytes_are_taken_as_orch_log_takes_them() {
    trace();
    let mut ids = [0i32];
    assert!(orch_graft!("with_meta", &mut ids, layer = 0, meta = [("seed", 42)]));
    let entries = vec![meta("b", 1)];
    let mut bits = [0u8; 4];
    let mut raw = TensorMut::from_bytes(DType::F16, &[2], &mut bits).unwrap();
    assert!(orch_graft!("raw_f16", raw, meta = &entries));
    assert_eq!((ids, bits), ([9], [0x00, 0x38, 0x00, 0xb4]));
    assert_eq!(only("with_meta")["meta"].to_string(), r#"{"seed":42}"#);
    assert_eq!(only("raw_f16")["dtype"], "f16");
}

#[test]
fn an_unselected_call_logs_and_changes_nothing() {
    trace();
    let mut x = [0.0f32];
    assert!(!orch_graft!("unselected", &mut x));
    assert_eq!((x, only("unselected")["grafted"].clone()), ([0.0], Value::Bool(false)));
}

#[test]
fn each_argument_is_evaluated_once_when_logging_is_on() {
    trace();
    static EVALUATIONS: AtomicUsize = AtomicUsize::new(0);
    fn counted<T>(v: T) -> T {
        EVALUATIONS.fetch_add(1, Ordering::Relaxed);
        v
    }
    let mut x = [0.0f32];
    assert!(orch_graft!(counted("counted"), counted(&mut x), counted(1), layer = counted(2)));
    assert_eq!((EVALUATIONS.load(Ordering::Relaxed), x), (4, [8.0]));
}
