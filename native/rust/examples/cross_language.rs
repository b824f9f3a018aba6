//! Logs every tensor of a cross-language tensor file (tests/crosslang/) with
//! `orch_log!` (`orch_graft!` for a tensor marked `"graft": true`), so that
//! its output can be compared byte for byte with the other emitters'. The env knobs (ORCH_LOG_FILE, ORCH_LOG_MODE, ...) decide
//! where and how; the file's `config` becomes the run header's `config`.
//!
//!     cargo run --example cross_language --features orch_logging -- tests/crosslang/tensors.json

use orchlog::{meta, orch_graft, orch_log, Config, Element, MetaEntry};
use serde_json::Value;

fn main() {
    let path = std::env::args().nth(1).expect("usage: cross_language TENSORS.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));

    let config = doc["config"].as_object().unwrap().iter().fold(Config::from_env(), |config, (key, value)| {
        let entry = meta_entry(key, value);
        config.with_run_config(entry.key, entry.value)
    });
    orchlog::install(config);

    for tensor in doc["tensors"].as_array().unwrap() {
        log_tensor(tensor);
    }
    std::process::exit(if orchlog::error_count() == 0 { 0 } else { 1 });
}

/// Meta as the vector files write it: floats tagged `{"f64": text}`.
fn meta_entry<'a>(key: &'a str, value: &'a Value) -> MetaEntry<'a> {
    match value {
        Value::Bool(b) => meta(key, *b),
        Value::Number(n) => meta(key, n.as_i64().unwrap()),
        Value::String(s) => meta(key, s.as_str()),
        Value::Object(tagged) => meta(key, parse_f64(tagged["f64"].as_str().unwrap())),
        other => panic!("meta {key}: {other}"),
    }
}

fn parse_f64(text: &str) -> f64 {
    match text {
        "NaN" => f64::NAN,
        "Infinity" => f64::INFINITY,
        "-Infinity" => f64::NEG_INFINITY,
        _ => text.parse().unwrap(),
    }
}

fn log_tensor(doc: &Value) {
    let hex = doc["data_hex"].as_str().unwrap();
    let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    match doc["dtype"].as_str().unwrap() {
        "f32" => log_as(doc, decode(&bytes, f32::from_le_bytes)),
        "f64" => log_as(doc, decode(&bytes, f64::from_le_bytes)),
        "f16" => log_as(doc, decode(&bytes, |b| half::f16::from_bits(u16::from_le_bytes(b)))),
        "bf16" => log_as(doc, decode(&bytes, |b| half::bf16::from_bits(u16::from_le_bytes(b)))),
        "i8" => log_as(doc, decode(&bytes, i8::from_le_bytes)),
        "u8" => log_as(doc, bytes.clone()),
        "i32" => log_as(doc, decode(&bytes, i32::from_le_bytes)),
        "i64" => log_as(doc, decode(&bytes, i64::from_le_bytes)),
        other => panic!("dtype {other}"),
    }
}

fn decode<T, const N: usize>(bytes: &[u8], from_le: fn([u8; N]) -> T) -> Vec<T> {
    bytes.chunks_exact(N).map(|c| from_le(c.try_into().unwrap())).collect()
}

/// One typed `orch_log!` (or `orch_graft!`) call with every key part the tensor file gives.
fn log_as<T: Element>(doc: &Value, mut values: Vec<T>) {
    let shape: Vec<usize> = doc["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    // [key, value] pairs in call order; a repeated key is passed twice.
    let meta: Vec<MetaEntry<'_>> =
        doc["meta"].as_array().unwrap().iter().map(|pair| meta_entry(pair[0].as_str().unwrap(), &pair[1])).collect();
    // The same key parts for both macros.
    macro_rules! with_every_key {
        ($macro:ident, $values:expr) => {
            $macro!(
                doc["checkpoint"].as_str().unwrap(),
                $values,
                doc["token_idx"].as_i64(),
                layer = doc["layer"].as_i64(),
                stage = doc["stage"].as_str(),
                step = doc["step"].as_i64(),
                rank = doc["rank"].as_i64(),
                token_id = doc["token_id"].as_i64(),
                shard_axis = doc["shard_axis"].as_i64(),
                shard_index = doc["shard_index"].as_i64(),
                num_shards = doc["num_shards"].as_i64(),
                shard_partial = doc["shard_partial"].as_bool(),
                shape = shape,
                meta = &meta
            )
        };
    }
    if doc["graft"] == true {
        with_every_key!(orch_graft, &mut values);
    } else {
        with_every_key!(orch_log, &values);
    }
}
