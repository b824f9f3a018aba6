//! Every form of `orch_log!` writes the record it says, through the
//! process-wide logger.
#![cfg(feature = "orch_logging")]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use orchlog::{meta, orch_log, Config};
use serde_json::Value;

/// One trace file for the whole test binary: the process-wide logger is
/// set once per process, and the tests share it (each with its own
/// checkpoint names).
fn trace() -> &'static PathBuf {
    static TRACE: OnceLock<PathBuf> = OnceLock::new();
    TRACE.get_or_init(|| {
        let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("orch_log_forms.jsonl");
        assert!(orchlog::install(Config { file: Some(path.clone()), team: "forms".into(), ..Config::default() }));
        path
    })
}

/// The records written so far for `checkpoint`.
fn records(checkpoint: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(trace()).unwrap();
    text.lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|r| r["checkpoint"] == checkpoint)
        .collect()
}

fn only(checkpoint: &str) -> Value {
    let found = records(checkpoint);
    assert_eq!(found.len(), 1, "{checkpoint}: {found:?}");
    found.into_iter().next().unwrap()
}

#[test]
fn the_short_form_takes_a_positional_token_index() {
    trace();
    let hidden = vec![0.5f32; 896];
    let token_idx = 3;
    orch_log!("short_form", &hidden, token_idx);
    let r = only("short_form");
    assert_eq!((r["token_idx"].as_i64(), r["layer"].is_null(), r["team"].as_str()), (Some(3), true, Some("forms")));
    assert_eq!(r["shape"], serde_json::json!([896]));
}

#[test]
fn the_shortest_form_leaves_every_key_null() {
    trace();
    orch_log!("no_keys", &[1.0f64, 2.0]);
    let r = only("no_keys");
    for key in ["token_idx", "layer", "stage", "step"] {
        assert!(r[key].is_null(), "{key}");
    }
}

#[test]
fn named_parts_come_in_any_order_after_the_token() {
    trace();
    let x = [1i32, 2, 3, 4, 5, 6];
    orch_log!("named_parts", &x, 7usize, stage = "rope", layer = 2, step = 1u32, shape = [2, 3], rank = 5);
    let r = only("named_parts");
    assert_eq!((r["token_idx"].as_i64(), r["layer"].as_i64(), r["step"].as_i64()), (Some(7), Some(2), Some(1)));
    assert_eq!((r["stage"].as_str(), r["rank"].as_i64()), (Some("rope"), Some(5)));
    assert_eq!((r["shape"].clone(), r["numel"].as_i64()), (serde_json::json!([2, 3]), Some(6)));
}

#[test]
fn meta_is_a_list_of_pairs_or_prepared_entries() {
    trace();
    let mode = String::from("prefill");
    orch_log!("meta_pairs", &[1u8], token = 0, meta = [("seed", 42), ("mode", &mode), ("greedy", true), ("temp", 0.5)]);
    let entries = vec![meta("b", 1), meta("a", 2)];
    orch_log!("meta_entries", &[1u8], meta = &entries);
    assert_eq!(only("meta_pairs")["meta"].to_string(), r#"{"greedy":true,"mode":"prefill","seed":42,"temp":0.5}"#);
    assert_eq!(only("meta_entries")["meta"].to_string(), r#"{"a":2,"b":1}"#);
}

#[test]
fn every_element_type_is_accepted_with_its_dtype() {
    trace();
    orch_log!("dtype_f32", &[1.5f32]);
    orch_log!("dtype_f64", &vec![1.5f64]);
    orch_log!("dtype_f16", &[half::f16::from_f32(1.5)]);
    orch_log!("dtype_bf16", &[half::bf16::from_f32(1.5)][..]);
    orch_log!("dtype_i8", &[-1i8]);
    orch_log!("dtype_u8", &[255u8]);
    orch_log!("dtype_i32", &[-7i32]);
    orch_log!("dtype_i64", &[i64::MIN]);
    for (dtype, value) in [
        ("f32", "1.5"),
        ("f64", "1.5"),
        ("f16", "1.5"),
        ("bf16", "1.5"),
        ("i8", "-1"),
        ("u8", "255"),
        ("i32", "-7"),
        ("i64", "-9223372036854775808"),
    ] {
        let r = only(&format!("dtype_{dtype}"));
        assert_eq!((r["dtype"].as_str(), r["values"][0].to_string()), (Some(dtype), value.to_owned()));
    }
}

#[test]
fn a_scalar_is_logged_as_a_0d_tensor() {
    trace();
    orch_log!("scalar", &2.5f32, 0);
    let r = only("scalar");
    assert_eq!((r["shape"].clone(), r["numel"].as_i64()), (serde_json::json!([]), Some(1)));
}

#[test]
fn checkpoint_names_may_be_built_at_run_time() {
    trace();
    for layer in 0..2 {
        orch_log!(format!("layer_{layer}_output"), &[layer as f32], layer = layer);
    }
    assert_eq!(only("layer_1_output")["layer"].as_i64(), Some(1));
}

#[test]
fn each_argument_is_evaluated_once_when_logging_is_on() {
    trace();
    static EVALUATIONS: AtomicUsize = AtomicUsize::new(0);
    fn counted<T>(v: T) -> T {
        EVALUATIONS.fetch_add(1, Ordering::Relaxed);
        v
    }
    orch_log!(
        counted("evaluated_once"),
        counted(&[1.0f32]),
        counted(1),
        layer = counted(2),
        meta = [("k", counted(3))]
    );
    assert_eq!(EVALUATIONS.load(Ordering::Relaxed), 5);
    assert_eq!(records("evaluated_once").len(), 1);
}

#[cfg(feature = "ndarray")]
#[test]
fn ndarray_arrays_keep_their_shape() {
    trace();
    let a = ndarray::Array2::<f32>::zeros((2, 4));
    orch_log!("ndarray_2d", &a, 0);
    orch_log!("ndarray_transposed", &a.t(), 0);
    assert_eq!(only("ndarray_2d")["shape"], serde_json::json!([2, 4]));
    assert_eq!(only("ndarray_transposed")["shape"], serde_json::json!([4, 2]));
}
